"""The public names of ``bgnet.io`` in one place (and under the old name ``bgnet.matchfile``).

Each lives in its own module: the values in ``record``, the registry and file I/O in
``formats``, ``.mat`` in ``mat``, ``.sgf`` in ``sgf``, the replay checker in
``replay`` and the recorder in ``recorder``. Library code imports from those.
"""

from __future__ import annotations

from bgnet.io.formats import FORMATS, MatchFormat, format_of, parse_match_text, read_match, register, write_match
from bgnet.io.mat import format_mat, parse_mat
from bgnet.io.record import Action, ActionKind, GameRecord, MatchFileError, MatchRecord
from bgnet.io.recorder import MatchRecorder, action_between, play_and_record
from bgnet.io.replay import ReplayedGame, ReplayStep, replay_game, replay_games, replay_match
from bgnet.io.sgf import format_sgf, parse_sgf

__all__ = ["FORMATS", "Action", "ActionKind", "GameRecord", "MatchFileError", "MatchFormat", "MatchRecord",
           "MatchRecorder", "ReplayStep", "ReplayedGame", "action_between", "format_mat", "format_of", "format_sgf",
           "parse_mat", "parse_match_text", "parse_sgf", "play_and_record", "read_match", "register", "replay_game",
           "replay_games", "replay_match", "write_match"]
