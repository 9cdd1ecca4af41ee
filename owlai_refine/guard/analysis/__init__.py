"""One analysis of a text for the guard: tokens with lemma, part of speech and role.

Pure code apart from loading each language's analyser once per process (the analysers read
their own dictionaries from site-packages; nothing is downloaded):

=========  ===============================================  ====================================
language   analyser (PyPI)                                  tokens
=========  ===============================================  ====================================
``en``     a regular-expression tokenizer + ``lemminflect``  words; lemma and Penn tag from
           (lemmas and inflections of English words)         lemminflect's tables, part of
                                                             speech from closed-class lists and
                                                             the word's context
``ko``     ``kiwipiepy`` (Kiwi) with ``kiwipiepy-model``     morphemes (stems, particles, endings)
``ja``     ``fugashi`` (MeCab) with ``unidic-lite``           UniDic short units
``zh``     ``jieba``                                        words; part of speech from jieba's
                                                             dictionary
other      the same tokenizer as ``en``, no lemmas           words
=========  ===============================================  ====================================

:func:`analyse` is the only entry point: ``analyse(text, label)`` -> :class:`Analysis`, where
``label`` is the block's language (``guard.language.language_label``). Parts of speech are the
Universal Dependencies set (``NOUN``, ``PROPN``, ``VERB``, ``ADJ``, ``ADV``, ``NUM``, ``PRON``,
``DET``, ``ADP``, ``AUX``, ``CCONJ``, ``SCONJ``, ``PART``, ``PUNCT``, ``SYM``, ``X``), mapped
from each analyser's own tag set (``Token.tag`` keeps the analyser's tag). Roles come from the
word tables of ``roles.toml`` (see :mod:`owlai_refine.guard.analysis.roles`).
"""

from __future__ import annotations

from owlai_refine.guard.analysis.core import analyse, load_time
from owlai_refine.guard.analysis.tokens import CONTENT, Analysis, Token

__all__ = ["CONTENT", "Analysis", "Token", "analyse", "load_time"]
