"""Repository entry point for ``python -m eval``; the evaluator lives in :mod:`bgnet.evaluation`."""
