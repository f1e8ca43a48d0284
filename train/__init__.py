"""Repository entry point for ``python -m train``; the trainer lives in :mod:`bgnet.trainer`."""
