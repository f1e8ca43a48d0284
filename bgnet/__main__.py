"""``python -m bgnet``: the ``bgnet`` command line."""

import sys

from bgnet.cli.main import program

sys.exit(program())
