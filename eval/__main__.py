"""``python -m eval A B [...]``: a thin entry point for ``bgnet eval`` in the repository (code in bgnet.cli.eval)."""

import sys

from bgnet.cli.eval import main

sys.exit(main(prog="python -m eval"))
