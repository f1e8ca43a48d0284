"""Match files: the ``.mat`` and ``.sgf`` formats behind one registry that sniffs,
reads and writes them, the value types of a recorded match, and the replay checker
that proves a file's moves legal. Builds on ``play`` for the game loop that records
games as it plays them.
"""
