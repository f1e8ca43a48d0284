"""The ``bgnet`` command: one argparse front end per subcommand (moves, hint, cube,
play, rollout, analyze, serve, eval, train). Each parses its arguments into a typed
request from ``bgnet.app``, prints the answer, and maps ``BgnetError`` alone to one
sentence on stderr and exit code 2; anything else is a bug and shows its traceback.
"""
