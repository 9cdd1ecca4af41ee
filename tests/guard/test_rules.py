"""The guard's rules (guard/rules), each on replies it must refuse and on faithful edits it
must let through, and the edits they read (guard/edits)."""

from __future__ import annotations

import re

import pytest

from owlai_refine.config import GuardConfig
from owlai_refine.guard import RULES, Reason, check_reply
from owlai_refine.guard.edits import EditClass
from owlai_refine.guard.pair import Pair
from owlai_refine.guard.rules.roles import role_reasons
from owlai_refine.pipeline.parse import parse

CONFIG = GuardConfig()


def _verdict(block: str, reply: str) -> tuple[str | None, list[Reason]]:
    (b,) = parse(block).blocks
    verdict = check_reply(b, reply, CONFIG)
    return verdict.text, list(verdict.reasons)


def _groups(block: str, reply: str) -> set[str]:
    return {r.group for r in _verdict(block, reply)[1]}


def test_the_three_real_replies_of_the_issue_are_refused() -> None:
    # the embedded model's own replies, spliced in as refined before the analysers
    assert "changed word" in _groups(
        "Configuration checking is useful, but in practice this is complexity users must manage.",
        "Configuration checking is useful, but in practice this is simplicity users must manage.",
    )
    assert _groups(
        "The results was good and the team were happy [1].",
        "The team was happy with the results [1].",
    ) == {"lost claim"}
    korean = (
        "심의회는 또한 프로젝트 전반에 걸친 변화를 팀, 구조 또는 과정과 조율을 돕고 고위 팀으로"
        " 하여금 책임을 지게 하며 Rust Project의 공식 입장을 확립합니다."
    )
    dropped = (
        "심의회는 또한 프로젝트 전반에 걸친 변화를 팀, 과정과 조율을 돕고 고위 팀으로 하여금"
        " 책임을 지게 하며 Rust Project의 공식 입장을 확립합니다."
    )
    assert "lost list element" in _groups(korean, dropped)


