"""The errors bgnet raises: one base, ``BgnetError`` (a ``ValueError``), and the engine's own kinds.

Every error class in the library derives from ``BgnetError``, so a caller can
catch everything bgnet refuses with one ``except`` clause, and the CLI and the
web server turn any of them into one plain sentence. Modules higher up the stack
(cube, match, game, search, hint, agents, the trainer) define their own
subclasses next to the code that raises them.
"""

from __future__ import annotations


class BgnetError(ValueError):
    """Base of every error bgnet raises for bad input or an impossible request."""


class InvalidPositionError(BgnetError):
    """A position that cannot occur in backgammon."""


class InvalidMoveError(BgnetError):
    """Move text that cannot be read."""


class IllegalMoveError(BgnetError):
    """A well-formed move that is not legal in the position with the dice."""


class AmbiguousMoveError(BgnetError):
    """Move text that fits more than one legal play."""


class InvalidDiceError(BgnetError):
    """Dice that are not two numbers from 1 to 6."""


class FormatError(BgnetError):
    """A Position ID, Match ID or XGID that cannot be read or written."""


class GameNotOverError(BgnetError):
    """A question only a finished game answers (its result), asked of a game still in play."""


class NotAnEvaluatorError(BgnetError):
    """An object given as an evaluator that is neither an Evaluator nor a function of boards."""


class ProbsShapeError(BgnetError):
    """Chances given as something other than the five (win, wg, wbg, lg, lbg)."""
