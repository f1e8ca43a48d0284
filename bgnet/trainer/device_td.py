"""TD(lambda) targets on the device, straight from the self-play's ``TrajectoryRing``: ``td.lambda_returns``'s maths.

One backward sweep over the ring's rows, newest first, all G slots at once: each slot carries
the target of the row before (same game), reset where a game ends. A win's row is the finished
board (no sample); the row before it gets the result. A bear-off stop's row is its own target
(its exact chances). Elsewhere ``G[t] = flip((1 - lam) * V[t + 1] + lam * G[t + 1])``, mixed in
float64 and rounded to float32 as the numba kernel does, so the targets are equal bit for bit.
Rows of games still under way, or abandoned at the ply limit, are no samples.
"""

from __future__ import annotations

import torch

from bgnet.core.game_torch import flip_probs_torch, terminal_probs_torch
from bgnet.sim.trajectory_ring import END_BEAROFF, END_NONE, TrajectoryRing

__all__ = ["ring_lambda_returns"]


def ring_lambda_returns(ring: TrajectoryRing, lam: float, since: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Targets (steps, G, 5) float32 for the ring's rows and the mask (steps, G) of samples: rows of games that ended
    (won, or stopped at the bear-off database) at step ``since`` or later, their finished boards left out.

    Which rows are samples is integer work, done for every row at once (each row's game end is the nearest ending row
    at or after it in its slot: a reversed running minimum). Only the targets' recursion is a loop over the rows,
    newest first, at a handful of ops a row: a device step launches them all without waiting."""
    n_games, dev = ring.boards.shape[1], ring.boards.device
    targets = torch.zeros_like(ring.values)
    samples = torch.zeros(ring.end.shape, dtype=torch.bool, device=dev)
    held = ring.rows()
    if not held:
        return targets, samples
    first, count = held[0][1], len(held)
    order = torch.arange(first, first + count, device=dev) % ring.steps  # ring rows, oldest first
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
