"""The board and its rules, with no net, no cube and no score: positions and their
Position ID / Match ID / XGID text forms, move notation, legal-move generation (numba
kernels over integer boards), game ends and the opening roll, the five outcome
probabilities (``Probs``), the ``Evaluator``/``Agent`` roles, shipped data files and
every error class's base, ``BgnetError``. Everything else in bgnet builds on this.
"""