@pytest.mark.parametrize(
    ("block", "reply", "group"),
    [
        (  # degree dropped
            "The trial significantly decreased renal events in patients.",
            "The trial decreased renal events in patients.",
            "changed degree",
        ),
        (  # degree added, Chinese
            "MHGPO变体比MAPPO更稳定。",
            "MHGPO变体明显比MAPPO更稳定。",
            "changed degree",
        ),
        (  # a plan made a fact, Chinese
            "引入三种采样策略\uff0c平衡效率与效果。",
            "计划引入三种采样策略\uff0c以平衡效率与效果。",
            "changed tense",
        ),
        (  # a comparison made an equality
            "Combining both markers showed superior accuracy in early detection.",
            "Combining both markers showed comparable accuracy in early detection.",
            "changed comparison",
        ),
        (  # two words traded places across "than"
            "It ensures that smaller validators take on less risk than larger validators.",
            "It ensures that larger validators take on less risk than smaller validators.",
            "swapped words",
        ),
        (  # ... across "to"
            "The node change from TSMC N4 to N4P only provides a small gain.",
            "The node change from TSMC N4P to N4 only provides a small gain.",
            "swapped words",
        ),
        (  # one item of a list dropped
            "Tuning requires attention to hosting, themes, caching, images, plugins, and code.",
            "Tuning requires attention to hosting, themes, caching, plugins, and code.",
            "lost list element",
        ),
        (  # two link texts swapped, the destinations kept
            (
                "See ([Docs, 2025](https://docs.example.com/a); [Blog, "
                "2025](https://blog.example.org/b))."
            ),
            (
                "See ([Blog, 2025](https://docs.example.com/a); [Docs, "
                "2025](https://blog.example.org/b))."
            ),
            "swapped link texts",
        ),
        (  # two people's labels swapped with every name kept
            "이 RFC는 @joshtriplett(언어팀 리드), @khionu(중재) 및 @yaahc가 작성했습니다.",
            "이 RFC는 @joshtriplett(중재), @khionu(언어팀 리드) 및 @yaahc가 작성했습니다.",
            "swapped labels",
        ),
        (  # two modifiers of one head traded, across "etc." inside brackets (no sentence end)
            "The goal is to allow the more dangerous withdrawal key to be kept more securely"
            " (offline, not shared with any staking pools, etc) while the signing key is used"
            " to sign a message every epoch.",
            "The goal is to allow the more dangerous signing key to be kept more securely"
            " (offline, not shared with any staking pools, etc.) while the withdrawal key is"
            " used to sign a message every epoch.",
            "swapped words",
        ),
        (  # Korean: giver and receiver traded, each taking the other's particle (은/는, 에/에게)
            "이 심의회는 팀에게 여러 권한을 위임합니다.",
            "팀은 이 심의회에 여러 권한을 위임합니다.",
            "swapped words",
        ),
        (  # English possessives: China's ... Singapore -> Singapore's ... China
            "For example, China\u2019s network enforces strict oversight, while Singapore"
            " offers a sandbox for pilots.",
            "For example, Singapore's network enforces strict oversight, while China offers a"
            " sandbox for pilots.",
            "swapped words",
        ),
        (  # Chinese: a comparison's two sides traded (a relation before the conjunction)
            "MHGPO在性能和计算效率上优于PPO\uff0c且无需warm-up\u3002",
            "PPO在性能和计算效率上优于MHGPO\uff0c且无需warm-up\u3002",
            "swapped words",
        ),
        (  # Chinese: a list's last item dropped, in a clause after a comma
            "ANN提出将MAS视为分层智能体团队\uff0c通过文本梯度共同优化角色\u3001Prompt和工具\u3002",
            "ANN提出将MAS视为分层智能体团队\uff0c通过文本梯度共同优化角色和Prompt\u3002",
            "lost list element",
        ),
        (  # a claim added to a rewording: synonyms do not cover new matter
            "Classical search methods require checking each item to find a target; the quantum"
            " method reduces this cost and offers a quadratic speedup.",
            "Classical search methods need to examine every item to locate a target; the quantum"
            " method cuts this cost, provides a quadratic speedup and also guarantees perfect"
            " accuracy for every query in practice.",
            "added clause",
        ),
        (  # Korean: a claim made total (완전히 added) is still a change of degree
            "이 변경은 문제를 해결합니다.",
            "이 변경은 문제를 완전히 해결합니다.",
            "changed degree",
        ),
        (  # an item added to a list, in words the block does not have
            "**Key Takeaway:** Hosting is the single most important investment for WooCommerce"
            " speed and uptime.",
            "**Key Takeaway:** Hosting is the single most important investment for WooCommerce"
            " speed, security, and uptime.",
            "added list element",
        ),
        (  # a count lost, Korean
            "각 팀은 심의회 위원 한 명을 선출합니다.",
            "각 팀은 심의회 위원을 선출합니다.",
            "changed count",
        ),
        (  # the noun that says which of a kind replaced (inference -> training)
            "The team focused on inference optimization for the new chips.",
            "The team focused on training optimization for the new chips.",
            "changed word",
        ),
        (  # the replaced noun said elsewhere in the reply as well: one of its two is gone
            "AI inference is growing, and the team focused on inference optimization.",
            "AI inference is growing, and the team focused on training optimization.",
            "changed word",
        ),
        (  # Chinese: a list item dropped before 等 ("and so on"), whose 计算 jieba tags a verb
            "该方法可应用于物流、交通、边缘计算和量子计算等领域。",
            "该方法可应用于物流、交通和量子计算等领域。",
            "lost list element",
        ),
        (  # Korean: a team named in Hangul replaced by another
            "운영팀은 매주 회의를 엽니다.",
            "개발팀은 매주 회의를 엽니다.",
            "changed word",
        ),
        (  # Chinese: heterogeneous -> homogeneous, before the same noun
            "该方法支持异构设备集群。",
            "该方法支持同构设备集群。",
            "changed word",
        ),
        (  # Chinese: 同时 as "at the same time", dropped
            "两个进程同时运行。",
            "两个进程都在运行。",
            "changed polarity qualifier",
        ),
        (  # how often, added
            "Outages occur when the cache is cold.",
            "Outages frequently occur when the cache is cold.",
            "changed degree",
        ),
        (  # Japanese: a degree added (はるかに, "far")
            "新しい版は旧版より速い。",
            "新しい版は旧版よりはるかに速い。",
            "changed degree",
        ),
        (  # whose claim it is: a perception stated as fact
            "The model is widely regarded as the strongest open baseline.",
            "The model is the strongest open baseline.",
            "changed attribution",
        ),
        (  # Japanese: a claim given to a source the block does not name
            "この制限は一時的なものです。",
            "開発元によれば、この制限は一時的なものです。",
            "changed attribution",
        ),
        (  # an action begun, now finished
            "The team has started the migration to the new cluster.",
            "The team has completed the migration to the new cluster.",
            "changed aspect",
        ),
        (  # a contrast dropped ("A rather than B" -> "both A and B")
            "Growth came from new customers rather than price increases.",
            "Growth came from both new customers and price increases.",
            "changed negation",
        ),
        (  # Chinese: two comparisons folded into one (the second 更 lost)
            "新方案带来了更低的成本、更高的精度和更快的推理速度。",
            "新方案带来了更低的成本和精度\uff0c以及更快的推理速度。",
            "changed comparison",
        ),
        (  # Chinese: a list item dropped whose 率 jieba tags a verb
            "该模型在准确率、精确率、召回率和F1分数上均超过基线。",
            "该模型在准确率、精确率和F1分数上均超过基线。",
            "lost list element",
        ),
        (  # Chinese: two names traded the items they own, the items kept in place
            "已有多种机制 (如MHGPO的群组采样、ANN的分层团队、MasHost的图构建)。",
            "已有多种机制 (如ANN的群组采样、MHGPO的分层团队、MasHost的图构建)。",
            "swapped words",
        ),
        (  # Chinese: two items traded their owners, the owners kept in place
            "探索交互机制 (如MHGPO的群组采样、ANN的分层团队、MasHost的图构建)。",
            "探索交互机制 (如MHGPO的群组采样、ANN的图构建、MasHost的分层团队)。",
            "swapped words",
        ),
        (  # "much more" -> "more" (the tagger calls this "much" an adjective)
            "Entangled qubits let such operations be performed much more efficiently.",
            "Entangled qubits allow such operations to be performed more efficiently.",
            "changed degree",
        ),
        (  # a rumour stated as fact
            "AMD is rumored to be withdrawing from the high-end market.",
            "AMD is withdrawing from the high-end market.",
            "changed attribution",
        ),
        (  # Korean: "alone" added (단독으로)
            "심의회는 프로젝트의 공식 입장을 확립합니다.",
            "심의회는 프로젝트의 공식 입장을 단독으로 확립합니다.",
            "changed degree",
        ),
        (  # Korean: "continuously" dropped (지속적으로)
            "심의회는 커뮤니티가 기대하는 바를 지속적으로 충족해야 합니다.",
            "심의회는 커뮤니티가 기대하는 바를 충족해야 합니다.",
            "changed degree",
        ),
        (  # Chinese: a fact made a gradual process (逐步)
            "随着量子计算的发展\uff0c量子智能体成为新兴研究领域。",
            "随着量子计算的发展\uff0c量子智能体逐步成为新兴研究领域。",
            "changed tense",
        ),
        (  # Chinese: a shown ability made preliminary (初步)
            "该方法展示了跨任务记忆迁移能力。",
            "该方法初步展示了跨任务记忆迁移能力。",
            "changed degree",
        ),
        (  # a range's end changed, its unit written on both ends
            "A 1-second delay can reduce conversions by 7\u201320%.",
            "A 1-second delay can reduce conversions by 7%\u201325%.",
            "changed number",
        ),
        (  # a full-width colon before the closing ** and no space after: CommonMark does not
            # close the bold there (markdown-it renders the asterisks), so the bold is lost
            "**核心思想:** 利用群组相对奖励进行优势估计。",
            "**核心思想\uff1a**利用群组相对奖励进行优势估计。",
            "lost bold",
        ),
        (  # Korean: an opposite flipped, read on the morphemes (크게 -> 작게)
            "이 변경은 링크 성능에 크게 기여합니다.",
            "이 변경은 링크 성능에 작게 기여합니다.",
            "changed polarity direction",
        ),
        (  # Korean: "not A but B" -> "not B but A", both marked with 이/가
            "향후 번역에 대한 결정은 이 그룹이 아니라 심의회가 내릴 것입니다.",
            "향후 번역에 관한 결정은 심의회가 아니라 이 그룹이 내릴 것입니다.",
            "moved negation",
        ),
        (  # Korean: a duty moved to another body the block names (중재팀 -> 심의회)
            "중재팀은 공개 내역을 유지해야 합니다. 심의회는 감사를 요청할 수 있습니다.",
            "심의회는 공개 내역을 유지해야 합니다. 심의회는 감사를 요청할 수 있습니다.",
            "changed word",
        ),
        (  # Japanese: the base model now the other component the block names
            "LLMと視覚エンコーダを組み合わせたVLMです (ベースのLLMは問いません)。",
            "LLMと視覚エンコーダを組み合わせたVLMです (ベースの視覚エンコーダは問いません)。",
            "changed word",
        ),
        (  # an antonym the tagger calls an adjective on one side, a preposition on the other
            "Unlike many proprietary solutions, DeerFlow supports local deployment.",
            "Like many proprietary solutions, DeerFlow supports local deployment.",
            "changed word",
        ),
        (  # Chinese: an attribute dropped with its 的 (the data set, no longer "with disruptions")
            "该方法在包含中断的SAP LE数据集上测试\uff0c并显著减少处理时间。",
            "该方法在SAP LE数据集上进行测试\uff0c并显著减少了处理时间。",
            "lost qualifier",
        ),
        (  # the same, a measure word in its place
            "MasHost将MAS构建建模为从零开始的图构建过程。",
            "MasHost将MAS构建建模为一个图构建过程。",
            "lost qualifier",
        ),
        (  # Japanese: a negation narrowed by a completeness word (not fully guaranteed)
            "本記事の内容は、完全性や正確性を保証するものではありません。",
            "本記事の内容は、完全性や正確性を全面的に保証するものではありません。",
            "changed degree",
        ),
        (  # Korean: a count added (한 개, "one") where the block names the files uncounted
            "이 RFC에는 보충 텍스트 파일을 포함되어 있습니다.",
            "이 RFC에는 보충 텍스트 파일 한 개가 포함되어 있습니다.",
            "changed number word",
        ),
        (  # Korean: one of two noun phrases joined by 과 dropped
            "심의회는 고위 팀과 그 하위 팀을 각각 대표하는 여러 팀 대표로 구성되어 있습니다.",
            "심의회는 각 고위 팀을 대표하는 여러 팀 대표로 구성됩니다.",
            "lost list element",
        ),
        (  # Japanese: the two stages of a sequence swapped across 後
            "※継続事前学習後に事後学習\uff08SFT, DPO, RLなど\uff09を行ったモデルも含みます",
            "※事後学習\uff08SFT, DPO, RLなど\uff09の後に継続事前学習を行ったモデルも含みます",
            "swapped words",
        ),
        (  # Chinese and English: what comes first traded across 之后 / after
            "在预训练之后进行微调。",
            "在微调之后进行预训练。",
            "swapped words",
        ),
        (
            "The council reviews the budget after the audit closes.",
            "The council reviews the audit after the budget closes.",
            "swapped words",
        ),
        (  # Korean: "beforehand" dropped (the feedback no longer comes first)
            "다른 모든 결정은 공개적으로 다루고 사전에 피드백을 허용해야 합니다.",
            "다른 모든 결정은 공개적으로 다루고 피드백을 허용해야 합니다.",
            "changed date",
        ),
        (  # "already" added: a possibility made a thing done
            "It seems uncontroversial; this could be implemented and stabilized quickly.",
            "It seems uncontroversial; this has already been implemented and could be stabilized"
            " quickly.",
            "changed tense",
        ),
        (  # the negating prefix non- dropped (non-Markovian -> Markovian)
            "Quantum noise is non-Markovian, which impacts error correction.",
            "Quantum noise is Markovian, which affects error correction.",
            "changed polarity negation",
        ),
        (  # Chinese: two parallel clauses' subjects traded their predicates
            "图8\uff1a左侧展示自主构建过程、右侧详细说明RL策略。",
            "图8\uff1a左侧详细说明RL策略、右侧展示自主构建过程。",
            "swapped words",
        ),
        (  # a name moved out of a comparison's standard into what is compared
            "AES-256 is more secure against quantum attacks than AES-128 or AES-192.",
            "AES-256 and AES-192 are more secure against quantum attacks than AES-128.",
            "changed comparison",
        ),
        (  # the two sides of a comparison traded (a noun and a gerund: no word swap)
            "It defends the idea that suffering injustice is better than committing it.",
            "It defends the idea that committing injustice is better than suffering it.",
            "changed comparison",
        ),
        (  # Chinese: the standard after 比 traded with the compared
            "在延迟方面\uff0cMHGPO比MAPPO的收敛更快。",
            "在延迟方面\uff0cMAPPO比MHGPO的收敛更快。",
            "changed comparison",
        ),
        (  # Japanese: the standard before より traded with the compared
            "継続事前学習は事後学習より多くの計算を必要とします。",
            "事後学習は継続事前学習より多くの計算を必要とします。",
            "changed comparison",
        ),
        (  # Korean: the standard before 보다 traded with the compared
            "중재팀은 심의회보다 더 많은 권한을 가집니다.",
            "심의회는 중재팀보다 더 많은 권한을 가집니다.",
            "changed comparison",
        ),
        (  # a ceiling made a floor
            "The new runtime serves up to 250 requests per second on one node.",
            "On one node, the new runtime serves more than 250 requests per second.",
            "changed bound",
        ),
        (  # Korean: exactly one made one or more
            "각 팀은 위원을 한 명 추천합니다.",
            "각 팀은 한 명 이상의 위원을 추천합니다.",
            "changed bound",
        ),
        (  # Korean: a quoted name said otherwise
            "'운영 위원회'의 모든 위원께 감사드립니다.",
            "'운영 협의회'의 모든 위원께 감사드립니다.",
            "changed quotation",
        ),
        (  # Chinese: one of two attributes joined by 、 dropped
            "该方法针对稀疏、高维动作空间设计了新的训练目标。",
            "该方法针对稀疏动作空间设计了新的训练目标。",
            "lost list element",
        ),
        (  # Japanese: "may be changed" made "has been changed"
            "この一覧は予告なく更新されることがあります。",
            "この一覧は予告なく更新されたことがあります。",
            "changed tense",
        ),
        (  # Japanese: built made being built
            "既存のモデルを組み合わせて構築されたシステムが対象です。",
            "既存のモデルを組み合わせて構築中のシステムが対象です。",
            "changed tense",
        ),
        (  # a hedge dropped while another hedge's next word changed (no fold)
            "The site was likely chosen by the founder, perhaps due to its harbour.",
            "The site was chosen by the founder, perhaps because of its harbour.",
            "changed polarity hedge",
        ),
        (  # a hedge deleted with the word after it: no fold either
            "It may theoretically be possible to run the model offline, where the cache is warm.",
            "It is possible to run the model offline, where the cache is warm.",
            "changed polarity hedge",
        ),
        (  # ongoing made done
            "New consensus rules are being tested on the devnet.",
            "New consensus rules have been tested on the devnet.",
            "changed tense",
        ),
        (  # a belief stated as fact
            "In Rome, it is believed he met the poet Virgil.",
            "In Rome, he met the poet Virgil.",
            "changed attribution",
        ),
        (  # a concession dropped
            "The board must publish the minutes, even if members object.",
            "The board must publish the minutes when members object.",
            "changed negation",
        ),
        (  # Japanese: the adverb より ("more") dropped
            "公式サイトでより詳しい手順をご覧いただけます。",
            "公式サイトで詳しい手順をご覧いただけます。",
            "changed comparison",
        ),
        (  # Chinese: the two sides of 相较于 / 与…相比 traded (set 15)
            "相较于基线方法\uff0c新方法显著降低了推理延迟。",
            "与新方法相比\uff0c基线方法显著降低了推理延迟。",
            "changed comparison",
        ),
        (  # English: "compared with" read as a comparison's pivot
            "Compared with Redis, Memcached uses less memory per key.",
            "Compared with Memcached, Redis uses less memory per key.",
            "changed comparison",
        ),
        (  # Korean: powers delegated to the teams now received from them (set 15)
            "위원회는 권한을 각 팀에게 위임합니다.",
            "위원회는 권한을 각 팀으로부터 위임받습니다.",
            "changed direction",
        ),
        (  # Korean: a past made a plan, where the block says another future elsewhere
            "우리는 번역 작업을 시작했습니다. 번역본은 곧 게시할 것입니다.",
            "우리는 번역 작업을 시작할 계획입니다. 번역본은 곧 게시할 것입니다.",
            "changed tense",
        ),
        (  # Chinese: within the group -> between groups
            "该方法通过计算组内的相对奖励估计优势。",
            "该方法通过计算组间的相对奖励估计优势。",
            "changed polarity direction",
        ),
        (  # option labels said in the other order (set 15)
            "The case against (i) is the uncertainty it adds. The case against (ii) is the cost.",
            "The case against (ii) is the uncertainty it adds. The case against (i) is the cost.",
            "swapped labels",
        ),
        (  # Korean: the modifier of a compound written apart replaced (set 15)
            "보안 팀을 제외한 모든 팀이 이 절차를 따릅니다.",
            "인프라 팀을 제외한 모든 팀이 이 절차를 따릅니다.",
            "changed word",
        ),
        (  # Japanese: an element added to a list of two joined by ・ (set 15)
            "データは有志により収集されています。",
            "データは有志により収集・検証されています。",
            "added list element",
        ),
        (  # Korean: a result the block does not claim added (set 15)
            "이 규칙은 각 팀의 책임 범위를 명확히 합니다.",
            "이 규칙은 각 팀의 책임 범위를 명확히 하여 프로젝트 운영의 투명성을 높입니다.",
            "added clause",
        ),
        (  # English: two phrases traded slots, each with its own words around it (set 16)
            (
                "Like many `rustc` options the `--check-cfg` option can be specified in a "
                "single-argument form, with the option name and its argument joined by `=`, or "
                "can be specified in a two-argument form."
            ),
            (
                "Like many `rustc` options, the `--check-cfg` option can be specified in a "
                "two-argument form, with the option name and its argument joined by `=`, or in "
                "a single-argument form."
            ),
            "swapped words",
        ),
        (  # English: an ongoing state said as a past one (set 16)
            (
                "Despite significant advancements in 2024, the implementation of blockchain in "
                "logistics continues to face substantial challenges."
            ),
            (
                "Despite significant advancements in 2024, the implementation of blockchain in "
                "logistics faced substantial challenges."
            ),
            "changed tense",
        ),
        (  # English: the degree word major dropped (set 16)
            "Achieving seamless interoperability remains a major challenge for the sector.",
            "Achieving seamless interoperability remains a challenge for the sector.",
            "changed degree",
        ),
        (  # English: increased said as lower: the other direction (set 16)
            (
                "The lack of universal standards leads to fragmentation and increased "
                "integration costs."
            ),
            "The lack of universal standards leads to fragmentation and lower integration costs.",
            "changed comparison",
        ),
        (  # Chinese: a count that is not the list's (set 16)
            "量子智能体是感知、处理、行动跨越经典和量子维度的自主系统。",
            "量子智能体是一类自主系统\uff0c其感知、处理和行动跨越经典与量子三个维度。",
            "changed number word",
        ),
        (  # Korean: 아니라는 (that it is not) is a negation, not the connective 아니라 (set 16)
            (
                "그렇다고 해서 비영어권 언어로 된 댓글을 다룰 준비를 마친 것은 아니오니 이에 "
                "유의하십시오."
            ),
            "그렇다고 해서 비영어권 언어로 된 댓글을 다룰 준비를 마쳤다는 점에 유의해 주십시오.",
            "changed polarity negation",
        ),
        (  # English: a noun replaced by another of its kind, WordNet's (set 16)
            "The team is investigating the geometry of the loss surface.",
            "The team is examining the arithmetic of the loss surface.",
            "changed word",
        ),
        (  # English: a plan said where the block states a fact (set 16)
            "The foundation funds the new working group.",
            "The foundation is set to fund the new working group.",
            "changed tense",
        ),
        (  # Chinese: a condition brought in, one new word after a preposition (set 17)
            "**前向生成:** 动态分配专业智能体团队处理子任务。",
            "**前向生成:** 根据任务复杂度动态分配专业智能体团队来处理各个子任务。",
            "added clause",
        ),
        (  # the embedded model's own reply in the README's run: "**" appended, shown as text
            "**Fireworks.ai has emerged as a provider.** Its platform serves 23,000 developers.",
            "**Fireworks.ai has emerged as a provider.** Its platform serves 23,000 developers.**",
            "structure",
        ),
        (  # English: two names traded across two clauses; the tagger knows "google" as a verb
            "While IBM focuses on a broad ecosystem, Google aims to refine its hardware.",
            "While Google concentrates on a broad ecosystem, IBM aims to refine its hardware.",
            "swapped words",
        ),
        (  # English: the adjective that says which speedup, replaced before the kept noun
            "Grover's algorithm offers a quadratic speedup over classical search.",
            "Grover's algorithm provides an exponential speedup over classical search.",
            "changed word",
        ),
        (  # Chinese: an adverb-tagged modifier before the kept noun (实时 -> 历史)
            "MARL方法使用DQN根据实时交通状况优化信号相位。",
            "该MARL方法利用DQN根据历史交通状况优化信号相位。",
            "changed word",
        ),
        (  # Japanese: the noun before the genitive particle and the kept head (表 -> 画像)
            "表の表示崩れを防ぐため、Web版の閲覧を推奨します。",
            "画像の表示崩れを防ぐため、Web版の閲覧をおすすめします。",
            "changed word",
        ),
        (  # Japanese: the noun before a kept nominal suffix (利用者 -> 開発者)
            "一部の情報は、個々の利用者の解釈にもとづくものです。",
            "一部の情報は、個々の開発者の解釈に基づくものです。",
            "changed word",
        ),
        (  # Korean: the noun before a kept suffix (공개적으로 -> 내부적으로)
            "심의회는 이 문제를 공개적으로 다루어야 합니다.",
            "심의회는 이 문제를 내부적으로 다루어야 합니다.",
            "changed word",
        ),
        (  # English: "notably more" -> "more", the degree word dropped (set 19)
            "Quantum systems are notably more susceptible to errors compared to classical ones.",
            "Quantum systems are more susceptible to errors than classical ones.",
            "changed degree",
        ),
        (  # Japanese: 主要な added, the contributors narrowed to the main ones (set 19)
            "このプロジェクトに貢献してくれているコントリビューターのみなさんです\uff01",
            "このプロジェクトに貢献してくださっている主要なコントリビューターの皆さんです\uff01",
            "changed degree",
        ),
        (  # Japanese: 網羅的に added, a claim of completeness (set 19)
            "この記事は、日本語LLMに関する情報をまとめたものです。",
            "本記事は、日本語LLMに関する情報を網羅的にまとめたものです。",
            "changed degree",
        ),
        (  # Korean: a temporary home made permanent (임시 -> 영구)
            "이 RFC는 임시 소속으로서 '런칭 패드'팀을 확립합니다.",
            "이 RFC는 영구적인 소속처로 '런칭 패드'팀을 확립합니다.",
            "changed polarity direction",
        ),
        (  # English: a noun in -ly before the verb is no adverb after an auxiliary
            "The supply increases every year in most markets.",
            "The supply increased every year in most markets.",
            "changed tense",
        ),
        (
            "Our assembly approves the budget each spring.",
            "Our assembly approved the budget each spring.",
            "changed tense",
        ),
        (  # Korean: an ongoing action made a plain present is still a change
            "위원회는 현재 이 제안을 검토하고 있습니다.",
            "위원회는 현재 이 제안을 검토합니다.",
            "changed tense",
        ),
        (  # English: 'prevents X from' made 'lets X': a negation dropped
            "This prevents attackers from taking over specific slots.",
            "This lets attackers take over specific slots.",
            "changed polarity negation",
        ),
        (  # Japanese: the two trainings swapped across 後, each with its verb
            "事前学習を行った後に事後学習を施したモデルも含みます\u3002",
            "事後学習を行った後に事前学習を施したモデルも含みます\u3002",
            "swapped words",
        ),
        (  # Japanese: こともある/ことがある dropped is a hedge dropped
            "今後の機能追加は予告なく変更されることがあります\u3002",
            "今後の機能追加は予告なく変更されます\u3002",
            "changed polarity hedge",
        ),
        (  # Korean: the council's members gone, their audit handed to the moderators (set 21)
            "조건부 중재자는 중재팀과 협업할 수 있습니다. 심의회 위원은 감사를 시작할 수 있으나"
            " 심의회는 비공개 정보를 볼 수 없습니다.",
            "조건부 중재자는 중재팀과 협업할 수 있으며, 감사를 시작할 수도 있습니다. 다만"
            " 심의회는 비공개 정보를 볼 수 없습니다.",
            "lost subject",
        ),
        (  # Korean: sufficient time made some time (충분한 -> 어느 정도의) (set 21)
            "대표자로 하여금 제안 사항을 고려할 충분한 시간을 허용합니다.",
            "대표자에게 제안 사항을 고려할 어느 정도의 시간을 허용합니다.",
            "changed degree",
        ),
        (  # Korean: a clause added whose predicate is a noun and 되다 (반영됩니다) (set 21)
            "특히 팀 리더는 자신의 팀과 하위 팀의 피드백을 요청해야 합니다.",
            "특히 팀 리더는 자신의 팀과 하위 팀의 피드백을 요청해야 하며, 이 피드백은 최종"
            " 결정에 반영됩니다.",
            "added clause",
        ),
    ],
)
def test_a_meaning_change_is_refused(block: str, reply: str, group: str) -> None:
    text, reasons = _verdict(block, reply)
    assert text is None and group in {r.group for r in reasons}, reasons


