"""``python -m train --config configs/NAME.toml [--key=value ...]``: TD(lambda) self-play training."""

import sys

from train.selfplay import main

sys.exit(main())
