"""Feature set 1 (``bgnet.features.v1``) computed with torch ops, on whatever device the boards are on.

On a GPU this moves 26 bytes per position to the device instead of 214 floats,
and takes the encoding off the host's cores, which a large self-play batch
would otherwise saturate. It must give exactly the features of the numba
kernels (tested on the CPU); its race flag is ``bgnet.core.game_torch.race_torch``, the twin of
``bgnet.core.race``'s rule.
"""

from __future__ import annotations

import numpy as np
import torch

from bgnet.core.game_torch import race_torch
from bgnet.features.v1 import RAW_PER_SIDE, WIDTH


def _sides(boards: torch.Tensor) -> torch.Tensor:
    """Counts (2N, 25) of each side on its own points 1..24 then its bar (index 24): the side on roll's N rows, then
    the other side's, so that each per-side input is one op over both."""
    b = boards.to(torch.int16)
    mine = torch.cat([b[:, 1:25].clamp(min=0), b[:, 25:26].clamp(min=0)], dim=1)
    # The opponent's own point p is my slot 25 - p; his bar is slot 0 (stored negative).
    theirs = torch.cat([(-b[:, 1:25]).clamp(min=0).flip(1), (-b[:, 0:1]).clamp(min=0)], dim=1)
    return torch.cat([mine, theirs])


def _swap_halves(x: torch.Tensor) -> torch.Tensor:
    """Rows of the other side: the second half of (2N, ...) first."""
    n = len(x) // 2
    return torch.cat([x[n:], x[:n]])


def _write_raw(counts: torch.Tensor, dst: torch.Tensor) -> None:
    """Write each side's 98 raw inputs into ``dst`` (2, N, 98), a view of the output (no stacked temporaries: on
    a GPU each op is a pass over memory): four units a point (1, 2, 3 or more checkers, the excess over 3 halved),
    the bar halved, the checkers off over 15."""
    c = counts.view(2, -1, counts.shape[1])
    n = c[..., :24].float()
    units = dst[..., :96].unflatten(-1, (24, 4))
    units[..., 0].copy_(c[..., :24] == 1)
    units[..., 1].copy_(c[..., :24] == 2)
    units[..., 2].copy_(c[..., :24] >= 3)
    units[..., 3].copy_(((n - 3) / 2).clamp(min=0))
    bar = c[..., 24].float()
    dst[..., 96] = bar / 2
    dst[..., 97] = (15 - n.sum(-1) - bar) / 15


_HALF = 12
"""Points of a half board: each half's made points are read as one 12-bit number."""
_CONSTANTS: dict[torch.device, dict[str, torch.Tensor]] = {}
"""Per device: ``_run_table()``, the bit weights of a half board and the inputs' denominators, moved there once."""


def _constants(device: torch.device) -> dict[str, torch.Tensor]:
    """The encoder's constant tensors on ``device``, made on first use there. Denominators are tensors: a division
    by a Python number may round differently on a GPU."""
    consts = _CONSTANTS.get(device)
    if consts is None:
        made = {"runs": _run_table(), "half_weights": 1 << torch.arange(_HALF),
                "structure_den": torch.tensor([6, 6, 5, 5, 5, 6, 6], dtype=torch.float32),
                "pip_den": torch.tensor([100, 100, 50], dtype=torch.float32)}
        consts = _CONSTANTS[device] = {k: v.to(device) for k, v in made.items()}
    return consts


def _run_table() -> torch.Tensor:
    """(4096, 3) int64 over 12-bit masks (bit i = point i + 1 of a half board): the longest run of set bits, the
    run ending at bit 11 and the run starting at bit 0."""
    table = np.zeros((1 << _HALF, 3), np.int64)
    for mask in range(1 << _HALF):
        bits = [(mask >> i) & 1 for i in range(_HALF)]
        run = longest = 0
        for bit in bits:
            run = run + 1 if bit else 0
            longest = max(longest, run)
        low = next((i for i, bit in enumerate(bits) if not bit), _HALF)
        table[mask] = longest, run, low
    return torch.from_numpy(table)


def _longest_run(made: torch.Tensor) -> torch.Tensor:
    """Longest run of consecutive True along dim 1 of (N, 24): each half board read as a 12-bit number in a table
    of runs (a scan along the rows is slow on a GPU), joined across the middle."""
    k = _constants(made.device)
    table, weights = k["runs"], k["half_weights"]
    low = table.index_select(0, (made[:, :_HALF] * weights).sum(1))
    high = table.index_select(0, (made[:, _HALF:] * weights).sum(1))
    return torch.maximum(torch.maximum(low[:, 0], high[:, 0]), low[:, 1] + high[:, 2])


def _structure(own: torch.Tensor, other: torch.Tensor, den: torch.Tensor) -> torch.Tensor:
    n = own[:, :24]
    made = n >= 2
    home = made[:, :6].sum(1)
    prime = _longest_run(made)
    blots = (n == 1).sum(1)
    back = own[:, 24] + n[:, 18:24].sum(1)
    outfield = n[:, 6:12].sum(1)
    stripped = (n >= 4).sum(1)
    # Rearmost checker (25 = bar, 0 = none) and the opponent's closed points 1..6 pips in front of it.
    occupied = torch.cat([n, own[:, 24:25]], dim=1) > 0
    idx = torch.arange(1, 26, device=own.device).expand_as(occupied)
    rear = (idx * occupied).max(dim=1).values
    t = rear.unsqueeze(1) - torch.arange(1, 7, device=own.device).unsqueeze(0)  # landing points (N, 6)
    valid = t >= 1
    # The opponent's checkers on my point t sit on his point 25 - t (index 24 - t).
    his = torch.gather(other[:, :24], 1, (24 - t).clamp(0, 23))
    blocked = ((his >= 2) & valid).sum(1)
    return torch.stack([home, prime, blots, back, outfield, stripped, blocked], dim=1).float() / den


def encode_sides(boards: torch.Tensor, sides: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """Set-1 features (N, 214) of int8 boards (N, 26) whose ``_sides`` are ``sides`` (2N, 25), written into the first
    214 columns of ``out`` (N, >= 214) float32 when given (a wider feature set's output, so that no piece is
    concatenated); returns those columns."""
    n = len(boards)
    assert RAW_PER_SIDE == 98
    if out is None:
        out = torch.empty((n, WIDTH), dtype=torch.float32, device=boards.device)
    k = _constants(boards.device)
    weights = torch.arange(1, 26, device=boards.device, dtype=torch.float32)
    pips = (sides.float() * weights).sum(1)
    _write_raw(sides, out[:, :196].unflatten(1, (2, 98)).transpose(0, 1))
    out[:, 196] = race_torch(boards)
    out[:, 197:200] = torch.stack([pips[:n], pips[n:], pips[n:] - pips[:n]], dim=1) / k["pip_den"]
    structure = _structure(sides, _swap_halves(sides), k["structure_den"])
    out[:, 200:214].unflatten(1, (2, 7)).transpose(0, 1).copy_(structure.view(2, n, 7))
    return out[:, :WIDTH]


def encode_torch(boards: torch.Tensor) -> torch.Tensor:
    """Set-1 features (N, 214) float32 for int8 boards (N, 26), each seen from its side on roll."""
    return encode_sides(boards, _sides(boards))
