"""``python -m train --config NAME [--key=value ...]``: a thin entry point for ``bgnet train`` in the repository."""

import sys

from bgnet.cli.train import main

sys.exit(main(prog="python -m train"))