@pytest.mark.parametrize(
    ("block", "reply"),
    [
        (  # a list reordered
            "Applied to math reasoning, data analysis, creative writing and code generation.",
            "Applied to code generation, creative writing, data analysis and math reasoning.",
        ),
        (
            "在数学推理、数据分析、创意写作、代码生成等任务上优于现有基线。",
            "在代码生成、创意写作、数据分析、数学推理等任务上优于现有基线。",
        ),
        (  # Chinese: an English compound modifier translated ("LLM-based" -> 基于 LLM 的)
            "**关键组件:** LLM-based语义编码器\u3001情景记忆模块\u3001世界图工作记忆模块\u3002",
            "**关键组件\uff1a** 情景记忆模块\u3001世界图工作记忆模块\u3001"
            "基于 LLM 的语义编码器\u3002",
        ),
        (  # a rewording in synonyms (require -> need, find -> locate, reduce -> cut): no words
            # lost and none added
            "Classical search methods require checking each item to find a target, which takes"
            " time proportional to the size of the dataset; the quantum method reduces this cost"
            " and offers a quadratic speedup.",
            "Classical search methods need to examine every item to locate a target, taking time"
            " proportional to the dataset size; the quantum method cuts this cost and provides a"
            " quadratic speedup.",
        ),
        (  # a comparative form that says a word of the block again (previous -> earlier)
            "It covers market positioning relative to both previous RTX generations and rivals.",
            "It covers market positioning relative to both earlier RTX generations and rivals.",
        ),
        (  # figures reordered, each with its own noun after it (no number swapped)
            "Current metrics: 19,531 stars, 2,452 forks, 88 contributors, 196 open issues",
            "Current metrics: 88 contributors, 19,531 stars, 2,452 forks, 196 open issues",
        ),
        (  # Korean: "both" made explicit after the two things it sums up (A와 B 모두)
            "이 팀은 언어 설계와 컴파일러 구현을 담당합니다.",
            "이 팀은 언어 설계와 컴파일러 구현을 모두 담당합니다.",
        ),
        (  # two sentences merged: "However," leads a list in the block and is no item of it
            "SMEs can access bank financing. However, information asymmetry, lack of"
            " collateral, and fragmented data still hinder SME participation.",
            "SMEs can access bank financing, although information asymmetry, a lack of"
            " collateral, and fragmented data still hinder SME participation.",
        ),
        (  # a symmetric comparison's items reordered, a modifier inside the last
            "比较固定时间控制器与基于MARL的交通信号控制器\u3002",
            "比较基于 MARL 的交通信号控制器与固定时间控制器\u3002",
        ),
        (  # an identity said the other way round
            "For most stores the main performance bottleneck is the hosting environment.",
            "For most stores the hosting environment is the main performance bottleneck.",
        ),
        (  # one intensifier for another
            "MARL显著降低等待时间。",
            "MARL明显降低了等待时间。",
        ),
        (  # a derivation with its negation
            "Using conditions that are not valid will cause a warning.",
            "Using invalid conditions will cause a warning.",
        ),
        (  # a predicate reworded
            "The roadmap is dynamic and releases impact every team.",
            "The roadmap is fluid and releases affect every team.",
        ),
        (  # Korean: a phrase moved with its particle
            "※継続事前学習後に事後学習\uff08SFT, DPO, RLなど\uff09を行ったモデルも含みます",
            "※事後学習\uff08SFT, DPO, RLなど\uff09を継続事前学習後に行ったモデルも含みます",
        ),
        (  # "as soon as available" is no hedge
            "번역본은 사용할 수 있는 즉시 공개됩니다.",
            "번역본은 준비되는 즉시 공개됩니다.",
        ),
        (  # a possessive is no other thing
            "Analysts expect the market expansion to continue.",
            "Analysts expect the market's expansion to continue.",
        ),
        (  # Korean: a word written apart from the noun after it is no part of its name
            "검토가 끝난 다음 팀이 승인합니다.",
            "검토가 끝난 후 팀이 승인합니다.",
        ),
        (  # Chinese: 同时 joining two clauses ("and also") is no qualifier
            "该方法提高了准确率\uff0c同时减少了处理时间。",
            "该方法提高了准确率\uff0c并减少了处理时间。",
        ),
        (  # Japanese: the same hedge (とは限りません -> とも限りません)
            "常に最新の情報を提供できるとは限りません。",
            "常に最新の情報をお届けできるとも限りません。",
        ),
        (  # a number spelled out before a hyphen
            "A 1-second delay can reduce conversions.",
            "A one-second delay can reduce conversions.",
        ),
        (  # "one of" is no count
            "Hosting is a major cause of slow stores.",
            "Hosting is one of the major causes of slow stores.",
        ),
        (  # Japanese: "can" is no hedge (ご覧いただけます -> 閲覧できます)
            "内容はWeb版でご覧いただけます。",
            "内容はWeb版で閲覧できます。",
        ),
        (  # Japanese: the same focus (を中心に -> 主に)
            "日本語を中心に学習されたモデルです。",
            "主に日本語で学習されたモデルです。",
        ),
        (  # Korean: the same qualifiers in other words
            "가능한 경우, 팀은 필요에 따라 지원을 받아 직접 해결해야 합니다.",
            "팀은 가능하면 필요할 때 지원을 받아 스스로 해결해야 합니다.",
        ),
        (  # Chinese: 多个 -> 多项 is no number changed
            "AEC在多个指标上表现领先。",
            "AEC在多项指标上表现领先。",
        ),
        (  # the same source in other words
            "This event is widely seen as a turning point.",
            "This event is widely regarded as a turning point.",
        ),
        (  # Korean: one contrast for another (아닌 -> 대신)
            "심의회는 명시적인 승인이 아닌 반대 의사를 묻습니다.",
            "심의회는 명시적인 승인 대신 반대 의사를 묻습니다.",
        ),
        (  # Chinese: a comparison said where the block already has one (提高了 -> 更高了)
            "新版本的速度更快\uff0c稳定性也提高了。",
            "新版本的速度更快\uff0c稳定性也更高了。",
        ),
        (  # Chinese: list items reordered whole, each name with its own item
            "已有多种机制 (如MHGPO的群组采样、ANN的分层团队、MasHost的图构建)。",
            "已有多种机制 (如ANN的分层团队、MHGPO的群组采样、MasHost的图构建)。",
        ),
        (  # a range's unit written on both ends (7-20% -> 7%-20%, en dashes)
            "A 1-second delay can reduce conversions by 7\u201320%.",
            "A 1-second delay can reduce conversions by 7%\u201320%.",
        ),
        (  # the same colon made full-width with the space kept: the bold still closes
            "**核心思想:** 利用群组相对奖励进行优势估计。",
            "**核心思想\uff1a** 利用群组相对奖励进行优势估计。",
        ),
        (  # Korean: 작 of 작성 ("written") is no "small", 크 of 링크 no "big" (morphemes)
            "비영어권 언어로 된 댓글을 링크로 연결합니다.",
            "비영어권 언어로 작성된 댓글을 링크로 연결합니다.",
        ),
        (  # Japanese: とは限りません in other forms (限らず, 言い切れません)
            "最新の情報を常に提供できるとは限りません。情報は予告なく変更されます。",
            "最新の情報を常に提供できるとは限らず、情報は予告なく変更されます。",
        ),
        (
            "最新の情報を常に提供できるとは限りません。",
            "最新の情報を常に提供できるとは言い切れません。",
        ),
        (  # Korean: the future said with -겠 and -게 됩니다 instead of -ㄹ 것입니다
            "번역본이 준비되면 링크를 연결할 것입니다. 향후 결정은 심의회가 내릴 것입니다.",
            "번역본이 준비되면 링크를 걸어 두겠습니다. 앞으로 결정은 심의회가 내리게 됩니다.",
        ),
        (  # "more" alone is no "much more" (lemminflect gives "more" the lemma "much")
            "Home staking is infeasible and so it's more likely that staking centralises.",
            "Home staking is infeasible, so it is more likely that staking centralises.",
        ),
        (  # Japanese: a slip fixed to the word the block writes elsewhere (適応 -> 適用)
            "ライセンスが適用されます。ただし一部のモデルには別のライセンスが適応されます。",
            "ライセンスが適用されます。ただし一部のモデルには別のライセンスが適用されます。",
        ),
        (  # a comparison reworded, its standard kept ("rather than" and "more than N" are no
            # comparison's standard)
            "The new kernel is faster than the old kernel on long prompts, rather than on short"
            " ones, and serves more than 23,000 users.",
            "On long prompts the new kernel is faster than the old kernel, rather than on short"
            " ones, and it serves over 23,000 users.",
        ),
        (  # Chinese: an attribute reworded in words of its own, or moved, is kept
            "该方法在包含中断的SAP LE数据集上测试。",
            "该方法在含有中断的SAP LE数据集上进行了测试。",
        ),
        (
            "该方法在包含中断的数据集上测试。",
            "该方法的测试数据集包含中断。",
        ),
        (  # a sequence said the other way round keeps what comes first
            "The team publishes the report after the review.",
            "After the review, the team publishes the report.",
        ),
        (  # Korean: one negation in two forms (공개되지 않은 -> 비공개), "beforehand" reworded
            "개인에 대해 공개되지 않은 정보가 있으며 사전에 피드백을 허용해야 합니다.",
            "개인에 관한 비공개 정보가 있고 앞서 피드백을 허용해야 합니다.",
        ),
        (  # Chinese: 未 inside 未来 ("future") is no "not yet" against an added 已
            "RL研究在多个方面取得了显著进展\uff0c尽管尚处于早期阶段\uff0c但预示着未来的发展方向。",
            "RL研究已在多个方面取得显著进展\uff0c虽然仍处于早期阶段\uff0c却预示着未来的发展方向。",
        ),
        (  # Japanese: 不 inside 不具合 ("a fault") is no negation
            "表の表示崩れやレイアウトの問題を防ぐため、Web版の閲覧を推奨いたします。",
            (
                "表の表示崩れやレイアウト上の不具合を避けるため、Web版でご覧になることをおすすめ"
                "します。"
            ),
        ),
        (  # Chinese: 持续 and 不断 both "continually", 优于 and 超越 both "better than"
            "通过迭代更新持续提升性能\uff0c并在代码生成等任务上优于现有基线。",
            "借助迭代更新使性能不断提升\uff0c并在代码生成等任务中超越现有基线。",
        ),
        (  # a participle after a noun is a verb with its object, not a noun's modifier
            "It applies across various domains addressing complex challenges that matter.",
            "It applies across various domains tackling complex challenges that matter.",
        ),
        (  # Chinese: two parallel clauses reordered whole keep their predicates
            "图8\uff1a左侧展示自主构建过程、右侧详细说明RL策略。",
            "图8\uff1a右侧详细说明RL策略、左侧展示自主构建过程。",
        ),
        (  # "does not have any" is "has no": one negation, no quantity lost
            "In later phases, the beacon chain does not have any distinction between validators.",
            "The beacon chain has no difference between validators in later phases.",
        ),
        (  # Korean: the verb 보다 ("to see") is no comparison
            "심의회 위원은 감사를 시작할 수 있으나 심의회는 비공개 정보를 절대 볼 수 없습니다.",
            "심의회 위원이 감사를 개시할 수는 있지만, 심의회가 비공개 정보를 보는 일은 절대"
            " 없습니다.",
        ),
        (  # an active past made passive: no change of tense
            "The 2008 crisis deeply affected the firm, and the board is now seen as cautious.",
            "The firm was deeply affected by the 2008 crisis, and the board is now seen as"
            " cautious.",
        ),
        (  # "got" made "were": the same past
            "Several nodes got disconnected, while the others are still syncing.",
            "Several nodes were disconnected, while the others still sync.",
        ),
        (  # a participle before an adverb and "by" is no past
            "It is a skill derived from long practice, possessed only by experts.",
            "It is a skill that derives from long practice and that only experts possess.",
        ),
        (  # "makes X possible" says "enables X"
            "Caching the weights enables much faster cold starts.",
            "Caching the weights makes much faster cold starts possible.",
        ),
        (  # a degree word said again as its derivation
            "This is particularly costly for small teams.",
            "This poses a particular cost for small teams.",
        ),
        (  # Korean: a Sino-Korean ordinal written in digits
            "일차 검토에 참여해 주셔서 감사합니다.",
            "1차 검토에 참여해 주셔서 감사합니다.",
        ),
        (  # Korean: continuously -> steadily; clear -> distinct
            "팀은 명확한 목표를 지속적으로 점검합니다.",
            "팀은 뚜렷한 목표를 꾸준히 점검합니다.",
        ),
        (  # Chinese: 一类 is an article
            "**定义:** 边缘智能体是在本地设备上运行的自主系统。",
            "**定义:** 边缘智能体是一类在本地设备上运行的自主系统。",
        ),
        (  # "once" the conjunction; "have successfully completed" a verb
            "Only after successfully completing the course are students admitted.",
            "Students are admitted only once they have successfully completed the course.",
        ),
        (  # an English gloss in parentheses moved with what it glosses
            "Upon her retirement, leadership (chair) of the Institute passed to her deputy, Lee.",
            "When she retired, leadership of the Institute (the role of chair) passed to her"
            " deputy, Lee.",
        ),
        (  # the same belief, said with the subject first
            "In Rome, it is believed he met the poet Virgil.",
            "In Rome, he is believed to have met the poet Virgil.",
        ),
        (  # the American style sets the full stop inside the quotes (set 15)
            'Each node derives a "session key". The key is never shared.',
            'Each node derives a "session key." The key is never shared.',
        ),
        (  # "one" as a pronoun, no count (set 15)
            "Crates that lack a build script can opt in now, but crates that have a build "
            "script may need a flag.",
            "Crates that lack a build script can opt in now, but crates that have one may need "
            "a flag.",
        ),
        (  # Japanese: ていただいている is no past (set 15)
            "このプロジェクトに貢献してくれているみなさんです\uff01",
            "本プロジェクトに貢献していただいているみなさまです\uff01",
        ),
        (  # Korean: 절대 -> 결코, both "never" (set 15)
            "중재팀은 이 기록을 절대 볼 수 없습니다.",
            "중재팀은 이 기록을 결코 볼 수 없습니다.",
        ),
        (  # "A and B each have" says "both A and B have" (set 15)
            "While both Intel and AMD have their own roadmaps, they share one goal.",
            "Even though Intel and AMD each have their own roadmaps, they share one goal.",
        ),
        (  # Korean: a noun that places a thing among others is no modifier (일원 -> 구성원)
            "위원회 일원 사이의 갈등은 의장이 조정합니다.",
            "위원회 구성원 사이의 갈등은 의장이 조정합니다.",
        ),
        (  # "compared to A due to B": the cause is not part of the standard
            "Quantum systems are more error-prone compared to classical systems due to "
            "decoherence.",
            "Due to decoherence, quantum systems are more error-prone than classical systems.",
        ),
        (  # Chinese: 相较于 -> 与…相比, the same standard
            "相较于基线方法\uff0c新方法显著降低了推理延迟。",
            "与基线方法相比\uff0c新方法显著降低了推理延迟。",
        ),
        (  # English: two phrases moved to the front and the end of the sentence (set 16)
            (
                "The project demonstrates strong community engagement with 88 contributors and "
                "19,531 GitHub stars as of February 2026."
            ),
            (
                "As of February 2026, the project has 88 contributors and 19,531 GitHub stars, "
                "reflecting strong community engagement."
            ),
        ),
        (  # English: increased said as higher (set 16)
            (
                "The lack of universal standards leads to fragmentation and increased "
                "integration costs."
            ),
            "The lack of universal standards leads to fragmentation and higher integration costs.",
        ),
        (  # English: more research said as further research (set 16)
            (
                "The Planner analyzes research objectives and creates structured execution "
                "plans, determining if sufficient context is available or if more research is "
                "needed."
            ),
            (
                "The Planner analyzes the research objectives and draws up structured execution "
                "plans, deciding whether enough context is available or whether further "
                "research is required."
            ),
        ),
        (  # English: over two millennia said as more than two (set 16)
            "His ideas have been central to philosophical debate for over two millennia [43, 44].",
            (
                "His ideas have remained central to philosophical debate for more than two "
                "millennia [43, 44]."
            ),
        ),
        (  # English: can in a clause of purpose (set 16)
            (
                "The core idea is to combine fraud proofs and data availability sampling, to "
                "allow clients to detect and reject invalid chains."
            ),
            (
                "The core idea is to combine fraud proofs and data availability sampling so "
                "that clients can detect and reject invalid chains."
            ),
        ),
        (  # Chinese: 共同优化 said as 进行联合优化: a light verb and a synonym, no clause (set 16)
            (
                "ANN (Agentic Neural Network) 提出将LLM-based "
                "MAS视为分层智能体团队\uff0c通过文本梯度共同优化角色、Prompt和工具。"
            ),
            (
                "ANN (Agentic Neural Network) 提出把LLM-based "
                "MAS看作一个分层的智能体团队\uff0c并借助文本梯度对角色、Prompt和工具进行联合优化。"
            ),
        ),
        (  # Chinese: a list's count made explicit (set 16)
            "量子智能体是感知、处理、行动跨越经典和量子维度的自主系统。",
            "量子智能体是一类自主系统\uff0c其感知、处理和行动跨越经典与量子两个维度。",
        ),
        (  # Japanese: 一部の情報 said as 情報の中には (set 16)
            "一部の情報は、推測や個々の利用者の解釈にもとづくものである場合があります。",
            "情報の中には、推測や利用者それぞれの解釈に基づくものが含まれている場合があります。",
        ),
        (  # Korean: 아니오니 said as 아니라는 점에 (set 16)
            (
                "그렇다고 해서 비영어권 언어로 된 댓글을 다룰 준비를 마친 것은 아니오니 이에 "
                "유의하십시오."
            ),
            (
                "그렇다고 해서 비영어권 언어로 된 댓글을 다룰 준비를 마친 것은 아니라는 점에 "
                "유의해 주십시오."
            ),
        ),
        (  # Korean: as soon as it is available, 되는 대로 바로 (set 16)
            "당사는 이러한 언어로 된 번역본을 사용할 수 있게 되는 즉시 링크를 연결할 것입니다.",
            (
                "당사는 이러한 언어로 된 번역본을 사용할 수 있게 되는 대로 바로 링크를 연결할 "
                "것입니다."
            ),
        ),
        (  # English: two nouns of a broad kind (quality) are a rewording (set 16)
            "The key distinction between the two schools lies in their method.",
            "The key difference between the two schools lies in their method.",
        ),
        (  # English: "set to" a value is no future, "set to" a verb is (set 16)
            "The multiplier is configured initially to one-third of its final value.",
            "The multiplier is initially set to one-third of its final value.",
        ),
        (  # English: the default behavior said as "by default" (set 17)
            "The default behavior of `rustc` is that condition names are not checked.",
            "By default, `rustc` does not check condition names.",
        ),
        (  # Korean: 모든 일원 said as 일원 전원 (set 17)
            "이를 승인하는 팀은 이러한 사실상의 리더십 그룹에 속한 모든 일원이 됩니다.",
            "이를 승인하는 팀은 이러한 사실상의 리더십 그룹에 속한 일원 전원으로 구성됩니다.",
        ),
        (  # English: "appear more than once" is occur, no hedge (set 16)
            "A condition name may be specified more than once.",
            "A condition name may appear more than once.",
        ),
        (  # English: one adjective spells the other (faceted -> multifaceted)
            "Plato takes a faceted approach to the question of justice.",
            "Plato takes a multifaceted approach to the question of justice.",
        ),
        (  # English: a gerund after a preposition takes an object, it is no modifier
            "Firms can cut costs by increasing compliance with the rules.",
            "Firms can cut costs by raising compliance with the rules.",
        ),
        (  # Chinese: a localizer before the genitive particle says where (上 -> 中)
            "ARIA和其他在线方法在单智能体游戏上的奖励曲线。",
            "ARIA与其他在线方法在单智能体游戏中的奖励曲线。",
        ),
        (  # Chinese: the next sentence's first word is no head (时间。MHGPO)
            "不同算法的平均每训练步时间。MHGPO内存占用更低。",
            "不同算法每个训练步的平均耗时。MHGPO的内存占用更低。",
        ),
        (  # Japanese: どの + noun + も says "every" as 全ての does
            "そのため、全ての読者にとって必ずしも正確であるとは限りません。",
            "したがって、どの読者にとっても必ず正確であるとは限りません。",
        ),
        (  # Japanese: あらゆる for 全て, the quantifier (no degree word lost)
            "そのため、全ての読者にとって必ずしも正確であるとは限りません。",
            "したがって、あらゆる読者にとって必ずしも正確であるとは限りません。",
        ),
        (  # English: "notably featured" -> "feature prominently", one degree word for another
            "His brothers are notably featured interlocutors in *The Republic* [1].",
            "His brothers feature prominently as interlocutors in *The Republic* [1].",
        ),
        (  # Korean: 해야 합니다 said as a duty (할 의무가 있습니다), the same "must"
            "팀은 부재 시에 대비해 대안을 마련해 제공해야 합니다.",
            "각 팀은 부재 시에 대비해 대안을 마련해 제공할 의무가 있습니다.",
        ),
        (  # English: a participle after "is" and an adverb is no finite past (set 20)
            "This ascent is famously depicted in the Allegory of the Cave [39].",
            "The Allegory of the Cave famously depicts this ascent [39].",
        ),
        (  # English: "constantly changing" said as "in constant flux", the same frequency
            "The objects of the sensible realm are constantly changing and imperfect copies.",
            "The objects of the sensible realm are imperfect copies in constant flux.",
        ),
        (  # English: "proving" and "proved" are one certainty word
            "Lifetime costs rose by 860 euros, proving highly cost-effective overall.",
            "Lifetime costs rose by 860 euros, which proved highly cost-effective overall.",
        ),
        (  # Chinese: a caption's two sentences merged; the acronym DQN counts as kept
            "*图5\uff1a处理时间减少条形图。DQN实现了最高的处理时间减少。*",
            "*图5\uff1a处理时间减少情况的条形图\uff0c其中DQN的处理时间减少幅度最大。*",
        ),
        (  # English: forms of one lemma are one content token (focus/focuses, note/noting)
            "While the primary focus here is gaming, it is important to note that these AI"
            " enhancements also accelerate creative workloads, making the series a versatile"
            " choice for AI research.",
            "Although this report focuses primarily on gaming, it is worth noting that these AI"
            " enhancements also speed up creative workloads, which makes the series a"
            " versatile option for AI research.",
        ),
        (  # Korean: a present made ongoing (않는 -> 못하고 있는) says the same (sets 17 to 20)
            "심의회는 명확한 주인의식의 부재로 인해 완수되지 않는 작업을 식별하여 추적합니다.",
            "심의회는 명확한 주인의식이 없어 완수되지 못하고 있는 작업을 찾아내 추적합니다.",
        ),
        (  # English: after a noun, 'that' opens a relative clause: 'address' a verb (set 21)
            "In 2025, best practices have evolved, focusing on scalable solutions that address "
            "both front-end and back-end bottlenecks.",
            "In 2025, best practices have evolved toward scalable solutions that tackle both "
            "front-end and back-end bottlenecks.",
        ),
        (  # English: 'capable of' is the ability 'can' said another way (sets 17, 18)
            "Future research must focus on developing QEC methods that can minimize the qubit "
            "overhead.",
            "Future research must concentrate on developing QEC methods capable of minimizing the "
            "qubit overhead.",
        ),
        (  # English: 'can be found in' says where a thing is, no possibility (set 20)
            "The safety and liveness proofs can be found in the Combining GHOST and Casper paper.",
            "The safety and liveness proofs are available in the Combining GHOST and Casper paper.",
        ),
        (  # English: 'prevents X from' says 'X cannot' (set 20)
            "This ensures that attackers with a small portion of total stake cannot take over "
            "specific slots.",
            "This prevents attackers with a small portion of total stake from taking over "
            "specific slots.",
        ),
        (  # Japanese: こともある is the hedge ことがある; とは限らず is とは限りません (set 21)
            "これらの情報は予告なく変更されることがあり\u3001また最新の情報を常に提供できるとは限りません\u3002",
            "これらの情報は常に最新のものを提供できるとは限らず\u3001予告なく変更されることもあります\u3002",
        ),
        (  # Japanese: 同じ added says what the block implied (sets 6 to 21)
            "このREADMEの内容は\u3001Web版でより見やすい形式でご覧いただけます\u3002",
            "Web版では\u3001このREADMEと同じ内容をより見やすい形式でご覧いただけます\u3002",
        ),
        (  # Chinese: 两方面 counts the two items before it, jieba's verb 开销 the last
            "MHGPO变体比MAPPO收敛更快\uff0cRR在性能和计算开销上表现最佳\u3002",
            "相较于MAPPO\uff0cMHGPO的各个变体收敛得更快\uff1b"
            "而在性能与计算开销两方面\uff0cRR的表现最为出色\u3002",
        ),
        (  # Chinese: the clause check's run is found across its punctuation (对此\uff0c该框架)
            "MAS构建涉及节点角色生成和连接决策的双重决策\u3002通过联合概率采样机制解决高维组合空间的收敛问题\u3002",
            "MAS构建涉及节点角色生成与连接决策的双重决策\uff0c对此\uff0c该框架通过联合概率采样机制来解决高维组合空间中的收敛问题\u3002",
        ),
        (  # Korean: 계속해서 is the frequency of 지속적으로 (set 21)
            "심의회는 커뮤니티가 기대하는 바를 지속적으로 충족하고 있음을 공개적으로"
            " 다루어야 합니다.",
            "심의회는 커뮤니티의 기대를 계속해서 충족하고 있다는 점을 공개적으로 다뤄야 합니다.",
        ),
        (  # Korean: 경우에 따라 is 일부 상황에서는 said another way (sets 6 to 21)
            "일부 상황에서는 명확한 책임자가 없는 사안에 대해 결정을 내릴 수 있습니다.",
            "경우에 따라 심의회는 명확한 책임자가 없는 사안에 대해 결정을 내릴 수도 있습니다.",
        ),
        (  # Japanese: a verb and its object before 後: the object is what came first (set 21)
            "※継続事前学習後に事後学習\uff08SFT, DPO, RLなど\uff09を行ったモデルも含みます",
            "※継続事前学習を行った後に\u3001さらに事後学習\uff08SFT, DPO, RLなど\uff09"
            "を施したモデルもここに含めています",
        ),
        (  # Korean: one subject said once when two sentences merge is no subject lost
            "심의회는 명확한 책임자가 없는 작업을 식별합니다. 심의회는 이러한 작업을"
            " 팀에게 위임합니다.",
            "심의회는 명확한 책임자가 없는 작업을 찾아내 팀에 위임합니다.",
        ),
        (  # Korean: 일화가 있습니다 says a thing is, not what it does (no actor lost)
            "과거에 중심팀에서 중요한 업무를 팀 내부에서 수행하려는 시도를 한 일화가 있습니다.",
            "과거 중심팀이 중요한 업무를 팀 내부에서 수행하려 했던 사례가 있습니다.",
        ),
        (  # Korean: 당사 -> 저희, the writer named another way
            "당사는 제시된 거버넌스 구조와 정책을 다른 언어로 번역하는 과정을 시작했습니다.",
            "저희는 제시된 거버넌스 구조와 정책을 다른 언어로 번역하는 작업을 시작했습니다.",
        ),
    ],
)
def test_a_faithful_edit_passes(block: str, reply: str) -> None:
    text, reasons = _verdict(block, reply)
    assert text is not None, reasons


