"""Match files: the ``.mat`` and ``.sgf`` formats behind one registry that sniffs,
reads and writes them (``formats``), the value types of a recorded match (``record``),
the replay checker that proves a file's moves legal (``replay``) and the recorder of
games played by ``bgnet.play.game.play_game`` (``recorder``).
"""
