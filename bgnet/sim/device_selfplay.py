"""Self-play that stays on one torch device: ``SelfPlay``'s step as tensor ops, the same code on the CPU and CUDA.

``DeviceSelfPlay`` holds G games as tensors on its device: boards (G, 26) int8, plies, game
serial numbers, a ``torch.Generator`` there for the dice, and a ``TrajectoryRing`` of the plays.
``step(net)`` rolls (the opening roll never a double), generates every legal afterstate
(``generate_afterstates_torch``), turns them round, scores them (the net on its feature set's
torch encoding, pure bear-offs exactly from ``DeviceBearoff``, finished games exactly), picks
each game's best play by segment argmax (the first of equal ones, with optional epsilon
exploration), writes the ring's row and restarts finished games: the choices of
``bgnet.sim.selfplay.SelfPlay`` given the same dice and evaluator (its play order differs, so
exact ties may go to another play). Python reads no tensor's value in a step; the move
generator's ``nonzero`` still waits for its counts on a GPU (at most 10 times a step).
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from bgnet.core.device_kernels import check_kernels
from bgnet.core.game_torch import (segment_argmax_torch, swap_sides_torch, terminal_codes_torch,
                                   terminal_probs_torch)
from bgnet.core.movegen_torch import generate_afterstates_torch
from bgnet.core.probs import equities
from bgnet.core.rules import other_opening_die
from bgnet.features.registry import feature_set
from bgnet.nets.bearoff_torch import DeviceBearoff
from bgnet.nets.model import BgNet, placement
from bgnet.sim.selfplay import START_BOARD, SelfPlayStateError
from bgnet.sim.trajectory_ring import END_ABANDONED, END_BEAROFF, END_NONE, TrajectoryRing

__all__ = ["BoardsProbs", "DeviceDice", "DeviceSelfPlay", "net_probs", "roll_dice_torch"]

BoardsProbs = Callable[[torch.Tensor], torch.Tensor]
"""Boards (M, 26) int8 on the device -> chances (M, 5) float32 there, each for its side on roll."""
DeviceDice = Callable[[torch.Tensor], torch.Tensor]
"""Opening mask (G,) bool -> dice (G, 2) on the device, two different dice where the mask is set."""


def roll_dice_torch(generator: torch.Generator, opening: torch.Tensor) -> torch.Tensor:
    """Dice (G, 2) int8 on the generator's device; rows marked ``opening`` get two different dice (the opening roll).
    Every row draws the same numbers whatever the mask, so the stream never depends on the games."""
    n, dev = len(opening), opening.device
    dice = torch.randint(1, 7, (n, 2), generator=generator, device=dev, dtype=torch.int8)
    first = torch.randint(1, 7, (n,), generator=generator, device=dev, dtype=torch.int8)
    shift = torch.randint(1, 6, (n,), generator=generator, device=dev, dtype=torch.int8)
    second = other_opening_die(first, shift)  # type: ignore[type-var]  # the rule's arithmetic works on tensors too
    return torch.where(opening.unsqueeze(1), torch.stack([first, second], dim=1), dice)


def net_probs(net: BgNet, kernels: str = "torch") -> BoardsProbs:
    """``net``'s chances of boards on its device: its feature set's torch encoder (its Triton kernel with ``kernels``
    "fused"), one forward pass, no gradients."""
    encode = feature_set(net.config.feature_version).torch_encode_fn(kernels)
    dtype = placement(net)[1]

    def probs(boards: torch.Tensor) -> torch.Tensor:
        return net.infer(encode(boards).to(dtype)).float()  # infer takes no gradients
    return probs


Scorer = BgNet | BoardsProbs
"""What ``step`` plays with: a net, or any function of boards on the device."""


class DeviceSelfPlay:
    """G concurrent self-play games and their trajectories, all as tensors on one device."""

    def __init__(self, n_games: int, seed: int, device: torch.device | str = "cpu", max_plies: int = 600,
                 bearoff: bool = True, history: int | None = None, dice: DeviceDice | None = None,
                 kernels: str = "torch") -> None:
        self.n_games = n_games
        self.device = torch.device(device)
        self.kernels = check_kernels(kernels)
        """How the features and bear-off lookups run (``bgnet.core.device_kernels.DEVICE_KERNELS``): torch ops, or
        "fused", one Triton kernel each (the same bits, so the same games)."""
        self.max_plies = max_plies
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(seed)
        self.dice = dice
        """Where rolls come from when set (tests feed ``SelfPlay`` and this the same); else the generator."""
        self.bearoff = DeviceBearoff(self.device, kernels=kernels) if bearoff else None
        self.start = torch.from_numpy(START_BOARD).to(self.device)
        self.boards = self.start.repeat(n_games, 1)
        self.plies = torch.zeros(n_games, dtype=torch.int64, device=self.device)
        self.game = torch.arange(n_games, device=self.device)
        self.next_game = torch.tensor(n_games, device=self.device)
        self.finished = torch.tensor(0, device=self.device)
        """Games finished with positions to learn from (won, or stopped at the bear-off database)."""
        self.ring = TrajectoryRing(history or max_plies, n_games, self.device)

    @property
    def steps(self) -> int:
        """Steps played so far."""
        return self.ring.written

    def step(self, scorer: Scorer, exploration: float = 0.0) -> None:
        """Play one ply in every game, record it in the ring, restart the games it ended."""
        probs_fn = net_probs(scorer, self.kernels) if isinstance(scorer, BgNet) else scorer
        dice = self.roll()
        after, offsets = generate_afterstates_torch(self.boards, dice, check=False)
        cand = swap_sides_torch(after)
        probs, bearoffs = self.leaf_probs(probs_fn, cand)
        choice = segment_argmax_torch(-equities(probs), offsets)
        if exploration > 0.0:
            choice = self.explore(choice, offsets, exploration)
        chosen = cand.index_select(0, choice)
        end = self.end_codes(chosen, bearoffs.index_select(0, choice))
        self.ring.write(chosen, probs.index_select(0, choice), self.game, self.plies, end)
        self.restart(chosen, end)

    def roll(self) -> torch.Tensor:
        """This step's dice (G, 2): the opening roll for games at ply 0."""
        opening = self.plies == 0
        if self.dice is not None:
            return self.dice(opening).to(self.device, torch.int8)
        return roll_dice_torch(self.generator, opening)

    def leaf_probs(self, probs_fn: BoardsProbs, cand: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Chances (N, 5) float32 of the candidates (exact for pure bear-offs and finished games) and the mask of
        pure bear-offs: ``leaf_probs`` of ``with_database(evaluator)``."""
        probs = probs_fn(cand)
        if self.bearoff is None:
            bearoffs = torch.zeros(len(cand), dtype=torch.bool, device=self.device)
        else:
            bearoffs, exact = self.bearoff.probs(cand)
            probs = torch.where(bearoffs.unsqueeze(1), exact.float(), probs)
        codes = terminal_codes_torch(cand)
        return torch.where((codes != 0).unsqueeze(1), terminal_probs_torch(codes), probs), bearoffs

    def explore(self, choice: torch.Tensor, offsets: torch.Tensor, exploration: float) -> torch.Tensor:
        """With chance ``exploration`` per game, a uniformly random play instead of the best."""
        draws = torch.rand((2, self.n_games), generator=self.generator, device=self.device)
        counts = offsets.diff()
        pick = offsets[:-1] + (draws[1] * counts).long().clamp(max=counts - 1)
        return torch.where(draws[0] < exploration, pick, choice)

    def end_codes(self, chosen: torch.Tensor, bearoffs: torch.Tensor) -> torch.Tensor:
        """How each game ended with its chosen play (``END_*``; 1..3 the points the play won)."""
        codes = terminal_codes_torch(chosen)  # the side on roll lost: -1..-3
        stopped = bearoffs & (codes == 0)
        abandoned = self.plies + 1 >= self.max_plies
        end = torch.where(stopped, END_BEAROFF, torch.where(abandoned, END_ABANDONED, END_NONE))
        return torch.where(codes != 0, -codes.to(torch.int64), end).to(torch.int8)

    def restart(self, chosen: torch.Tensor, end: torch.Tensor) -> None:
        """Advance every game to its chosen board; games that ended start again from the opening."""
        done = end != END_NONE
        self.finished += (done & (end != END_ABANDONED)).sum()
        self.boards = torch.where(done.unsqueeze(1), self.start, chosen)
        self.plies = torch.where(done, 0, self.plies + 1)
        self.game = torch.where(done, self.next_game + done.cumsum(0) - 1, self.game)
        self.next_game = self.next_game + done.sum()

    # -- resume -----------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue the same games exactly, as CPU tensors and ints."""
        return {"boards": self.boards.cpu(), "plies": self.plies.cpu(), "game": self.game.cpu(),
                "next_game": self.next_game.cpu(), "finished": self.finished.cpu(),
                "generator": self.generator.get_state(), "ring": self.ring.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from ``state_dict()`` output (of a self-play with as many games and as long a history)."""
        shape = tuple(state["boards"].shape)
        held = tuple(state["ring"]["boards"].shape[:2])
        if shape != (self.n_games, 26) or held != (self.ring.steps, self.n_games):
            raise SelfPlayStateError(f"saved device self-play state holds {shape[0]} games and {held[0]} plies of "
                                     f"history; this one has {self.n_games} and {self.ring.steps}")
        for name in ("boards", "plies", "game", "next_game", "finished"):
            setattr(self, name, state[name].to(self.device))
        self.generator.set_state(state["generator"])
        self.ring.load_state_dict(state["ring"])
