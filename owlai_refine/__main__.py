"""``python -m owlai_refine`` and the ``refine`` command: :func:`owlai_refine.cli.main`, itself
imported under a Ctrl-C handler, so that a KeyboardInterrupt while the CLI's modules load is one
line and exit 130 (``Exit.INTERRUPTED``), never a traceback."""

import sys

_INTERRUPTED = 130  # owlai_refine.exit_codes.Exit.INTERRUPTED, not imported: nothing loads first


def main() -> int:
    """Load the CLI and run it on ``sys.argv[1:]``; return the exit code."""
    try:
        from owlai_refine.cli import main as cli_main  # noqa: PLC0415 - inside the handler
    except KeyboardInterrupt:
        sys.stderr.write("refine: interrupted; no output was written\n")
        return _INTERRUPTED
    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
