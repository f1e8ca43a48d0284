"""The device self-play's trajectories: the last ``steps`` plies of every game slot, preallocated on the device.

Every step of ``DeviceSelfPlay`` plays one ply in each of its G game slots, so step ``s``
writes row ``s % steps`` of each array: for each slot the board its play chose (seen from
the side on roll next), the chances the evaluator gave it, the game's serial number, its ply
and how the game ended there (``END_*``). A game is the run of rows of one slot from its
ply 0 to the row that ends it; a game longer than ``steps`` plies keeps only its last
``steps`` rows. No Python list per game, no copy to the host.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["END_ABANDONED", "END_BEAROFF", "END_NONE", "TrajectoryRing"]

END_NONE = 0
"""The game goes on after this row."""
END_BEAROFF = 4
"""The play left a pure bear-off: the game stops here, its row valued exactly by the database."""
END_ABANDONED = 5
"""The game reached the ply limit unfinished: it yields no positions."""
# 1, 2, 3: the play bore off the last checker, winning that many points; the row is the finished board.


class TrajectoryRing:
    """Rows (step % steps, slot) of boards, chances, game serial, ply and end code, on one device."""

    def __init__(self, steps: int, n_games: int, device: torch.device) -> None:
        self.steps = steps
        self.boards = torch.zeros((steps, n_games, 26), dtype=torch.int8, device=device)
        self.values = torch.zeros((steps, n_games, 5), dtype=torch.float32, device=device)
        self.game = torch.zeros((steps, n_games), dtype=torch.int64, device=device)
        self.ply = torch.zeros((steps, n_games), dtype=torch.int32, device=device)
        self.end = torch.zeros((steps, n_games), dtype=torch.int8, device=device)
        self.written = 0
        """Steps written so far (a Python int: where the next row goes needs no look at the device)."""

    def write(self, boards: torch.Tensor, values: torch.Tensor, game: torch.Tensor, ply: torch.Tensor,
              end: torch.Tensor) -> None:
        """Store one step's row for every slot."""
        row = self.written % self.steps
        self.boards[row] = boards
        self.values[row] = values
        self.game[row] = game
        self.ply[row] = ply
        self.end[row] = end
        self.written += 1

    def rows(self) -> list[tuple[int, int]]:
        """(ring row, step number) of the rows held, oldest first."""
        first = max(0, self.written - self.steps)
        return [(s % self.steps, s) for s in range(first, self.written)]

    def state_dict(self) -> dict[str, Any]:
        """The rows held and the step count, as CPU tensors."""
        return {"written": self.written, **{name: getattr(self, name).cpu() for name in _ARRAYS}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from ``state_dict()`` output (of a ring of the same shape)."""
        for name in _ARRAYS:
            getattr(self, name).copy_(state[name])
        self.written = int(state["written"])


_ARRAYS = ("boards", "values", "game", "ply", "end")
