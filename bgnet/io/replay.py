"""The replay checker: every game of a match played again through ``bgnet.play.game``.

Each play must be one of ``legal_moves``, each cube action allowed by the rules,
each score line equal to the points won so far. A problem raises
``MatchFileError``, one sentence naming the game and move, which carries what was
read before it (``partial``); with ``lenient=True`` a bad game is skipped, its
sentence kept in ``problems``. Every format's reader ends here.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

from bgnet.core.movegen import legal_moves
from bgnet.core.notation import Move, Step, apply_pairs, format_steps, parse_move
from bgnet.core.position import Position
from bgnet.io.record import Action, GameRecord, MatchFileError, MatchRecord
from bgnet.play import game as g


@dataclass(frozen=True)
class ReplayStep:
    """One action with the game just before it: a move's state is its roll phase (or the opening's move phase)."""

    action: Action
    before: g.Game
    move: Move | None = None
    """The legal play a "move" action resolved to."""


@dataclass(frozen=True)
class ReplayedGame:
    """A game replayed through ``bgnet.play.game``: every step and the final state."""

    record: GameRecord
    steps: tuple[ReplayStep, ...]
    final: g.Game


def _resolve(pos: Position, dice: tuple[int, int], steps: tuple[Step, ...]) -> Move | None:
    """The legal play whose afterstate the written one-die steps reach (each landing hits), or None.

    Steps are tried in the order written, then in any other order (files differ in
    how they sort them); a written chain that jumps several pips (``13/7``) falls
    back to ``parse_move``'s reading.
    """
    moves = legal_moves(pos, dice)
    if not steps:
        return moves[0] if moves[0].is_empty else None
    by_after = {m.after: m for m in moves}
    for perm in dict.fromkeys(itertools.permutations(steps)):
        after = apply_pairs(pos, perm)
        if after is not None and after in by_after:
            return by_after[after]
    try:
        return parse_move(pos, format_steps(steps), dice)
    except ValueError:
        return None


def _who(match: MatchRecord, player: int) -> str:
    """The name of seat ``player``, for messages."""
    return match.players[player]


def replay_game(match: MatchRecord, record: GameRecord, crawford: bool, post_crawford: bool,
                source: str = "the file") -> ReplayedGame:
    """Replay one game through the rules; a MatchFileError names the game and move of the first problem."""
    where = f"{source}, game {record.number}"
    rules = match.rules
    steps: list[ReplayStep] = []
    actions = record.actions
    moves = [a for a in actions if a.kind == "move"]
    if not actions:
        raise MatchFileError(f"{where}: the game has no moves")
    if actions[0].kind != "move":
        raise MatchFileError(f"{where}, move {actions[0].number}: the game must start with the opening roll, "
                             f"not a {actions[0].kind}")
    first = actions[0]
    assert first.dice is not None and moves
    if first.dice[0] == first.dice[1]:
        raise MatchFileError(f"{where}, move {first.number}: the opening roll {first.dice[0]}{first.dice[1]} "
                             "cannot be a double")
    try:
        game = g.new_game(rules, first.player, first.dice, record.score, crawford=crawford,
                          post_crawford=post_crawford)
    except g.GameRuleError as err:
        raise MatchFileError(f"{where}: {err}") from None
    for i, action in enumerate(actions):
        at = f"{where}, move {action.number}"
        name = _who(match, action.player)
        if game.is_over:
            raise MatchFileError(f"{at}: {name}'s {action.kind} comes after the game has ended")
        try:
            if action.kind == "move":
                if game.phase == "beavered":
                    game = g.raccoon(game, False)
                if game.phase == "doubled":
                    raise MatchFileError(f"{at}: {name} rolls while a double waits for an answer")
                if game.turn != action.player:
                    raise MatchFileError(f"{at}: {name} rolls, but it is {_who(match, game.turn)}'s turn")
                before = game
                if i > 0:
                    assert action.dice is not None
                    game = g.roll(game, action.dice)
                elif action.player != game.turn:  # pragma: no cover - new_game takes first.player
                    raise MatchFileError(f"{at}: the opening player is wrong")
                assert game.dice is not None
                move = _resolve(game.position, game.dice, action.steps)
                if move is None:
                    shown = " ".join(f"{a}/{b}" for a, b in action.steps) or "no play"
                    raise MatchFileError(f"{at}: {name}'s {game.dice[0]}{game.dice[1]}: {shown} is not a legal play "
                                         f"in this position")
                steps.append(ReplayStep(action, before, move))
                game = g.play(game, move)
            elif action.kind == "double":
                if game.phase == "beavered":
                    game = g.raccoon(game, False)
                if game.turn != action.player:
                    raise MatchFileError(f"{at}: {name} doubles, but it is {_who(match, game.turn)}'s turn")
                if game.phase != "roll" or not g.may_double(game):
                    raise MatchFileError(f"{at}: {name} may not double here (no cube access, the Crawford game, "
                                         "or a double already pending)")
                if action.cube and action.cube != 2 * game.cube:
                    raise MatchFileError(f"{at}: {name} doubles to {action.cube}, but the cube is at {game.cube}")
                steps.append(ReplayStep(action, game))
                game = g.double(game)
            elif action.kind in ("take", "drop", "beaver"):
                if game.phase != "doubled" or action.player != game.opponent:
                    raise MatchFileError(f"{at}: {name} answers a double that was not offered to him")
                if action.kind == "beaver" and not rules.beavers:
                    raise MatchFileError(f"{at}: {name} beavers, but beavers are not allowed in this "
                                         f"{'match' if match.match_length else 'session'}")
                steps.append(ReplayStep(action, game))
                game = g.respond(game, {"take": "take", "drop": "pass", "beaver": "beaver"}[action.kind])
            else:  # raccoon
                if game.phase != "beavered" or action.player != game.turn:
                    raise MatchFileError(f"{at}: {name} raccoons without a beaver to answer")
                steps.append(ReplayStep(action, game))
                game = g.raccoon(game, True)
        except g.GameRuleError as err:
            raise MatchFileError(f"{at}: {err}") from None
    if game.phase == "beavered":
        game = g.raccoon(game, False)
    resigned = False
    end = f"{where}, the end"
    if game.is_over:
        assert game.result is not None
        if record.winner is not None and (record.winner, record.points) != (game.result.winner, game.result.points):
            raise MatchFileError(f"{end}: the file says {_who(match, record.winner)} wins {record.points} points, "
                                 f"but the play gives {_who(match, game.result.winner)} {game.result.points}")
        winner, points = game.result.winner, game.result.points
    elif record.winner is not None:
        if record.points not in (game.cube, 2 * game.cube, 3 * game.cube):
            raise MatchFileError(f"{end}: {_who(match, record.winner)} wins {record.points} points by resignation, "
                                 f"but with the cube at {game.cube} a resignation is worth {game.cube}, "
                                 f"{2 * game.cube} or {3 * game.cube}")
        winner, points, resigned = record.winner, record.points, True
    else:
        winner, points = None, 0
    done = replace(record, winner=winner, points=points, resigned=resigned, crawford=crawford)
    return ReplayedGame(done, tuple(steps), game)


def replay_match(match: MatchRecord, *, lenient: bool = False, source: str = "the file") -> MatchRecord:
    """Check every game of ``match`` by replay and fill in results and Crawford flags (see ``replay_game``)."""
    return replay_all(match, lenient=lenient, source=source)[0]


def replay_games(match: MatchRecord, source: str = "the match") -> list[ReplayedGame]:
    """Every game of a (read) match replayed, with the state before each action, for analysis."""
    return replay_all(match, lenient=False, source=source)[1]


def replay_all(match: MatchRecord, *, lenient: bool, source: str) -> tuple[MatchRecord, list[ReplayedGame]]:
    """The checked match (as ``replay_match``) and every game replayed (as ``replay_games``), in one pass."""
    n = match.match_length
    done: list[GameRecord] = []
    replayed: list[ReplayedGame] = []
    problems = list(match.problems)
    score = (0, 0)
    crawford_played = False
    skipped_before = bool(match.games) and match.games[0].number != 1  # a match read leniently may miss games
    previous = match.games[0].number - 1 if match.games else 0
    for record in match.games:
        where = f"{source}, game {record.number}"
        skipped_before = skipped_before or record.number != previous + 1
        previous = record.number
        try:
            written = record.score
            if written == (-1, -1):
                written = score
            if written != score and not skipped_before:
                raise MatchFileError(f"{where}: the score line says {written[0]}-{written[1]}, but the games before "
                                     f"give {score[0]}-{score[1]}")
            if n and max(written) >= n:
                raise MatchFileError(f"{where}: a score of {written[0]}-{written[1]} has already ended the "
                                     f"{n}-point match")
            state = g.Match(match.rules, written, crawford_played, len(done))
            crawford = match.crawford_rule and state.next_is_crawford
            post = crawford_played or (n > 0 and not match.crawford_rule)
            game = replay_game(match, replace(record, score=written), crawford, post, source)
        except MatchFileError as err:
            if not lenient:
                partial = replace(match, games=tuple(done), problems=tuple(problems))
                raise MatchFileError(str(err), partial) from None
            problems.append(str(err))
            skipped_before = True
            continue
        skipped_before = False
        done.append(game.record)
        replayed.append(game)
        crawford_played = crawford_played or crawford
        if game.record.winner is not None:
            s = list(written)
            s[game.record.winner] += game.record.points
            score = (s[0], s[1])
        else:
            score = written
    return replace(match, games=tuple(done), problems=tuple(problems)), replayed
