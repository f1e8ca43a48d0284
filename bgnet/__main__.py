"""``python -m bgnet``: the ``bgnet`` command line."""

import sys

from bgnet.cli import main

sys.exit(main())
