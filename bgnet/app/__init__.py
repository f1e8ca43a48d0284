"""What a user asks and what bgnet answers, shared by every front end: typed requests
(``HintRequest``, ``CubeRequest``, ``RolloutRequest``, ...) built by the command line and
by the HTTP server alike, the answers they get, and match analysis. No argparse and
no HTTP here: front ends translate their input into these requests.
"""
