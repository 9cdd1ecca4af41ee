"""Child process of the embedded server: run llama.cpp's HTTP server until SIGTERM/SIGINT.

usage: python -m owlai_refine.serve.local.child MODEL.gguf PORT SLOTS CTX_PER_SLOT THREADS ALIAS

Started by :func:`owlai_refine.serve.local.local_server`; not meant to be run by hand.
"""

from __future__ import annotations

import signal
import sys
import threading


def main(argv: list[str]) -> int:
    """Serve ``MODEL`` on ``127.0.0.1:PORT`` with ``SLOTS`` parallel sequences, ``CTX_PER_SLOT``
    tokens of context each, ``THREADS`` CPU threads, answering to the model name ``ALIAS``.
    Returns 0 after SIGTERM or SIGINT."""
    import xllamacpp  # noqa: PLC0415 - optional extra, imported only in the child

    model, port, slots, ctx, threads, alias = argv
    params = xllamacpp.CommonParams()
    params.model.path = model
    params.hostnames = ["127.0.0.1"]
    params.port = int(port)
    params.n_parallel = int(slots)
    params.n_ctx = int(ctx) * int(slots)  # llama.cpp's n_ctx is the total, shared by the slots
    params.model_alias = {alias}
    params.endpoint_metrics = True  # /metrics: llamacpp:requests_processing, for the curious
    params.cpuparams.n_threads = int(threads)
    params.cpuparams_batch.n_threads = int(threads)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server = xllamacpp.Server(params)
    stop.wait()
    del server
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
