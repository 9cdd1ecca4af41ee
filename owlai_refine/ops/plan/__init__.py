"""``refine plan``: the KV cache a vLLM server will have, before starting it.

:mod:`.modelarch` reads a model's ``config.json`` into its architecture, :mod:`.kvcache` is
the arithmetic (pure), :mod:`.command` the command line around it (files in, text out; the
GPU presets in ``gpus.json`` beside it).
"""
