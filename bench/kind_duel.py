"""What each kind of position is worth between two engines, from duels that differ only in that kind.

For each kind K (opening, middlegame, bear-off with contact, crashed, race), a hybrid plays engine B's choice in
positions of kind K and engine A's elsewhere, and meets A itself over paired cubeless money deals (each deal
twice, seats swapped, the same dice). The two games of a pair are the same game, mirrored, until the first
position of kind K, so the pair's sum is what B's play of K is worth over A's, with little noise beside it; the
kinds' figures add up to the whole duel of B against A (``--whole`` plays it too). The kind is that of the
position before the roll: ``bgnet.features.kinds`` (contact, crashed, race), its contact split here by stage.

    python bench/kind_duel.py --a default@1 --b gnubg@1 --games 4000 --seed 32 [--kinds race,crashed] [--workers 2]
    python bench/kind_duel.py --a default@1 --b gnubg@1 --kinds bearoff-contact+crashed+race   # a group of kinds
    python bench/kind_duel.py --a default --b gnubg --games 60000 --whole --json out.json
    python bench/kind_duel.py --a default@1 --b gnubg@1 --games 2000 --luck   # luck-adjusted (bgnet eval --luck)

Engines are ``load_agent`` specs with a batch scorer (``gnubg@P`` values every play at P plies; not
``gnubg-filtered``). Results depend on the seed only, not on ``--workers`` or the chunk size.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KINDS = ("opening", "middlegame", "bearoff-contact", "crashed", "race")
"""The kinds of position a hybrid can hand to engine B, each a share of the positions before a roll."""

OPENING_PIPS = 270
"""Contact positions with both sides' 15 checkers in play and at least this many pips between them (the start
has 334) are "opening"; fewer, "middlegame"; a side that has borne off makes it "bearoff-contact"."""

CHUNK = 250
"""Deals per chunk handed to a worker."""


def kind_codes(before: np.ndarray) -> np.ndarray:
    """The index into ``KINDS`` of each board (N, 26), seen from its side on roll."""
    from bgnet.features.kinds import position_kinds

    b = np.asarray(before, np.int64)
    mine, theirs = np.clip(b, 0, None), np.clip(-b, 0, None)
    slot = np.arange(26)
    pips = (mine * slot).sum(1) + (theirs * (25 - slot)).sum(1)
    borne_off = (mine.sum(1) < 15) | (theirs.sum(1) < 15)
    general = position_kinds(before)  # 0 contact, 1 crashed, 2 race
    contact_stage = np.where(borne_off, 2, np.where(pips >= OPENING_PIPS, 0, 1))
    return np.where(general == 2, 4, np.where(general == 1, 3, contact_stage)).astype(np.int64)


def kind_group(kind: str) -> list[int]:
    """The ``KINDS`` indices of a kind or a '+'-joined group of kinds (``race+crashed``)."""
    return [KINDS.index(k) for k in kind.split("+")]


class HybridScorer:
    """A ``BatchScorer``: ``b``'s scores for the games whose position before the roll is of kind ``kind`` (or of
    any kind of a group, ``race+crashed``), ``a``'s for the others; ``seen`` counts the decisions of each kind."""

    def __init__(self, a: Any, b: Any, kind: str) -> None:
        self.a, self.b, self.kinds = a, b, kind_group(kind)
        self.seen = np.zeros(len(KINDS), np.int64)

    def score_plays(self, before: np.ndarray, after: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """The plays' scores, each game's from the engine its kind goes to."""
        codes = kind_codes(before)
        self.seen += np.bincount(codes, minlength=len(KINDS))
        out = np.empty(len(after))
        counts = np.diff(offsets)
        chosen = np.isin(codes, self.kinds)
        for scorer, games in ((self.a, ~chosen), (self.b, chosen)):
            if not games.any():
                continue
            rows = np.repeat(games, counts)
            sub_offsets = np.concatenate(([0], np.cumsum(counts[games])))
            out[rows] = scorer.score_plays(before[games], after[rows], sub_offsets)
        return out


_AGENTS: dict[str, Any] = {}


def _scorer(spec: str) -> Any:
    """The batch scorer of agent ``spec`` (loaded once per process)."""
    from bgnet.play.agents import AgentSpecError, load_agent

    if spec not in _AGENTS:
        _AGENTS[spec] = load_agent(spec)
    scorer = _AGENTS[spec].batch_scorer()
    if scorer is None:
        raise AgentSpecError(f"{spec} has no batch scorer (use gnubg@P, not gnubg-filtered@P)")
    return scorer


def play_chunk(job: tuple[str, str, str | None, int, bool], deals: tuple[int, int], _seed: int
               ) -> tuple[list[Any], np.ndarray]:
    """Deals ``deals[0] ... deals[1] - 1`` of one duel: hybrid (or B itself when the kind is None) against A, with
    each table's luck when asked (``bgnet.sim.duel_luck``)."""
    from bgnet.sim.duel import play_cubeless
    from bgnet.sim.duel_luck import default_duel_luck

    spec_a, spec_b, kind, seed, luck = job
    a = _scorer(spec_a)
    b = _scorer(spec_b)
    first = HybridScorer(a, b, kind) if kind is not None else HybridScorer(b, b, KINDS[0])
    return play_cubeless(first, a, range(*deals), seed, luck=default_duel_luck() if luck else None), first.seen


@dataclass
class Row:
    """One duel's figures: what B's play of ``kind`` (or of everything) is worth over A's."""

    kind: str
    ppg: float
    ci95: float
    adjusted_ppg: float | None
    """Luck-adjusted (``--luck``): the same expectation as ``ppg``, a narrower interval; else None."""
    adjusted_ci95: float | None
    share: float
    """The kind's share of the hybrid's decisions."""
    differing_pairs: float
    """Share of pairs whose two games' points do not cancel (the games diverged, and the result with them)."""
    seconds: float


def duel(spec_a: str, spec_b: str, kind: str | None, games: int, seed: int, workers: int, luck: bool = False) -> Row:
    """One duel of ``games`` games (paired) and its row."""
    from bgnet.sim.backends import LocalBackend, map_chunks
    from bgnet.sim.duel_stats import summarise_outcomes

    pairs = games // 2
    chunks = [(lo, min(lo + CHUNK, pairs)) for lo in range(0, pairs, CHUNK)]
    t0 = time.perf_counter()
    parts = map_chunks(LocalBackend(workers), play_chunk, chunks, (spec_a, spec_b, kind, seed, luck), seed)
    outcomes = [o for part, _ in parts for o in part]
    seen = np.sum([s for _, s in parts], axis=0)
    res = summarise_outcomes(outcomes)
    by_deal: dict[int, int] = {}
    for o in outcomes:
        by_deal[o.deal] = by_deal.get(o.deal, 0) + o.points[0]
    differing = float(np.mean([v != 0 for v in by_deal.values()])) if by_deal else 0.0
    share = float(seen[kind_group(kind)].sum() / max(1, seen.sum())) if kind else 1.0
    return Row(kind or "whole", res.ppg, res.ci95, res.adjusted_ppg, res.adjusted_ci95, share, differing,
               time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    """Play a duel per kind (and the whole duel with ``--whole``); print a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", default="default", help="the base engine (default: the released net at 0 ply)")
    parser.add_argument("--b", default="gnubg", help="the engine whose play of each kind is tried (needs gnubg-nn)")
    parser.add_argument("--games", type=int, default=4000, help="games per duel (even)")
    parser.add_argument("--seed", type=int, default=32)
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help=f"comma-separated duels, each a kind or a '+'-joined group of {', '.join(KINDS)}")
    parser.add_argument("--whole", action="store_true", help="also B against A everywhere")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--luck", action="store_true", help="also the luck-adjusted points per game")
    parser.add_argument("--json", help="write the rows here too")
    args = parser.parse_args(argv)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for group in kinds for k in group.split("+") if k not in KINDS]
    if unknown or args.games < 2 or args.games % 2:
        print(f"kind_duel: kinds must be among {', '.join(KINDS)} and --games even and positive", file=sys.stderr)
        return 2
    from bgnet.core.errors import BgnetError
    from bgnet.sim.backends import single_blas_thread

    try:  # both engines load here first, so a bad spec is one sentence, not a worker's traceback
        _scorer(args.a)
        _scorer(args.b)
    except BgnetError as err:
        print(f"kind_duel: {err}", file=sys.stderr)
        return 2
    single_blas_thread()
    rows = [duel(args.a, args.b, k, args.games, args.seed, args.workers, args.luck) for k in kinds]
    if args.whole:
        rows.append(duel(args.a, args.b, None, args.games, args.seed, args.workers, args.luck))
    print(f"{args.b}'s play of each kind against {args.a}'s, {args.games} games a duel, seed {args.seed}")
    print("| kind | share of decisions | pairs that do not cancel | ppg for B's play | luck-adjusted | s |")
    print("|---|---:|---:|---|---|---:|")
    for r in rows:
        adjusted = "" if r.adjusted_ppg is None else f"{r.adjusted_ppg:+.4f} ± {r.adjusted_ci95:.4f}"
        print(f"| {r.kind} | {r.share:.3f} | {r.differing_pairs:.3f} | {r.ppg:+.4f} ± {r.ci95:.4f} | {adjusted} "
              f"| {r.seconds:.0f} |")
    kind_rows = [r for r in rows if r.kind != "whole"]
    if sorted(k for r in kind_rows for k in r.kind.split("+")) == sorted(KINDS):
        total = sum(r.ppg for r in kind_rows)
        spread = float(np.sqrt(sum(r.ci95 ** 2 for r in kind_rows)))
        adjusted = ""
        if all(r.adjusted_ppg is not None for r in kind_rows):
            adj_total = sum(r.adjusted_ppg or 0.0 for r in kind_rows)
            adj_spread = float(np.sqrt(sum((r.adjusted_ci95 or 0.0) ** 2 for r in kind_rows)))
            adjusted = f"{adj_total:+.4f} ± {adj_spread:.4f}"
        print(f"| sum of the kinds | 1 | | {total:+.4f} ± {spread:.4f} | {adjusted} | |")
    if args.json:
        Path(args.json).write_text(json.dumps({"a": args.a, "b": args.b, "games": args.games, "seed": args.seed,
                                               "rows": [r.__dict__ for r in rows]}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
