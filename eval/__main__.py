"""``python -m eval A B [...]``: a thin entry point for ``bgnet eval`` (code in :mod:`bgnet.evaluation`)."""

import sys

from bgnet.cli.eval import main

sys.exit(main())
