"""``refine bench``: a client-side concurrency sweep against one running server, and
``--copy-edit``: decode speed on the refiner's own workload.

:mod:`.sweep` runs the sweep: input lengths (:mod:`.lengths`), prompts of those lengths
(:mod:`.prompts`), one step at a time (:mod:`.step`), figures and the knee (:mod:`.report`),
the text printed (:mod:`.render`), ``vllm bench serve`` beside it (:mod:`.crosscheck`) and
the PNG (:mod:`.plot`). :mod:`.copyedit` is ``--copy-edit`` and ``--compare-tpot``.
"""
