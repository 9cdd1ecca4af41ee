"""``refine stats``: input and output token figures from the usage ledger.

:mod:`.figures` computes and prints them from the ledger's call lines
(:mod:`owlai_refine.ops.ledger`).
"""
