"""TD(lambda) targets on the device, straight from the self-play's ``TrajectoryRing``: ``td.lambda_returns``'s maths.

One backward sweep over the ring's rows, newest first, all G slots at once: each slot carries
the target of the row before (same game), reset where a game ends. A win's row is the finished
board (no sample); the row before it gets the result. A bear-off stop's row is its own target
(its exact chances). Elsewhere ``G[t] = flip((1 - lam) * V[t + 1] + lam * G[t + 1])``, mixed in
float64 and rounded to float32 as the numba kernel does, so the targets are equal bit for bit.
Rows of games still under way, or abandoned at the ply limit, are no samples.

On a CUDA device the sweep over a full ring can be replayed from one CUDA graph (``GraphedRingReturns``): the
same kernels, launched by one call instead of a few thousand from Python.
"""

from __future__ import annotations

import torch

from bgnet.core.game_torch import flip_probs_torch, terminal_probs_torch
from bgnet.sim.trajectory_ring import END_BEAROFF, END_NONE, TrajectoryRing

__all__ = ["GraphedRingReturns", "ring_lambda_returns"]


def ring_lambda_returns(ring: TrajectoryRing, lam: float, since: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Targets (steps, G, 5) float32 for the ring's rows and the mask (steps, G) of samples: rows of games that ended
    (won, or stopped at the bear-off database) at step ``since`` or later, their finished boards left out.

    Which rows are samples is integer work, done for every row at once (each row's game end is the nearest ending row
    at or after it in its slot: a reversed running minimum). Only the targets' recursion is a loop over the rows,
    newest first, at a handful of ops a row: a device step launches them all without waiting."""
    held = ring.rows()
    if not held:
        return torch.zeros_like(ring.values), torch.zeros(ring.end.shape, dtype=torch.bool, device=ring.end.device)
    return _returns(ring, lam, held[0][1], since, len(held))


def _returns(ring: TrajectoryRing, lam: float, first: int | torch.Tensor, since: int | torch.Tensor, count: int
             ) -> tuple[torch.Tensor, torch.Tensor]:
    """``ring_lambda_returns`` of the ``count`` rows from step ``first`` on; ``first`` and ``since`` are Python ints
    or 0-dim int64 tensors on the ring's device (a CUDA graph's inputs), with the same results."""
    n_games, dev = ring.boards.shape[1], ring.boards.device
    targets = torch.zeros_like(ring.values)
    samples = torch.zeros(ring.end.shape, dtype=torch.bool, device=dev)
    order = (torch.arange(count, device=dev) + first) % ring.steps  # ring rows, oldest first
    end = ring.end.index_select(0, order).to(torch.int64)  # (R, G)
    won = (end >= 1) & (end <= 3)
    stopped = end == END_BEAROFF
    last = end != END_NONE
    # For each row, the row (in step order) where its game ended: the nearest ending row at or after it.
    position = torch.arange(count, device=dev).unsqueeze(1).expand(count, n_games)
    ending = torch.where(last, position, count).flip(0).cummin(0).values.flip(0)
    ended = ending < count
    good = (won | stopped).gather(0, ending.clamp(max=count - 1)) & ended
    samples[order] = good & ~won & (ending + first >= since)
    # The targets: G[t] = flip((1 - lam) V[t + 1] + lam G[t + 1]) in float64 rounded to float32, as the numba kernel.
    values = ring.values.index_select(0, order)
    results = terminal_probs_torch(end.reshape(-1)).view(count, n_games, 5)  # a win's chances, every row
    part_values = (1.0 - lam) * values.double()
    step_targets = torch.empty_like(values)
    stopped_rows, won_rows = stopped.unsqueeze(2), won.unsqueeze(2)
    carry = torch.zeros((n_games, 5), dtype=torch.float32, device=dev)  # the target of the row after, same game
    for r in range(count - 1, -1, -1):
        target = torch.where(stopped_rows[r], values[r], carry)
        step_targets[r] = target
        mixed = (part_values[r] + lam * target.double()).float()
        carry = torch.where(won_rows[r], results[r], flip_probs_torch(mixed))
    targets[order] = step_targets
    return targets, samples


class GraphedRingReturns:
    """``ring_lambda_returns`` with the sweep over a full ring on a CUDA device replayed from one CUDA graph.

    A device step is launched op by op from Python, and the sweep is a few thousand small kernels a fit (8 a ring
    row); replayed from a graph they cost one launch. The graph is captured at the first full ring (and again if
    the ring's tensors move); its inputs are the first step and ``since`` as device scalars, so a replay reads
    nothing back and gives the eager sweep's bits. Elsewhere (a CPU, a ring not yet full) it is the eager sweep.
    """

    def __init__(self, lam: float) -> None:
        self.lam = lam
        self._key: tuple[int, ...] | None = None
        self._graph: torch.cuda.CUDAGraph | None = None
        self._inputs: tuple[torch.Tensor, torch.Tensor] | None = None
        self._outputs: tuple[torch.Tensor, torch.Tensor] | None = None

    def __call__(self, ring: TrajectoryRing, since: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """The targets and samples of ``ring_lambda_returns(ring, lam, since)``, fresh tensors."""
        if ring.values.device.type != "cuda" or ring.written < ring.steps:
            return ring_lambda_returns(ring, self.lam, since)
        key = (ring.end.data_ptr(), ring.values.data_ptr(), ring.steps, ring.end.shape[1])
        if key != self._key:
            self._capture(ring)
            self._key = key
        assert self._graph is not None and self._inputs is not None and self._outputs is not None
        first, since_t = self._inputs
        first.fill_(ring.written - ring.steps)
        since_t.fill_(since)
        self._graph.replay()
        return self._outputs[0].clone(), self._outputs[1].clone()

    def _capture(self, ring: TrajectoryRing) -> None:
        """Record the sweep of a full ring; one eager run on a side stream first, so that nothing lazy is captured."""
        dev = ring.values.device
        inputs = (torch.zeros((), dtype=torch.int64, device=dev), torch.zeros((), dtype=torch.int64, device=dev))
        side = torch.cuda.Stream(device=dev)
        side.wait_stream(torch.cuda.current_stream(dev))
        with torch.cuda.stream(side):
            _returns(ring, self.lam, inputs[0], inputs[1], ring.steps)
        torch.cuda.current_stream(dev).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outputs = _returns(ring, self.lam, inputs[0], inputs[1], ring.steps)
        self._graph, self._inputs, self._outputs = graph, inputs, outputs
