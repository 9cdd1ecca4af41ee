"""The writing systems the pipeline tells apart, as regular-expression class bodies: the one
place their Unicode ranges are written.

Pure values. Each name is a character-class body (use it inside ``[...]``): ``HAN`` (CJK
ideographs, with the iteration mark 々 and the compatibility block), ``HIRAGANA``,
``KATAKANA`` (with the long-vowel mark, the phonetic extensions and half-width forms), ``KANA``
(both), ``HANGUL`` (precomposed syllables), ``CJK`` (all of these) and ``CJK_PUNCT`` (CJK and
full-width punctuation, curly quotes, the middle dot).
"""

from __future__ import annotations

__all__ = ["CJK", "CJK_PUNCT", "HAN", "HANGUL", "HIRAGANA", "KANA", "KATAKANA"]

HAN = r"\u3005\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
HIRAGANA = r"\u3040-\u309f"
KATAKANA = r"\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f"
KANA = HIRAGANA + KATAKANA
HANGUL = r"\uac00-\ud7a3"
CJK = HAN + KANA + HANGUL
CJK_PUNCT = r"\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\u00b7\u2018-\u201f"
