"""Recording our own games as a ``MatchRecord``: ``MatchRecorder`` turns the states a game passes through into actions.

It watches any game loop: ``observe`` each new state (the terminal game of
``bgnet.cli.play``, the lock-step duels of ``bgnet.sim.duel``), or pass it as the
observer of ``bgnet.play.game.play_game`` (``play_and_record``). Write the record
with ``bgnet.io.formats.write_match``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

from bgnet.core.movegen import legal_moves
from bgnet.core.rules import roll_opening
from bgnet.io.record import Action, GameRecord, MatchFileError, MatchRecord, numbered
from bgnet.play import game as g


def action_between(before: g.Game, after: g.Game, number: int = 0) -> list[Action]:
    """The actions that turn the game ``before`` into ``after`` (consecutive states of ``bgnet.play.game``).

    A roll alone records nothing (the dice go with the play); a double answered in
    the same step gives both the double and the answer.
    """
    seat = before.turn
    if before.phase == "move":
        assert before.dice is not None
        target = after.position if after.is_over else after.position.swap_sides()
        for m in legal_moves(before.position, before.dice):
            if m.after == target:
                d1, d2 = before.dice
                return [Action(seat, "move", (max(d1, d2), min(d1, d2)), m.steps, number=number)]
        raise MatchFileError("the recorded play is not a legal play of the dice")
    out: list[Action] = []
    if before.phase == "beavered":
        return [Action(seat, "raccoon", cube=after.cube, number=number)] if after.cube == 2 * before.cube else []
    if before.phase == "roll" and after.phase != "move":
        out.append(Action(seat, "double", cube=2 * before.cube, number=number))
        before = replace(before, phase="doubled")
    if before.phase == "doubled" and after.phase != "doubled":
        if after.is_over:
            out.append(Action(1 - seat, "drop", number=number))
        elif after.cube == 4 * before.cube or (after.cube == 8 * before.cube):
            out.append(Action(1 - seat, "beaver", cube=4 * before.cube, number=number))
            if after.cube == 8 * before.cube:
                out.append(Action(seat, "raccoon", cube=8 * before.cube, number=number))
        else:
            out.append(Action(1 - seat, "take", number=number))
    return out


@dataclass
class MatchRecorder:
    """Builds a MatchRecord from the states a game loop passes through (``observe`` each new state)."""

    players: tuple[str, str]
    rules: g.Rules
    games: list[GameRecord] = field(default_factory=list)
    _actions: list[Action] = field(default_factory=list)
    _last: g.Game | None = None

    def start(self, game: g.Game) -> None:
        """A new game begins in state ``game`` (its opening roll in the move phase)."""
        self._actions = []
        self._last = game

    def observe(self, game: g.Game) -> None:
        """The game has moved on to ``game``; records what happened in between (and the end of the game)."""
        if self._last is None:
            self.start(game)
            return
        if game != self._last:
            self._actions += action_between(self._last, game)
        self._last = game
        if game.is_over:
            assert game.result is not None
            self.games.append(GameRecord(len(self.games) + 1, game.score, numbered(self._actions),
                                         game.result.winner, game.result.points, crawford=game.crawford))
            self._last = None

    def record(self) -> MatchRecord:
        """The match so far (a game in progress is included, unfinished)."""
        games = list(self.games)
        if self._last is not None and self._actions:
            games.append(GameRecord(len(games) + 1, self._last.score, numbered(self._actions)))
        return MatchRecord(players=self.players, match_length=self.rules.match_length, games=tuple(games),
                           jacoby=self.rules.jacoby, beavers=self.rules.beavers)


    def __call__(self, event: g.GameEvent) -> None:
        """As the observer of ``play_game``: records each step's new state (the "end" adds nothing new)."""
        if event.kind != "end":
            self.observe(event.after)


def play_and_record(players: Sequence[g.Player], rules: g.Rules, dice: Callable[[], tuple[int, int]],
                    names: tuple[str, str] = ("Player 0", "Player 1"), games: int = 1) -> MatchRecord:
    """Play ``games`` games (or a match to its end) between ``players`` with ``dice()`` and return them recorded.

    Each game opens with ``roll_opening`` and is played by ``play_game`` with the recorder as its
    observer; meant for writing duels and self-play as match files.
    """
    rec = MatchRecorder(names, rules)
    match = g.Match(rules)
    for _ in range(games):
        if match.is_over:
            break
        opening = roll_opening(dice)
        game = match.start(opening.first, opening.dice)
        rec.start(game)
        match = match.record(g.play_game(game, (players[0], players[1]), dice, observer=rec))
    return rec.record()
