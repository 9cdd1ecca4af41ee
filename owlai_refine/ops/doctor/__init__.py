"""``refine doctor``: check a self-hosted vLLM server against the settings owlai-refine needs.

:mod:`.checks` holds the checks (the server's ``/v1/models`` and ``/metrics``, its startup log
read by :mod:`owlai_refine.ops.serverlog`); :mod:`.kvplan` the ``kv-plan`` check, the plan of
:mod:`owlai_refine.ops.plan` against the KV figures the log states.
"""
