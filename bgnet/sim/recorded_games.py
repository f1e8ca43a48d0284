"""A duel's games as match files (``python -m eval duel A B --save-games DIR``), for GNU Backgammon, XG or ``bgnet analyze``.

A deal's dice depend only on (seed, deal, game, block) (``bgnet.sim.duel.deal_dice``), and
the game-loop engine plays the same games as the vectorised one, so each deal is
played again here through ``bgnet.sim.duel.play_deals`` with an observer that records
every state (``bgnet.io.recorder.MatchRecorder``). Each deal gives two files, one per
seating: ``<seat 0>_vs_<seat 1>_<deal:05d>.mat``, the player in seat 0 in the left
column (A for the first, B for the second); the results are the duel's own.
"""

from __future__ import annotations

import re
from pathlib import Path

from bgnet.sim.duel import TableOutcome, play_deals
from bgnet.sim.runner import DuelSpec, agent
from bgnet.play.game import Game, Rules
from bgnet.io.formats import write_match
from bgnet.io.recorder import MatchRecorder

CHUNK = 64
"""Deals replayed together (one batched move generation per step across them)."""


def player_names(spec: DuelSpec) -> tuple[str, str]:
    """Short names for A and B in files and file names (``bgnet@2``, ``pubeval``); equal specs get ``-A``/``-B``."""
    def short(text: str) -> str:
        name, at, ply = text.strip().partition("@")
        stem = Path(name).stem or name
        return re.sub(r"[^A-Za-z0-9.+-]+", "-", stem).strip("-") + (f"@{ply}" if at else "")

    a, b = short(spec.agent_a) or "A", short(spec.agent_b) or "B"
    return (f"{a}-A", f"{b}-B") if a == b else (a, b)


def file_name(names: tuple[str, str], deal: int, side: int) -> str:
    """The file of ``deal`` with A in seat ``side`` (seat 0's name first)."""
    seat0, seat1 = (names[0], names[1]) if side == 0 else (names[1], names[0])
    return f"{seat0}_vs_{seat1}_{deal:05d}.mat"


def save_duel_games(spec: DuelSpec, folder: str | Path, deals: range | None = None) -> list[TableOutcome]:
    """Replay ``deals`` (default: all) of the duel and write each table's games into ``folder``; A's outcomes."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    a, b = agent(spec.agent_a, spec.agent_seed(0)), agent(spec.agent_b, spec.agent_seed(1))
    rules = spec.rules or Rules(cubeful=False)
    names = player_names(spec)
    wanted = range(spec.pairs) if deals is None else deals
    outcomes: list[TableOutcome] = []
    for lo in range(0, len(wanted), CHUNK):
        chunk = wanted[lo:lo + CHUNK]
        recorders: dict[tuple[int, int], MatchRecorder] = {}

        def observe(deal: int, side: int, game: Game) -> None:
            key = (deal, side)
            if key not in recorders:
                seats = names if side == 0 else (names[1], names[0])
                recorders[key] = MatchRecorder(seats, rules)
            recorders[key].observe(game)

        outcomes += play_deals((a, b), rules, chunk, spec.seed, observer=observe)
        for (deal, side), rec in sorted(recorders.items()):
            write_match(rec.record(), out / file_name(names, deal, side))
    return outcomes
