"""The lost-subject rule: the one who acts, gone from the reply while what it does stays.

Pure code, over the pair's analysed tokens (Kiwi's, UniDic's). A Korean or Japanese sentence
names who acts with a topic or subject particle (``심의회 위원은 감사를 시작할 수 있으나``,
``有志が収集し``). When a reply merges two sentences, a faithful one keeps every actor, said
once; one that drops a noun that stood before such a particle, writing it nowhere, in any form,
while it keeps the verb that noun governed, has handed the act to someone else (the ability to
start an audit moved from the council's members to the moderators): ``lost subject "위원"``.
"""

from __future__ import annotations

from owlai_refine.guard.analysis import Token
from owlai_refine.guard.pair import Pair
from owlai_refine.guard.reasons import Reason

__all__ = ["lost_subject_reasons"]

_SUBJECT = {
    "ko": frozenset({"은", "는", "이", "가"}),
    "ja": frozenset({"は", "が"}),
}
"""The topic and subject particles, per language (Kiwi ``JX``/``JKS``; UniDic 係助詞/格助詞)."""
_SUBJECT_TAGS = {"ko": frozenset({"JX", "JKS"}), "ja": frozenset({"助詞-係助詞", "助詞-格助詞"})}
_SELF = frozenset({"당사", "본인", "저희", "当方", "弊社", "当社", "本稿", "本記事", "筆者"})
"""Nouns by which a text names its writer: 당사는 -> 저희는, a pronoun said another way."""
_LIGHT = frozenset({"있다", "없다", "이다", "되다", "하다", "有る", "居る", "為る", "成る"})
"""Verbs that say that a thing is, not what its subject does (일화가 있습니다)."""
_END = frozenset({".", "!", "?", "\u3002", ",", "\u3001", ";"})


def _acts(tokens: tuple[Token, ...], language: str) -> list[tuple[Token, Token]]:
    """Each noun right before a topic or subject particle, with the first verb after it in
    its clause (the noun it acts with)."""
    out: list[tuple[Token, Token]] = []
    particles, tags = _SUBJECT[language], _SUBJECT_TAGS[language]
    for i in range(len(tokens) - 1):
        noun, particle = tokens[i], tokens[i + 1]
        if noun.pos != "NOUN" or not noun.content or noun.tag == "NNB" or noun.lemma in _SELF:
            continue
        if particle.lemma not in particles or particle.tag not in tags:
            continue
        for t in tokens[i + 2 :]:
            if t.text in _END:
                break
            if t.pos == "VERB" or (t.pos == "NOUN" and t.content and _made_verb(tokens, t)):
                if t.lemma not in _LIGHT:
                    out.append((noun, t))
                break
    return out


def _made_verb(tokens: tuple[Token, ...], word: Token) -> bool:
    at = next((i for i, t in enumerate(tokens) if t is word), -1)
    nxt = tokens[at + 1] if 0 <= at < len(tokens) - 1 else None
    return nxt is not None and nxt.tag in ("XSV", "XSA")


def lost_subject_reasons(pair: Pair) -> list[Reason]:
    """``lost subject "위원"`` for the first Korean or Japanese noun that stood before a topic
    or subject particle, that the reply writes nowhere, while it keeps the verb that noun
    governed (see the module docstring); empty if there is none."""
    language = pair.old.language
    if language not in _SUBJECT:
        return []
    reply = pair.reply_prose
    kept = {t.lemma for t in pair.new.words}
    for noun, verb in _acts(pair.old.tokens, language):
        if noun.text in reply or noun.lemma in kept:
            continue
        if verb.lemma in kept:
            return [Reason("lost subject", f'"{noun.text}"')]
    return []
