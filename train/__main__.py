"""``python -m train --config configs/NAME.toml [--key=value ...]``: a thin entry point for ``bgnet train``."""

import sys

from bgnet.trainer.selfplay import main

sys.exit(main())
