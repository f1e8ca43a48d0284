"""Where a net's 0-ply plays lose equity to GNU Backgammon 0-ply's, by kind of position (contact, crashed, race).

    python bench/phase_gap.py [--model M] [--games 300] [--seed 9] [--judge-ply 1]   (needs gnubg-nn)

Games of the net against gnubg 0-ply; at every decision of either side both engines pick a play, and
where they differ both afterstates are judged twice: by gnubg at ``--judge-ply`` and by the net's own
2-ply search. Each judge favours its own engine (their errors are correlated), so read the kinds
against each other and the two judges together, not one figure alone.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import numpy as np

import bgnet
from bgnet import Position
from bgnet.features.encoding import KINDS, position_kinds
from bgnet.core.errors import BgnetError
from bgnet.core.probs import Probs
from bgnet.core.rules import opening_roll
from bgnet.play.search import evaluate_boards

Judge = Callable[[np.ndarray], np.ndarray]
"""Probabilities (N, 5) of boards (N, 26), each for its side on roll; exact for finished games."""


def opponent_equities(after: Position | None, judges: dict[str, Judge]) -> dict[str, float]:
    """The mover's equity of ``after`` (seen from the mover) by each judge: minus the opponent's, on roll."""
    assert after is not None, "legal_moves gives every play its afterstate"
    board = np.array([after.swap_sides().board], np.int8)
    return {name: -Probs.of(judge(board)[0]).equity() for name, judge in judges.items()}


def roll(rng: np.random.Generator) -> tuple[int, int]:
    """Two dice."""
    first, second = rng.integers(1, 7, 2)
    return int(first), int(second)


def main() -> int:
    """Play the games, judge every differing decision, print equity per game by kind and judge."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default", help="checkpoint (default: the released net)")
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--judge-ply", type=int, default=1, help="gnubg's depth as a judge (2 is ~500x slower)")
    args = parser.parse_args()
    if args.games < 1:
        parser.error("--games must be at least 1")
    try:
        ours, theirs = bgnet.load_agent(args.model, ply=0), bgnet.load_agent("gnubg", ply=0)
        gnubg_judge, own = bgnet.load_agent("gnubg", ply=args.judge_ply).evaluator, ours.evaluator
    except BgnetError as exc:  # a bad --model or --judge-ply: one sentence
        print(f"phase_gap: error: {exc}", file=sys.stderr)
        return 2
    assert gnubg_judge is not None and own is not None, "both agents have evaluators"
    judges: dict[str, Judge] = {f"gnubg@{args.judge_ply}": gnubg_judge.probs_of_boards,
                                "own 2-ply": lambda boards: evaluate_boards(own, boards, 2)}
    rng = np.random.default_rng(args.seed)
    # per kind: decisions, differing decisions, and the net's equity minus gnubg's by each judge
    decisions, differing = np.zeros(3, int), np.zeros(3, int)
    gap = {name: np.zeros(3) for name in judges}
    for game in range(args.games):
        pos, dice = Position.start(), opening_roll(rng)
        net_moves = game % 2 == 0
        while True:
            mine, reference = ours.choose_move(pos, dice), theirs.choose_move(pos, dice)
            kind = int(position_kinds(np.array([pos.board], np.int8))[0])
            decisions[kind] += 1
            if mine.after != reference.after:
                differing[kind] += 1
                a, b = opponent_equities(mine.after, judges), opponent_equities(reference.after, judges)
                for name in judges:
                    gap[name][kind] += a[name] - b[name]
            pos = pos.play(mine if net_moves else reference)
            if pos.is_game_over():
                break
            net_moves = not net_moves
            dice = roll(rng)
    print(f"{args.model} against gnubg@0 over {args.games} games (seed {args.seed}): the net's plays minus gnubg's, "
          "equity per game, where they differ")
    print(f"{'kind':<8} {'decisions':>9} {'differ':>7} " + " ".join(f"{name:>10}" for name in judges))
    for kind in range(3):
        print(f"{KINDS[kind]:<8} {decisions[kind]:>9} {differing[kind]:>7} "
              + " ".join(f"{gap[name][kind] / args.games:>+10.4f}" for name in judges))
    return 0


if __name__ == "__main__":
    sys.exit(main())
