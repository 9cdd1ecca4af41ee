"""Operator tools: ``refine stats``, ``refine doctor``, ``refine bench``, ``refine plan``.

Each command has an entry function taking its arguments (without the command words) and
returning the exit code; the core CLI dispatches ``refine stats ...`` to :func:`run_stats` etc.
Output goes to stdout; errors are one line on stderr, never a traceback. Everything printed,
stdout and stderr, is scrubbed of ``$OPENAI_API_KEY`` and of passwords in URL arguments
(a server's error body may echo the ``Authorization`` header). Exit codes:

====  ==============================================================================
0     done (``doctor``: no check failed; warnings allowed)
1     a bug in owlai-refine (the line says so)
2     usage or configuration error (bad flag, model not served, matplotlib missing)
3     unreadable input: a ledger or server log that cannot be read, a server that cannot
      be reached or answers garbage
4     ``doctor``: at least one check failed; ``bench``: its ``--plot`` file cannot be written
      (checked before the sweep)
====  ==============================================================================

Each tool is a subpackage that owns its command line: ``stats/``, ``doctor/``, ``bench/`` and
``plan/``, each with a ``command`` module whose ``main`` builds the parser and runs. What they
share is at this level: :mod:`.console` (the parser, output lines, the API key),
:mod:`.ledger`, :mod:`.quantiles` and :mod:`.serverlog`; a server is read through
:mod:`owlai_refine.serve.server` and :mod:`owlai_refine.serve.metrics`. This
module is the dispatcher: it loads a tool only when asked for, under :func:`_guard`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable

from owlai_refine.errors import RefineError
from owlai_refine.exit_codes import Exit
from owlai_refine.ops.console import EXIT_CHECK_FAILED, err
from owlai_refine.scrub import scrubbed_stream, url_secrets

# Each command's module is imported inside its entry function, under the guard, so that
# ``refine stats`` and ``refine plan`` start without the HTTP client, anyio or
# prometheus_client, and a Ctrl-C while a tool loads is the tool's one line.

__all__ = ["EXIT_CHECK_FAILED", "run_bench", "run_doctor", "run_plan", "run_stats"]


def _guard(prog: str, argv: list[str], body: Callable[[], int]) -> int:
    """``body()``'s exit code, every error one line on stderr; stdout and stderr scrubbed of
    the API key and of passwords in the URLs among ``argv`` meanwhile."""
    secrets = [os.environ.get("OPENAI_API_KEY", ""), *url_secrets(argv)]
    with (
        contextlib.redirect_stdout(scrubbed_stream(sys.stdout, secrets)),
        contextlib.redirect_stderr(scrubbed_stream(sys.stderr, secrets)),
    ):
        return _guarded(prog, body)


def _guarded(prog: str, body: Callable[[], int]) -> int:
    try:
        return body()
    except SystemExit as exc:  # --help / --version from argparse
        return exc.code if isinstance(exc.code, int) else 0
    except RefineError as exc:  # the same codes as refine itself (cli.Exit)
        err(f"{prog}: error: {exc}")
        return Exit.for_error(exc)
    except KeyboardInterrupt:
        err(f"{prog}: interrupted")
        return Exit.INTERRUPTED
    except Exception as exc:  # the last line of defence: one line, exit 1
        err(f"{prog}: internal error (a bug, please report): {type(exc).__name__}: {exc}")
        return Exit.BUG


def run_stats(argv: list[str]) -> int:
    """``refine stats [LOG...] [--json]``: figures from usage-ledger files (see
    :mod:`owlai_refine.ops.stats.figures`); with no ``LOG``, the default ledger every run at a
    terminal appends to (:func:`~owlai_refine.shell.files.default_ledger_path`). Returns the
    exit code: 3 when a file cannot be read, the default ledger does not exist, or no file
    holds a single ``refine.call`` line (not a usage ledger)."""

    def body() -> int:
        from owlai_refine.ops.stats.command import main

        return main(argv)

    return _guard("refine stats", argv, body)


def run_doctor(argv: list[str]) -> int:
    """``refine doctor [--base-url URL] [--server-log FILE] [--concurrency N]``: one
    pass/warn/fail line per check (see :mod:`owlai_refine.ops.doctor.checks`). ``--base-url``,
    ``--model`` and ``--concurrency`` default to ``$OWLAI_REFINE_BASE_URL``,
    ``$OWLAI_REFINE_MODEL`` and ``$OWLAI_REFINE_CONCURRENCY``, as for ``refine`` itself. Exit 0
    when no check fails, 4 when one does, 2 when no server is named."""

    def body() -> int:
        from owlai_refine.ops.doctor.command import main

        return main(argv)

    return _guard("refine doctor", argv, body)


def run_bench(argv: list[str]) -> int:
    """``refine bench --base-url URL --model NAME ...``: client-side concurrency sweep (see
    :mod:`owlai_refine.ops.bench.sweep`; ``--copy-edit``: :mod:`owlai_refine.ops.bench.copyedit`).
    Progress and warnings go to stderr; the table (or JSON) to stdout."""

    def body() -> int:
        from owlai_refine.ops.bench.command import main

        return main(argv)

    return _guard("refine bench", argv, body)


def run_plan(argv: list[str]) -> int:
    """``refine plan --config PATH ...``: KV cache size and maximum concurrency before a vLLM
    start (see :mod:`owlai_refine.ops.plan.kvcache`). Exit 0 with a plan (whatever its
    verdict), 2 for flags that make no setup, 3 for an unreadable config or ledger."""

    def body() -> int:
        from owlai_refine.ops.plan.command import main

        return main(argv)

    return _guard("refine plan", argv, body)
