"""Opening plays: a net's 0-ply choice for the 15 opening rolls against GNU Backgammon's 2-ply choice.

    python bench/openings.py [--model checkpoints/bgnet.pt]   (needs gnubg-nn, the ref extra)
"""

from __future__ import annotations

import argparse

import bgnet
from bgnet import Position


def main() -> None:
    """Print each opening roll's two plays and how many agree."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default", help="checkpoint (default: the released net)")
    args = parser.parse_args()
    ours = bgnet.load_agent(args.model, ply=0)
    reference = bgnet.load_agent("gnubg", ply=2)
    start = Position.from_position_id("4HPwATDgc/ABMA")
    same = 0
    for high in range(2, 7):
        for low in range(1, high):
            mine, theirs = ours.choose_move(start, (high, low)), reference.choose_move(start, (high, low))
            same += mine == theirs
            print(f"{high}-{low}  bgnet {str(mine):<16} gnubg 2-ply {str(theirs):<16} {'same' if mine == theirs else 'DIFFERENT'}")
    print(f"{same} of 15 opening plays agree with GNU Backgammon 2-ply")


if __name__ == "__main__":
    main()