def test_edits_are_classified() -> None:
    pair = Pair(
        "The results was good and this is complexity.",
        "The results were good, and this is simplicity.",
        "latin",
    )
    # aligned on lemmas: "was" -> "were" is no edit at all; the one edit is the antonym
    assert [(e.cls, e.old_content[0].text, e.new_content[0].text) for e in pair.edits] == [
        (EditClass.ANTONYM, "complexity", "simplicity")
    ]


def test_every_rule_is_in_the_rules_table_of_the_docstring() -> None:
    from owlai_refine.guard import rules  # noqa: PLC0415 - the module, not its names

    doc = rules.__doc__ or ""
    for rule in RULES:
        assert re.search(rf"``{rule.name}``\s+{rule.gate}\b", doc), rule.name


def test_a_reason_reads_as_one_line() -> None:
    assert str(Reason("lost citation", "[4]")) == "lost citation [4]"
    assert str(Reason("structure", "heading", ": ")) == "structure: heading"
    assert str(Reason("empty")) == "empty"


def test_a_runaway_reply_is_refused_on_length_alone_before_any_alignment() -> None:
    block = "Costs fell in 2024 [4]."
    text, reasons = _verdict(block, "Costs rose and rose. " * 50_000)  # about 1 MB
    assert text is None and [str(r) for r in reasons] == ["too long: 45652.13x"]


