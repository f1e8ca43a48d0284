"""``bgnet play`` driven line by line through pipes: a whole money game and a short match to their ends,
illegal moves re-prompted, hints on request, the cube, the Crawford game, and one-line errors for bad options."""

from __future__ import annotations

import io
import os
import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bgnet import Position, legal_moves
from bgnet.cli.play import EXIT_INPUT_ENDED
from bgnet.io.formats import read_match

ROOT = Path(__file__).resolve().parents[1]
PROMPT = "> "


class Driver:
    """Runs ``bgnet play`` and answers its prompts; keeps everything it printed."""

    def __init__(self, *args: str) -> None:
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen([sys.executable, "-m", "bgnet", "play", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env)
        self.transcript = ""

    def read_prompt(self, timeout: float = 120.0) -> str | None:
        """Output up to the next prompt (returned without it), or None once the program has exited."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        chunk = b""
        deadline = time.monotonic() + timeout
        while True:
            if chunk.decode(errors="replace").endswith(PROMPT):
                text = chunk.decode()
                self.transcript += text
                return text[: -len(PROMPT)]
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                self.proc.kill()
                raise AssertionError("bgnet play stopped answering:\n" + self.transcript[-3000:] + chunk.decode())
            data = os.read(fd, 65536)
            if not data:
                self.transcript += chunk.decode()
                return None
            chunk += data

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.transcript += line + "\n"
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()

    def finish(self) -> int:
        """The exit status, after closing the input."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        return self.proc.wait(timeout=60)


def last_position(text: str) -> Position:
    """The position of the last board drawn (its Position ID line, from the player's side)."""
    ids = re.findall(r"Position ID (\S+) \(your side\)", text)
    assert ids, text
    return Position.from_position_id(ids[-1])


def answer(prompt: str, transcript: str, double: bool, take: bool) -> str:
    """The scripted player's reply to ``prompt``: the first legal play, roll (or double), take (or pass)."""
    move = re.search(r"Your move \((\d)-(\d)\)$", prompt)
    if move:
        return legal_moves(last_position(transcript), (int(move.group(1)), int(move.group(2))))[0].text
    if prompt.startswith("Your turn: roll, double"):
        return "double" if double else "roll"
    if prompt.startswith("Your turn: roll, hint or quit (dead cube)"):
        return "roll"
    if prompt.startswith("Take or pass?"):
        return "take" if take else "pass"
    raise AssertionError(f"unexpected prompt {prompt!r}")


def drive(driver: Driver, *, double: bool = False, take: bool = True, probe: bool = True) -> int:
    """Answer every prompt until the program ends; returns the number of answers."""
    probed = not probe
    for n in range(3000):
        out = driver.read_prompt()
        if out is None:
            return n
        prompt = out.splitlines()[-1] if out.splitlines() else ""
        move = re.search(r"Your move \((\d)-(\d)\)$", prompt)
        if move and not probed:
            probed = True
            driver.send("24/1 13/1")  # never legal: a clear message and the prompt again
            again = driver.read_prompt()
            assert again is not None and "Illegal move" in again and again.endswith(prompt)
            driver.send("hint")
            hinted = driver.read_prompt()
            assert hinted is not None and "Cubeless 0-ply" in hinted and f"dice {move[1]}-{move[2]}" in hinted
        driver.send(answer(prompt, driver.transcript, double, take))
    raise AssertionError("the game did not end")


def games(transcript: str) -> list[str]:
    """The transcript cut into games (each from its "Game N." line)."""
    return re.split(r"^Game \d+\.$", transcript, flags=re.MULTILINE)[1:]


def check_crawford(transcript: str) -> None:
    """In a Crawford game nobody is offered the cube; the score line says which game it is."""
    for text in games(transcript):
        if "Crawford game;" in text:
            assert "Your turn: roll, double" not in text and "doubles to" not in text and "You double" not in text


def test_scripted_money_game_to_the_end() -> None:
    d = Driver("--seed", "7")
    n = drive(d)
    assert d.finish() == 0, d.proc.stderr.read().decode() if d.proc.stderr else ""
    text = d.transcript
    assert n >= 5
    assert re.search(r"(You win|The bot wins) \d+ points? \(", text)
    assert text.rstrip().endswith("Game over.")
    assert "The bot rolls" in text and "You play" in text
    assert text.count("+13-14-15-16-17-18-+") >= text.count("You play")  # a board after every play
    assert "Traceback" not in text


def test_scripted_match_to_the_end() -> None:
    d = Driver("--seed", "11", "--length", "3")
    drive(d, double=True, probe=False)
    assert d.finish() == 0
    text = d.transcript
    assert re.search(r"(You win|The bot wins) the match\.", text)
    assert "You double to" in text  # the player has the cube before his first roll of the first game
    final = re.findall(r"Score: you (\d+), the bot (\d+)", text)[-1]
    assert max(int(x) for x in final) >= 3
    check_crawford(text)


# -- the play loop in-process, against stub bots whose cube actions are fixed -------------------


class StubBot:
    """Plays the first legal play; always doubles when it may; answers doubles with ``reply``."""

    name = "stub"

    def __init__(self, reply: str = "take", doubles: bool = True) -> None:
        self.reply = reply
        self.doubles = doubles

    def choose_move(self, pos: Position, dice, state=None):  # noqa: ANN001
        return legal_moves(pos, dice)[0]

    def offers_double(self, pos: Position, state) -> bool:  # noqa: ANN001
        assert state.may_double
        return self.doubles

    def cube_response(self, pos: Position, state) -> str:  # noqa: ANN001
        return self.reply

    def offers_raccoon(self, pos: Position, state) -> bool:  # noqa: ANN001
        return False


class ScriptedInput:
    """A stdin whose next line answers the last prompt written to ``out``."""

    def __init__(self, out: io.StringIO, double: bool, take: bool) -> None:
        self.out, self.double, self.take = out, double, take

    def readline(self) -> str:
        text = self.out.getvalue()
        prompt = text.splitlines()[-1]
        assert prompt.endswith(PROMPT)
        line = answer(prompt[: -len(PROMPT)], text, self.double, self.take) + "\n"
        self.out.write(line)
        return line


def session(bot: StubBot, length: int, seed: int, double: bool, take: bool) -> str:
    from bgnet.cli.play import play_session

    out = io.StringIO()
    assert play_session(bot, length=length, seed=seed, inp=ScriptedInput(out, double, take), out=out) == 0  # type: ignore[arg-type]
    return out.getvalue()


@pytest.mark.parametrize("seed", [1, 3])  # with seed 3 the player wins the Crawford game
def test_crawford_game_follows_a_passed_double(seed: int) -> None:
    # 2-point match: the bot doubles at once and the player passes, so the bot leads 1-0 and the
    # next game is the Crawford game, where nobody may double; after it the bot doubles again.
    text = session(StubBot("take"), 2, seed, double=False, take=False)
    played = games(text)
    assert "The bot doubles to 2." in played[0] and "The bot wins 1 point (you passed the double)" in played[0]
    assert "Crawford game;" in played[1]
    check_crawford(text)
    if len(played) > 2:
        assert "post-Crawford" in played[2] and "The bot doubles to 2." in played[2]
    assert re.search(r"(You win|The bot wins) the match\.", text)


def test_player_double_passed_by_the_bot_ends_a_money_game() -> None:
    text = session(StubBot("pass", doubles=False), 0, 3, double=True, take=True)
    assert "You double to 2. The bot passes." in text
    assert "You win 1 point (the bot passed the double)." in text and text.rstrip().endswith("Game over.")


def test_taken_double_gives_the_player_the_cube() -> None:
    text = session(StubBot("take", doubles=False), 0, 4, double=True, take=True)
    assert "You double to 2. The bot takes." in text
    assert "cube 2 the bot's" in text
    assert re.search(r"(You win|The bot wins) (2|4|6) points", text)  # the game is played for the 2-cube


def test_quit_and_end_of_input(tmp_path: Path) -> None:
    d = Driver("--seed", "1")
    assert d.read_prompt() is not None
    d.send("quit")
    assert d.read_prompt() is None and d.finish() == 0
    assert "Goodbye." in d.transcript
    # The installed command with its input closed: one sentence, the games so far saved, exit 1.
    bgnet = shutil.which("bgnet", path=str(Path(sys.executable).parent)) or shutil.which("bgnet")
    assert bgnet is not None, "the bgnet command is not installed"
    for seed in range(1, 20):  # a seed where the bot opens, so that the saved game holds its play
        saved = tmp_path / f"game{seed}.mat"
        res = subprocess.run([bgnet, "play", "--seed", str(seed), "--length", "3", "--save", str(saved)],
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert res.returncode == EXIT_INPUT_ENDED == 1 and "Goodbye." not in res.stdout
        assert res.stderr == f"bgnet play: the input ended before the game did, so it is left unfinished " \
                             f"(the games so far are saved to {saved}).\n"
        if "The bot rolls" in res.stdout:
            break
    (game,) = read_match(saved).games
    assert game.winner is None and [a.player for a in game.actions] == [1]
    res = subprocess.run([bgnet, "play", "--seed", "1"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert res.returncode == 1 and res.stderr.count("\n") == 1 and "input ended" in res.stderr


@pytest.mark.parametrize("args", [("--ply", "7"), ("--length", "-1"), ("--model", "no/such/file.pt"), ("--seed", "x")])
def test_bad_options(args: tuple[str, ...]) -> None:
    res = subprocess.run([sys.executable, "-m", "bgnet", "play", *args], input="", capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert res.returncode == 2 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(("bgnet: error: ", "bgnet play: error: "))


# -- issue 11: beavers, raccoons, dead cubes and the money/match rule options ----------------------


class CubeInput:
    """A stdin that doubles, beavers and raccoons whenever asked, and plays the first legal play."""

    def __init__(self, out: io.StringIO, *, beaver: bool = True, raccoon: bool = True) -> None:
        self.out, self.beaver, self.raccoon = out, beaver, raccoon

    def readline(self) -> str:
        text = self.out.getvalue()
        prompt = text.splitlines()[-1][: -len(PROMPT)]
        if prompt.startswith("Raccoon to"):
            line = "raccoon" if self.raccoon else "play"
        elif prompt.startswith("Take or pass?"):
            line = "beaver" if self.beaver and "beaver" in prompt else "take"
        else:
            line = answer(prompt, text, True, True)
        self.out.write(line + "\n")
        return line + "\n"


class BeaverBot(StubBot):
    """Doubles when it may, beavers every double and raccoons every beaver."""

    def offers_raccoon(self, pos: Position, state) -> bool:  # noqa: ANN001
        return True


def cube_session(bot: StubBot, rules, seed: int, **kw: bool) -> str:  # noqa: ANN001
    from bgnet.cli.play import play_session

    out = io.StringIO()
    assert play_session(bot, seed=seed, inp=CubeInput(out, **kw), out=out, rules=rules) == 0  # type: ignore[arg-type]
    return out.getvalue()


@pytest.mark.parametrize("seed", [1, 2])
def test_beavers_and_raccoons_do_not_crash_and_show_the_cube(seed: int) -> None:
    from bgnet.play.game import Rules

    # Before the fix the player's double, beavered by the bot with raccoons on, left the game in its
    # "beavered" phase and the loop died with KeyError: 'beavered'.
    text = cube_session(BeaverBot("beaver"), Rules(beavers=True, raccoons=True, max_cube=64), seed)
    assert "Game over." in text
    if "You double to 2" in text:
        assert "You double to 2. The bot beavers: the cube is now at 4, the bot's." in text
        assert "You raccoon: the cube is now at 8, yours." in text
    if "The bot doubles to 2." in text:
        assert "You beaver: the cube is now at 4, yours." in text
        assert "The bot raccoons: the cube is now at 8, the bot's." in text
    assert "You double to 2" in text or "The bot doubles to 2." in text
    for value in re.findall(r"cube (\d+) ", text):
        assert int(value) <= 64


def test_beaver_only_when_allowed() -> None:
    from bgnet.play.game import Rules

    text = cube_session(StubBot("take"), Rules(), 3)
    after_help = text.split("Commands:")[1].split("\n", 1)[1]
    assert after_help.startswith("Rules: money game, Jacoby rule off, no beavers.\n")  # the rules it plays, said
    assert "beaver" not in after_help.split("\n", 1)[1]  # never offered without --beavers


def test_a_dead_cube_is_refused_with_a_sentence() -> None:
    from bgnet.play import game as g
    from bgnet.cli.play import Session

    import numpy as np

    rules = g.Rules(match_length=3)
    game = g.Game(rules, Position.start(), 0, "roll", score=(2, 0), post_crawford=True)
    out = io.StringIO()
    inp = io.StringIO("double\nroll\n")
    s = Session(StubBot(), rules, np.random.default_rng(0), inp, out)
    after = s.human_roll_phase(game)
    assert "Your turn: roll, hint or quit (dead cube)> " in out.getvalue()
    assert "You cannot double: you need only this game to win the match, so the cube is dead." in out.getvalue()
    assert after.phase == "move" and after.cube == 1


@pytest.mark.parametrize("args", [("--length", "3", "--beavers"), ("--no-beavers", "--raccoons"), ("--holland",),
                                  ("--length", "3", "--jacoby"), ("--length", "100")])
def test_rule_options_that_cannot_apply(args: tuple[str, ...]) -> None:
    res = subprocess.run([sys.executable, "-m", "bgnet", "play", *args], input="", capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert res.returncode == 2 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bgnet: error: ")


def test_rule_options_reach_the_game() -> None:
    from bgnet.cli.main import build_parser

    args = build_parser().parse_args(["play", "--beavers", "--raccoons", "--no-jacoby"])
    assert (args.beavers, args.raccoons, args.jacoby, args.holland) == (True, True, False, None)  # None: not given
    assert build_parser().parse_args(["play", "--length", "5", "--holland"]).holland


def test_the_opening_roll_shows_every_tie_and_keeps_its_seeded_dice() -> None:
    # Seed 5 ties 5-5, then the bot's 5 beats the player's 1: the bot opens with 5-1 (as before roll_opening).
    text = session(StubBot("take"), 0, 5, double=False, take=True)
    assert re.findall(r"Opening roll: .*", text)[:2] == ["Opening roll: you 5, the bot 5.",
                                                          "Opening roll: you 1, the bot 5."]
    first = re.search(r"The bot rolls (\d-\d)|You roll (\d-\d)", text)
    assert first is not None and first.group(1) == "5-1"
