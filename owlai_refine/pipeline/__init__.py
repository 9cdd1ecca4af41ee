"""The pipeline: where a block is cut out, sent, judged and put back.

``parse`` (report -> blocks) and ``skips`` (the blocks never sent), ``prompt`` (block -> chat
messages), ``orchestrate`` (one report: plan, dispatch, assemble), ``rewrap`` (a reply at its
block's line breaks), ``splice`` (new block texts -> report), ``verify`` (after the splice), and
``refiner`` (the long-lived :class:`~owlai_refine.pipeline.refiner.Refiner` that owns clients,
endpoints and limiters). Nothing is imported here: each module loads on first use.
"""
