"""``python -m owlai_refine``: the same as the ``refine`` command."""

import sys

from owlai_refine.cli import main

sys.exit(main())
