"""What the applications (the ``refine`` command, :mod:`owlai_refine.cli`, and the operator
tools, :mod:`owlai_refine.ops`) do to the world outside the library, written once for both:
files (:mod:`.files`: reading a report, atomic writes, backups, the ledger's default place) and
logging configuration (:mod:`.logs`). The library (the pipeline) imports neither."""
