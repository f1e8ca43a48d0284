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


def _mix(values: torch.Tensor, targets: torch.Tensor, lam: float) -> torch.Tensor:
    """``(1 - lam) * values + lam * targets`` in float64, rounded to float32."""
    return ((1.0 - lam) * values.double() + lam * targets.double()).float()


def ring_lambda_returns(ring: TrajectoryRing, lam: float, since: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Targets (steps, G, 5) float32 for the ring's rows and the mask (steps, G) of samples: rows of games that ended
    (won, or stopped at the bear-off database) at step ``since`` or later, their finished boards left out."""
    n_games, dev = ring.boards.shape[1], ring.boards.device
    targets = torch.zeros_like(ring.values)
    samples = torch.zeros(ring.end.shape, dtype=torch.bool, device=dev)
    carry = torch.zeros((n_games, 5), dtype=torch.float32, device=dev)  # the target of the row before, same game
    live = torch.zeros(n_games, dtype=torch.bool, device=dev)  # the slot's rows belong to a game that ended well
    ended = torch.full((n_games,), -1, dtype=torch.int64, device=dev)  # the step where that game ended
    results = terminal_probs_torch(ring.end.reshape(-1)).view(*ring.end.shape, 5)  # a win's chances, every row
    for row, step in reversed(ring.rows()):
        end, values = ring.end[row].to(torch.int64), ring.values[row]
        won = (end >= 1) & (end <= 3)
        stopped = end == END_BEAROFF
        last = end != END_NONE
        live = torch.where(last, won | stopped, live)
        ended = torch.where(last, step, ended)
        target = torch.where(stopped.unsqueeze(1), values, carry)
        targets[row] = target
        samples[row] = live & ~won & (ended >= since)
        carry = torch.where(won.unsqueeze(1), results[row], flip_probs_torch(_mix(values, target, lam)))
    return targets, samples
