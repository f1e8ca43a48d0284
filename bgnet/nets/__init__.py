"""Evaluators: the torch model and its checkpoints, the torch-free fast evaluator
used by every search, pubeval, the exact bear-off databases and the fitted play
ranker that judges luck. A net maps boards to five probabilities and knows nothing of
the cube or the score. Imports ``core`` and ``features``.
"""
