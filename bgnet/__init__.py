"""bgnet: a backgammon neural-network bot and TD(lambda) self-play trainer."""

from bgnet.movegen import generate_afterstates, legal_moves, parse_dice
from bgnet.notation import AmbiguousMoveError, IllegalMoveError, InvalidMoveError, Move
from bgnet.position import BAR, OFF, STARTING_POSITION, InvalidPositionError, Position
from bgnet.probs import Probs

__all__ = [
    "BAR", "OFF", "STARTING_POSITION", "AmbiguousMoveError", "IllegalMoveError", "InvalidMoveError",
    "InvalidPositionError", "Move", "Position", "Probs", "generate_afterstates", "legal_moves", "parse_dice",
]
