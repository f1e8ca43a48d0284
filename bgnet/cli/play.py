"""A terminal game or match against a bot: reads the player's commands line by line, writes the board and the bot's
actions.

The rules (cube, Crawford game, scoring) come from ``bgnet.play.game``; this module only
talks. The player is X and sits in seat 0; the bot is O. Each prompt ends with
``"> "`` and no newline, and every command is one line, so a script can drive a
whole game through pipes. Commands: a play in standard notation (``24/18 13/11``),
``roll`` or ``double`` before rolling when the cube is available, ``take``,
``pass`` or (with beavers) ``beaver`` when doubled, ``raccoon`` or ``play`` after a
beaver when raccoons are allowed, ``hint``, ``board``, ``help`` and ``quit``.

Exit status: 0 when the game or match ends or the player types ``quit``;
``EXIT_INPUT_ENDED`` (1) when the input ends first (a closed stdin, the end of a
script): one sentence on stderr says the game was left unfinished, after the games
so far are saved where ``--save`` asks.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable, TextIO

import numpy as np

from bgnet.play import game as g
from bgnet.play.agents import Agent
from bgnet.core.movegen import high_first, legal_moves
from bgnet.core.rules import Result, roll_opening
from bgnet.cube.match import DEFAULT_MONEY_RULES, MatchState
from bgnet.io.formats import write_match
from bgnet.io.recorder import MatchRecorder
from bgnet.play.search import ProbsFn

HUMAN, BOT = 0, 1
EXIT_INPUT_ENDED = 1
"""Exit status when the input ends before the game does (not 2: the command line itself was valid)."""
HINT_TOP = 5
_KIND = {Result.SINGLE: "a single game", Result.GAMMON: "a gammon", Result.BACKGAMMON: "a backgammon"}
HELP = ("Commands: a play such as '24/18 13/11' (bar/22, 6/off, 8/5(2) also work); 'roll' or 'double' before "
        "rolling; 'take', 'pass' or 'beaver' (if allowed) when doubled; 'raccoon' or 'play' after a beaver "
        "(if allowed); 'hint'; 'board'; 'quit'.")


class Quit(Exception):
    """The player typed quit."""


class InputEnded(Quit):
    """The input ended (end of file) while a command was awaited."""


@dataclass
class Session:
    """One terminal session: the bot, the dice, and where to read and write."""

    bot: Agent
    rules: g.Rules
    rng: np.random.Generator
    inp: TextIO
    out: TextIO
    probs_fn: ProbsFn | None = None
    """For hints (the bot's net); None when the bot gives no probabilities."""
    ply: int = 0
    """Search depth of the hints."""
    recorder: MatchRecorder | None = None
    """Records every state of the games for ``--save`` (``bgnet.io.recorder``); None: nothing is recorded."""

    # -- input and output ----------------------------------------------------------
    def say(self, text: str = "") -> None:
        """Write a line."""
        self.out.write(text + "\n")
        self.out.flush()

    def ask(self, prompt: str) -> str:
        """Prompt and read one command (trimmed); ``quit`` raises Quit, the end of input InputEnded."""
        self.out.write(prompt + "> ")
        self.out.flush()
        line = self.inp.readline()
        if not line:
            self.say()
            raise InputEnded
        text = line.strip()
        if text.lower() in ("quit", "q", "exit"):
            raise Quit
        return text

    def roll_dice(self) -> tuple[int, int]:
        """Two random dice."""
        a, b = self.rng.integers(1, 7, size=2)
        return int(a), int(b)

    def board(self, game: g.Game) -> None:
        """Draw the board from the player's side (X), with the score, cube and Position ID."""
        pos = game.position if game.turn == HUMAN else game.position.swap_sides()
        who = "X (you)" if game.turn == HUMAN else "O (bot)"
        drawing = str(pos).replace("X on roll", f"{who} on turn" if not game.is_over else "game over")
        self.say(drawing)
        self.say(f"Position ID {pos.position_id()} (your side)   {self.score_line(game)}")

    def score_line(self, game: g.Game) -> str:
        """Score and cube in words."""
        r = game.rules
        if r.is_money:
            where = "money game"
        else:
            tag = ", Crawford game" if game.crawford else (", post-Crawford" if game.post_crawford else "")
            where = f"{r.match_length}-point match, you {game.score[HUMAN]} - bot {game.score[BOT]}{tag}"
        owner = "centred" if game.owner is None else ("yours" if game.owner == HUMAN else "the bot's")
        return f"{where}; cube {game.cube} {owner}"

    # -- hints ---------------------------------------------------------------------
    def move_hint(self, game: g.Game) -> None:
        """Print the best plays for the player's roll."""
        if self.probs_fn is None:
            self.say("No hints: this bot gives no probabilities.")
            return
        from bgnet.play.hint import move_hint

        assert game.dice is not None
        state = game.match_state()
        hint = move_hint(self.probs_fn, game.position, game.dice, ply=self.ply, top=HINT_TOP,
                         state=None if state.is_money else state)
        self.say(hint.format())

    def cube_hint(self, game: g.Game) -> None:
        """Print the cube analysis from the point of view of the side on turn (the doubler when doubled)."""
        if self.probs_fn is None:
            self.say("No hints: this bot gives no probabilities.")
            return
        from bgnet.play.hint import cube_hint

        self.say(cube_hint(self.probs_fn, game.position, game.match_state(), ply=self.ply).format())

    # -- turns -----------------------------------------------------------------------
    def human_roll_phase(self, game: g.Game) -> g.Game:
        """Roll, or double first when the cube is available."""
        if not g.may_double(game):
            return g.roll(game, self.roll_dice())
        dead = g.dead_cube(game)
        prompt = ("Your turn: roll, double, hint or quit" if dead is None
                  else "Your turn: roll, hint or quit (dead cube)")
        while True:
            cmd = self.ask(prompt).lower()
            if cmd in ("", "roll", "r"):
                return g.roll(game, self.roll_dice())
            if cmd in ("double", "d"):
                if dead is not None:
                    self.say(f"You cannot double: {dead}.")
                    continue
                game = g.double(game)
                answer = g.allowed_answer(game, self.bot.cube_response(game.position, game.match_state()))
                self.say(f"You double to {2 * game.cube}. The bot {'passes' if answer == 'pass' else answer + 's'}"
                         + (f": the cube is now at {4 * game.cube}, the bot's." if answer == "beaver" else "."))
                game = g.respond(game, answer)
                if game.phase == "beavered":
                    game = self.human_raccoon(game)
                return game
            if cmd == "hint":
                self.cube_hint(game)
            elif cmd == "board":
                self.board(game)
            else:
                self.say(f"'{cmd}' is not a command here. " + HELP)

    def human_raccoon(self, game: g.Game) -> g.Game:
        """The bot beavered the player's double and raccoons are allowed: raccoon or play on."""
        while True:
            cmd = self.ask(f"Raccoon to {2 * game.cube} or play on? (raccoon, play, hint or quit)").lower()
            if cmd in ("raccoon", "r", "yes", "y"):
                game = g.raccoon(game, True)
                self.say(f"You raccoon: the cube is now at {game.cube}, yours.")
                return game
            if cmd in ("play", "p", "no", "n", "roll"):
                return g.raccoon(game, False)
            if cmd == "hint":
                self.cube_hint(game)
            else:
                self.say(f"'{cmd}' is not an answer: type raccoon or play.")

    def human_move(self, game: g.Game) -> g.Game:
        """Read plays until a legal one; a forced play (or none) is made for the player."""
        assert game.dice is not None
        d1, d2 = high_first(game.dice)  # printed as GNU Backgammon prints rolls
        moves = legal_moves(game.position, game.dice)
        if len(moves) == 1:
            text = moves[0].text
            self.say(f"You roll {d1}-{d2}: " + (f"the only play is {text}." if text else "you cannot move."))
            return g.play(game, moves[0])
        self.say(f"You roll {d1}-{d2}.")
        while True:
            text = self.ask(f"Your move ({d1}-{d2})")
            lowered = text.lower()
            if lowered == "hint":
                self.move_hint(game)
            elif lowered == "board":
                self.board(game)
            elif lowered in ("help", "?"):
                self.say(HELP)
            else:
                try:
                    move = game.position.parse_move(text, game.dice)
                except ValueError as err:
                    self.say(f"Illegal move: {err}. Try again (or type hint).")
                    continue
                self.say(f"You play {move.text}.")
                return g.play(game, move)

    def human_answer(self, game: g.Game) -> g.Game:
        """The bot has doubled: take or pass."""
        self.say(f"The bot doubles to {2 * game.cube}.")
        beaver = g.may_beaver(game)
        choices = "take, pass, beaver, hint or quit" if beaver else "take, pass, hint or quit"
        while True:
            cmd = self.ask(f"Take or pass? ({choices})").lower()
            if cmd in ("take", "t", "pass", "p", "drop"):
                return g.respond(game, "take" if cmd.startswith("t") else "pass")
            if cmd in ("beaver", "b") and beaver:
                game = g.respond(game, "beaver")
                self.say(f"You beaver: the cube is now at {game.cube}, yours.")
                if game.phase == "beavered":
                    if g.wants_raccoon(self.bot, game.position, g.pre_beaver_state(game)):
                        game = g.raccoon(game, True)
                        self.say(f"The bot raccoons: the cube is now at {game.cube}, the bot's.")
                    else:
                        game = g.raccoon(game, False)
                return game
            if cmd in ("beaver", "b"):
                self.say("Beavers are not allowed here (the rules or the cube limit).")
            elif cmd == "hint":
                self.cube_hint(game)
            elif cmd == "board":
                self.board(game)
            else:
                self.say(f"'{cmd}' is not an answer: type {'take, pass or beaver' if beaver else 'take or pass'}.")

    def bot_turn(self, game: g.Game) -> g.Game:
        """The bot's decision in the roll or move phase."""
        if game.phase == "roll":
            if g.may_double(game) and self.bot.offers_double(game.position, game.match_state()):
                return self.human_answer(g.double(game))
            return g.roll(game, self.roll_dice())
        assert game.dice is not None
        move = self.bot.choose_move(game.position, game.dice, game.match_state())
        d1, d2 = high_first(game.dice)  # printed as GNU Backgammon prints rolls
        self.say(f"The bot rolls {d1}-{d2} and " + (f"plays {move.text}." if move.text else "cannot move."))
        return g.play(game, move)

    # -- game and match ----------------------------------------------------------------
    def opening(self) -> tuple[int, tuple[int, int]]:
        """Each side rolls one die until they differ (``roll_opening``); the higher die moves first with both."""
        opening = roll_opening(self.roll_dice)
        for mine, bots in opening.tries:
            self.say(f"Opening roll: you {mine}, the bot {bots}.")
        return opening.first, opening.dice

    def play_game(self, match: g.Match) -> g.Game:
        """One game from the opening roll to its end."""
        self.say(f"Game {match.games + 1}.")
        first, dice = self.opening()
        game = match.start(first, dice)
        if self.recorder is not None:
            self.recorder.start(game)
        self.board(game)
        while not game.is_over:
            before = game.phase
            if game.turn == HUMAN:
                game = {"roll": self.human_roll_phase, "move": self.human_move}[game.phase](game)
            else:
                game = self.bot_turn(game)
            if self.recorder is not None:
                self.recorder.observe(game)
            if before == "move":
                self.board(game)
        return game

    def run(self) -> int:
        """Play a money game, or a match to its end; returns the exit status (0, or ``EXIT_INPUT_ENDED``)."""
        from bgnet.cube.decision import rules_text

        match = g.Match(self.rules)
        self.say("You are X, the bot is O. " + HELP)
        self.say(f"Rules: {rules_text(MatchState(self.rules.match_length, rules=self.rules.cube_rules))}.")
        try:
            while True:
                game = self.play_game(match)
                res = game.result
                assert res is not None
                who = "You win" if res.winner == HUMAN else "The bot wins"
                passer = "the bot" if res.winner == HUMAN else "you"
                how = f"{passer} passed the double" if res.dropped else _KIND[res.kind]
                self.say(f"{who} {res.points} point{'s' if res.points != 1 else ''} ({how}).")
                match = match.record(game)
                if self.rules.is_money:
                    self.say("Game over.")
                    return 0
                self.say(f"Score: you {match.score[HUMAN]}, the bot {match.score[BOT]} "
                         f"({self.rules.match_length}-point match).")
                if match.is_over:
                    self.say("You win the match." if match.winner == HUMAN else "The bot wins the match.")
                    return 0
        except InputEnded:
            return EXIT_INPUT_ENDED
        except Quit:
            self.say("Goodbye.")
            return 0


def play_session(bot: Agent, *, length: int = 0, seed: int | None = None, inp: TextIO, out: TextIO,
                 probs_fn: ProbsFn | None = None, ply: int = 0,
                 rng_factory: Callable[[int | None], np.random.Generator] = np.random.default_rng,
                 rules: g.Rules | None = None, save: str | None = None, err: TextIO | None = None) -> int:
    """Play a money game (``length`` 0) or a ``length``-point match against ``bot``; returns the exit status.

    ``rules`` (Jacoby, beavers, raccoons, Holland) replaces ``length`` when given (default: ``length`` with the
    money defaults of every command, ``DEFAULT_MONEY_RULES``, for a money game); ``save`` writes the games
    played (also after ``quit`` or the end of the input) to a ``.mat`` or ``.sgf`` file. When the input ends
    first, one sentence goes to ``err`` (default stderr) and the status is ``EXIT_INPUT_ENDED``.
    """
    if length < 0:
        raise g.GameRuleError(f"the match length must be 0 (a money game) or more, got {length}")
    if rules is None:
        rules = g.Rules(match_length=length, cube_rules=DEFAULT_MONEY_RULES.for_play(length == 0))
    if rules.match_length:
        from bgnet.cube.met import default_met

        default_met().equity(rules.match_length, rules.match_length)  # one sentence when beyond the table's reach
    recorder = MatchRecorder(("You", "bgnet"), rules) if save else None
    status = Session(bot, rules, rng_factory(seed), inp, out, probs_fn, ply, recorder=recorder).run()
    if save and recorder is not None:
        write_match(recorder.record(), save)
    if status == EXIT_INPUT_ENDED:
        saved = f" (the games so far are saved to {save})" if save else ""
        print(f"bgnet play: the input ended before the game did, so it is left unfinished{saved}.",
              file=err or sys.stderr)
    return status
