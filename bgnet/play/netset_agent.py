"""A player from a checkpoint's nets by kind of position, run by torch as the rounds pipeline runs them.

``load_agent("netset:PATH")`` makes one (``netset-no-bearoff:PATH`` without the bear-off
database): the ``bgnet.nets.model.NetSet`` of the file, each position scored by the
net of its kind, then, when ``bearoff``, the exact chances of every pure bear-off.
``NeuralAgent`` plays the same file with its own torch-free evaluator; this one gives
the rounds pipeline's own numbers, so a duel here is the duel of a round.
"""

from __future__ import annotations

from pathlib import Path

from bgnet.core.protocols import BatchScorer
from bgnet.play.base_agent import BaseAgent
from bgnet.play.search import check_ply


class NetSetAgent(BaseAgent):
    """The NetSet in checkpoint ``path`` searching ``ply`` plies deep; with ``bearoff`` the database ends it."""

    def __init__(self, path: str | Path, ply: int = 0, bearoff: bool = True) -> None:
        from bgnet.nets.model import load_netset

        self.path = str(path)
        self.ply = check_ply(ply)
        self.netset = load_netset(path)
        self.netset.bearoff = bearoff
        self.evaluator = self.netset
        self.name = f"{'netset' if bearoff else 'netset-no-bearoff'}:{self.path}@{ply}"

    def batch_scorer(self) -> BatchScorer:
        """0-ply: ``NeuralScorer`` over the nets; n-ply: ``SearchScorer`` (cubeless money ranking)."""
        if self.ply != 0:
            from bgnet.play.search import SearchScorer

            return SearchScorer(self.netset, self.ply)
        from bgnet.play.scorers import NeuralScorer

        return NeuralScorer(self.netset)