def test_an_inserted_clause_of_new_words_is_an_added_clause() -> None:
    from owlai_refine.guard.rules.added import added_clause_reasons  # noqa: PLC0415

    block = "이 RFC는 또한 심의회와 각 팀 사이의 감독 및 책임성 메커니즘을 확립합니다."
    reply = (
        "이 RFC는 또한 심의회와 각 팀 사이의 감독 및 책임성 메커니즘을 확립하여 "
        "프로젝트 운영의 투명성을 높입니다."
    )
    found = added_clause_reasons(Pair(block, reply, "ko"))
    assert [r.group for r in found] == ["added clause"] and "투명성" in found[0].detail
    # text moved with a word or two of its own, mostly the block's words: no clause
    block = "使用LLM生成语义状态嵌入\uff0c结合情景记忆和工作记忆\uff0c实现高效决策。"
    reply = (
        "使用LLM生成语义状态嵌入\uff0c并将其与情景记忆和工作记忆相结合。这一设计实现了高效决策。"
    )
    assert added_clause_reasons(Pair(block, reply, "zh")) == []


def test_major_is_an_intensifier_whatever_the_tagger_calls_it() -> None:
    # the tagger calls "major" a verb after a sentence-opening numeral (set 16)
    pair = Pair(
        "Heavy themes are a major cause of slow sites.",
        "One major cause of slow sites is heavy themes.",
        "latin",
    )
    assert role_reasons(pair) == []
    dropped = Pair(
        "Heavy themes are a major cause of slow sites.",
        "Heavy themes are a cause of slow sites.",
        "latin",
    )
    assert [r.group for r in role_reasons(dropped)] == ["changed degree"]
