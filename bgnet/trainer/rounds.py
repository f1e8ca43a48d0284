"""Training beyond TD: rounds of (self-play positions, labels from the net's own search, supervised fit, duel).

    python -m bgnet.trainer.rounds --init runs/v2/last.pt --out runs/rounds [--rounds 4] [--positions 20000]
        [--label ply1|ply2|rollout [--label-top K]] [--epochs 3] [--lr 1e-4] [--duel-pairs 2000] [--seed 1]
        [--candidates K [--rank-weight W]] [--hidden 512,256] [--schedule constant|cosine] [--label-chunk N] [--workers N]
        [--fit-window W]
    python -m bgnet.trainer.rounds widen checkpoints/bgnet.pt runs/v2_init.pt   # a v1 net on features v2
    python -m bgnet.trainer.rounds duel CKPT gnubg@0 --games 4000 --seed 301 [--no-bearoff]  # nets by kind + bear-off
    python -m bgnet.trainer.rounds average OUT.pt CKPT CKPT ...   # the mean of one run's checkpoints' weights
    python -m bgnet.trainer.rounds committee OUT.pt CKPT CKPT ... # one wider net: the committee of several nets
    python -m bgnet.trainer.rounds refit RUN OUT.pt --start CKPT --round R [--fit-window W] [--hidden 768,384]
        [--with-labels OTHER/labels_001.npz ...]   # round R's fit again: another start, window, width or more
        # labels, with the run's other settings and round R's fit seed

Each round r starts from the current net: it plays self-play games with it
(``exploration`` random plays keep the positions varied) and samples
``positions`` of the positions reached, labels each with the net's own n-ply
search (``bgnet.play.search.evaluate_boards``: the expectation over all 21 rolls) or
with rollouts (``bgnet.sim.rollout.label_positions``),
fits a copy of the net to the labels (with ``--fit-window W``, those of the last W rounds; mean squared error over the five outputs,
Adam), and plays the copy against the current net in a paired duel. The copy
replaces the current net only when it wins that duel (points per game > 0, or
> its 95% interval with ``--keep significant``). Every round's seeds come from
``--seed`` and the round number, so the same command gives the same rounds.

The folder holds ``state.json`` (rounds done, the current net, every duel),
``round_NNN.pt`` (each round's fitted net) and ``current.pt`` (the net the
next round starts from). Running the same command again continues after the
last finished round (``--rounds`` may be raised to add rounds; the other
settings must stay the same, except ``--workers`` and ``--fit-window``); labels of a round are saved (``labels_NNN.npz``)
before fitting, so an interrupted round does not label twice, and with ``--label-chunk N`` they are
saved in parts as they are made (long rollout labelling).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from bgnet.core import _game_kernels as gk
from bgnet.sim import rollout
from bgnet.sim.backends import LocalBackend
from bgnet.trainer.learner import check_loss, fit
from bgnet.features.encoding import KINDS, position_kinds
from bgnet.nets.model import (BgNet, CheckpointError, NetSet, net_from_checkpoint, netset_from_checkpoint, read_checkpoint,
                         save_checkpoint, save_netset)
from bgnet.play.search import ROLLS
from bgnet.sim.selfplay import SelfPlay

ProbsFn = Callable[[np.ndarray], np.ndarray]
LABELS = ("ply1", "ply2", "rollout")
ROUND_KINDS = ("all", *KINDS)


@dataclass
class RoundsConfig:
    """The knobs of a rounds run (stored in state.json; a resumed run must use the same)."""

    rounds: int = 4
    positions: int = 20_000
    label: str = "ply1"
    epochs: int = 3
    lr: float = 1e-4
    minibatch: int = 256
    exploration: float = 0.05
    batch_games: int = 256
    duel_pairs: int = 2000
    keep: str = "mean"
    seed: int = 1
    rollout_trials: int = 36
    label_chunk: int = 0
    """Label a round's positions in parts of this many, each saved as it is done (``labels_NNN_part_KKK.npz``),
    so a long labelling (rollouts) interrupted loses at most one part; 0: all at once."""
    workers: int = 1
    """Processes that label at once (``bgnet.sim.backends.LocalBackend``); the labels do not depend on it."""
    hidden: str = ""
    """Hidden widths of the fitted net, e.g. "512,256": the copy is widened to them (Net2Net,
    ``bgnet.nets.model.widen_hidden``) before it is fitted, so that it can follow its teacher's search more
    closely; empty: the current net's widths. Later rounds keep the wider net."""
    candidates: int = 0
    """0: label the self-play positions themselves. k > 0: label instead the afterstates of each self-play
    position's k best plays at 0-ply for a random roll (``candidate_positions``), the positions a 0-ply
    move must tell apart."""
    schedule: str = "constant"
    """The fit's learning rate: "constant" (``lr`` throughout) or "cosine" (from ``lr`` down to 0 over the
    fit's steps)."""
    rank_weight: float = 0.0
    """0: fit the candidates' labels by squared error alone. w > 0 (needs ``candidates`` of 2 or more): keep
    each position's k candidates together (``candidate_positions(grouped=True)``: ``positions`` // k whole
    groups) and add w times the error of each candidate's equity relative to its siblings'
    (``bgnet.trainer.learner.sibling_rank_loss``), the part of the error that changes which play a 0-ply move picks."""
    label_top: int = 0
    """With ``label`` ply1 or ply2: 0 values every play of every level; k > 0 lets the last level choose each
    roll's play among pubeval's best k only (``bgnet.sim.rollout.evaluate_pruned``), about 4x cheaper at 2-ply with
    k = 10."""
    loss: str = "mse"
    """What the fit minimises (``bgnet.trainer.learner.LOSSES``): "mse", the squared error summed over the five chances,
    or "outcomes", the cross-entropy of the six results' distribution (``bgnet.trainer.learner.outcome_cross_entropy``)."""
    fit_window: int = 1
    """Fit round r on the labels of rounds r - fit_window + 1 to r (kept or dropped: a dropped round's labels
    came from the same current net), so the training set grows across rounds instead of being replaced; 1: the
    round's own labels only. With ``kind`` other than "all" it must be 1."""
    kind: str = "all"
    """"all": one net for every position; "contact", "crashed" or "race": the positions of that kind
    only, fitted into that kind's net of a NetSet (a copy of the contact net the first time)."""

    @property
    def group_size(self) -> int:
        """Rows per group of siblings in a round's labels and fit: ``candidates`` with a rank weight, else 1."""
        return self.candidates if self.rank_weight > 0 else 1


@dataclass
class RoundResult:
    """One round's outcome as stored in state.json."""

    round: int
    positions: int
    label_seconds: float
    fit_seconds: float
    fit_mse: float
    duel_ppg: float
    duel_ci95: float
    kept: bool


@dataclass
class State:
    """Progress of a rounds run."""

    config: dict[str, Any]
    init: str
    done: list[dict[str, Any]] = field(default_factory=list)


def round_seed(seed: int, round_no: int, stream: int) -> int:
    """The seed of one stream (0 self-play, 1 labels, 2 fit, 3 duel, 4 candidate rolls) of one round."""
    return int(np.random.SeedSequence([seed, round_no, stream]).generate_state(1)[0])


def probs_fn_of(net: BgNet) -> ProbsFn:
    """Boards -> probabilities of ``net`` on the CPU (its own feature version)."""
    from bgnet.trainer.inference import make_probs_fn

    return make_probs_fn(net, torch.device("cpu"))


def collect_positions(probs_fn: ProbsFn, n: int, seed: int, batch_games: int = 256,
                      exploration: float = 0.05) -> np.ndarray:
    """``n`` positions (each seen from its side on roll, games not over) sampled from self-play of ``probs_fn``."""
    play = SelfPlay(batch_games, seed=seed)
    rng = np.random.default_rng(seed)
    pools: list[np.ndarray] = []
    have = 0
    while have < 2 * n:  # play twice as many as needed, then sample: fewer positions from any one game
        for t in play.step(probs_fn, exploration):
            live = t.boards[gk.terminal_codes(np.ascontiguousarray(t.boards, np.int8)) == 0]
            pools.append(live)
            have += len(live)
    pool = np.concatenate(pools)
    return np.ascontiguousarray(pool[np.sort(rng.choice(len(pool), n, replace=False))], np.int8)


def candidate_positions(probs_fn: ProbsFn, boards: np.ndarray, k: int, n: int, seed: int,
                        grouped: bool = False) -> np.ndarray:
    """``n`` positions among the ``k`` best plays' afterstates (at 0-ply) of each board for a random roll.

    These are the positions between which a 0-ply move is chosen, each turned round so that its
    side on roll is the one about to reply; games that are over are left out. Sampled without
    replacement from all the candidates (all of them when there are fewer than ``n``); with
    ``grouped``, ``n // k`` boards' whole groups of ``k`` instead, best first and consecutive
    (boards with fewer than ``k`` such plays are left out).
    """
    from bgnet.core.movegen import generate_afterstates, swap_sides_batch
    from bgnet.core.probs import equities

    rng = np.random.default_rng(seed)
    dice = rng.integers(1, 7, size=(len(boards), 2)).astype(np.int8)
    picked: list[np.ndarray] = []
    for lo in range(0, len(boards), 4096):
        after, offsets = generate_afterstates(boards[lo:lo + 4096], dice[lo:lo + 4096])
        replies = swap_sides_batch(after)
        live = gk.terminal_codes(replies) == 0
        mover = -equities(probs_fn(replies))  # the equity each play leaves its mover
        for i in range(len(offsets) - 1):
            a, b = offsets[i], offsets[i + 1]
            order = a + np.argsort(-mover[a:b], kind="stable")[:k]
            order = order[live[order]]
            if not grouped or len(order) == k:
                picked.append(replies[order])
    if grouped:
        chosen = np.sort(rng.choice(len(picked), min(n // k, len(picked)), replace=False))
        picked = [picked[i] for i in chosen]
    pool = np.concatenate(picked) if picked else np.zeros((0, 26), np.int8)
    if not grouped and len(pool) > n:
        pool = pool[np.sort(rng.choice(len(pool), n, replace=False))]
    return np.ascontiguousarray(pool, np.int8)


def collect_kind_positions(probs_fn: ProbsFn, n: int, seed: int, kind: str, batch_games: int = 256,
                           exploration: float = 0.05) -> np.ndarray:
    """``n`` self-play positions of one kind (``bgnet.features.encoding.KINDS``), from as many sampled positions as it takes."""
    code = KINDS.index(kind)
    found: list[np.ndarray] = []
    have, batch = 0, 0
    while have < n:
        boards = collect_positions(probs_fn, max(1000, 2 * (n - have)), seed + 7919 * batch, batch_games, exploration)
        boards = boards[position_kinds(boards) == code]
        found.append(boards)
        have += len(boards)
        batch += 1
    return np.ascontiguousarray(np.concatenate(found)[:n], np.int8)


def check_label_top(label: str, top: int) -> None:
    """ValueError unless ``top`` (``--label-top``) is 0, or above 0 with a search label (ply1, ply2)."""
    if top < 0 or (top > 0 and label == "rollout"):
        raise ValueError("--label-top must be 0, or above 0 with --label ply1 or ply2")


def label_positions(probs_fn: ProbsFn, boards: np.ndarray, label: str, seed: int, trials: int = 36,
                    workers: int = 1, top: int = 0) -> np.ndarray:
    """Targets (N, 5) for ``boards``: the net's 1-ply or 2-ply search (its last level among pubeval's best
    ``top`` plays of each roll when ``top`` > 0), or its rollouts, in ``workers`` processes."""
    if label not in LABELS:
        raise ValueError(f"label {label!r} is not one of {', '.join(LABELS)}")
    check_label_top(label, top)
    backend = LocalBackend(workers) if workers > 1 else None
    if label == "rollout":
        _, probs, _ = rollout.label_positions(probs_fn, boards, trials=trials, seed=seed, backend=backend)
    else:
        ply = int(label[-1])
        chunk = 2048 // len(ROLLS) ** (ply - 1)  # each ply multiplies the boards searched by the 21 rolls: bound memory
        _, probs, _ = rollout.label_positions(probs_fn, boards, ply=ply, batch=chunk, backend=backend,
                                              last_level_top=top)
    return np.asarray(probs, np.float32)


def fit_copy(net: BgNet, boards: np.ndarray, targets: np.ndarray, cfg: RoundsConfig, seed: int) -> tuple[BgNet, float]:
    """A copy of ``net`` (widened to ``cfg.hidden`` if asked) fitted to (boards, targets); the last epoch's mean
    squared error."""
    torch.manual_seed(seed)
    cand = BgNet(net.config)
    cand.load_state_dict(net.state_dict())
    widths = student_widths(cfg, net.config.hidden)
    if widths != net.config.hidden:
        from bgnet.nets.model import widen_hidden

        cand = widen_hidden(cand, widths, seed=seed)
    optimizer = torch.optim.Adam(cand.parameters(), lr=cfg.lr)
    steps = cfg.epochs * -(-len(boards) // cfg.minibatch)
    scheduler = (torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max(steps, 1))
                 if cfg.schedule == "cosine" else None)
    rng = np.random.default_rng(seed)
    mse = float("nan")
    for _ in range(cfg.epochs):
        mse = fit(cand, optimizer, boards, targets, cfg.minibatch, 1, rng, torch.device("cpu"), scheduler=scheduler,
                  group=cfg.group_size, rank_weight=cfg.rank_weight, loss=cfg.loss)
    return cand, mse


def _parse_widths(text: str) -> tuple[int, ...]:
    """``--hidden`` as widths ("512,256" -> (512, 256)); () when empty; ValueError for anything else."""
    if not text.strip():
        return ()
    try:
        widths = tuple(int(w) for w in text.split(","))
    except ValueError:
        raise ValueError(f"--hidden {text!r} is not a list of widths such as 512,256") from None
    if any(w < 1 for w in widths):
        raise ValueError(f"--hidden {text!r} has a width below 1")
    return widths


def student_widths(cfg: RoundsConfig, current: tuple[int, ...]) -> tuple[int, ...]:
    """The hidden widths a round fits into a net of widths ``current``: ``cfg.hidden``, or ``current`` when it
    is empty; ValueError when the net cannot be widened to them (checked before a round labels anything)."""
    from bgnet.nets.model import check_widening

    widths = _parse_widths(cfg.hidden)
    if not widths:
        return tuple(current)
    check_widening(current, widths)
    return widths


def duel(a: ProbsFn, b: ProbsFn, pairs: int, seed: int) -> tuple[float, float]:
    """(points per game for ``a``, 95% half-width) over ``pairs`` paired cubeless games at 0-ply."""
    from bgnet.sim.duel import NeuralScorer, paired_duel

    res = paired_duel(NeuralScorer(a), NeuralScorer(b), pairs, seed)
    return float(res.ppg), float(res.ci95)


def _write_json(path: Path, data: Any) -> None:
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh, indent=1)
    os.replace(tmp, path)


def _save_npz(path: Path, **arrays: np.ndarray) -> None:
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "wb") as fh:
        np.savez(fh, **arrays)  # type: ignore[arg-type]  # numpy's stub matches **arrays against allow_pickle
    os.replace(tmp, path)


def _round_labels(out_dir: Path, r: int, cfg: RoundsConfig, fn: ProbsFn,
                  positions: Callable[[], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Round ``r``'s (boards, targets): read from its labels file, or collected, labelled and saved first.

    With ``cfg.label_chunk`` the positions are saved first (``positions_NNN.npz``) and labelled part by part,
    each part's seed hashed from the round's and the part number, so a resumed round labels only the parts missing.
    """
    labels_path = out_dir / f"labels_{r:03d}.npz"
    if labels_path.is_file():
        with np.load(labels_path, allow_pickle=False) as data:
            return data["boards"], data["targets"]
    seed = round_seed(cfg.seed, r, 1)
    if cfg.label_chunk <= 0:
        boards = positions()
        targets = label_positions(fn, boards, cfg.label, seed, cfg.rollout_trials, cfg.workers, cfg.label_top)
    else:
        boards_path = out_dir / f"positions_{r:03d}.npz"
        if boards_path.is_file():
            with np.load(boards_path, allow_pickle=False) as data:
                boards = data["boards"]
        else:
            boards = positions()
            _save_npz(boards_path, boards=boards)
        parts = []
        for k, s in enumerate(range(0, len(boards), cfg.label_chunk)):
            part_path = out_dir / f"labels_{r:03d}_part_{k:03d}.npz"
            if part_path.is_file():
                with np.load(part_path, allow_pickle=False) as data:
                    parts.append(data["targets"])
                continue
            part_seed = int(np.random.SeedSequence([seed, k]).generate_state(1)[0])
            parts.append(label_positions(fn, boards[s:s + cfg.label_chunk], cfg.label, part_seed, cfg.rollout_trials,
                                         cfg.workers, cfg.label_top))
            _save_npz(part_path, targets=parts[-1])
        targets = np.concatenate(parts)
    _save_npz(labels_path, boards=boards, targets=targets)
    for stale in [out_dir / f"positions_{r:03d}.npz", *out_dir.glob(f"labels_{r:03d}_part_*.npz")]:
        stale.unlink(missing_ok=True)
    return boards, targets


def window_labels(out_dir: Path, r: int, window: int, boards: np.ndarray,
                  targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Round ``r``'s (boards, targets) with those of the ``window - 1`` rounds before it appended (oldest first).

    Each labels file holds whole groups of siblings, so the concatenation keeps them whole."""
    older = [out_dir / f"labels_{k:03d}.npz" for k in range(max(1, r - window + 1), r)]
    if not older:
        return boards, targets
    all_boards, all_targets = [], []
    for path in older:
        with np.load(path, allow_pickle=False) as data:
            all_boards.append(data["boards"])
            all_targets.append(data["targets"])
    return np.concatenate([*all_boards, boards]), np.concatenate([*all_targets, targets])


def round_positions(fn: ProbsFn, cfg: RoundsConfig, r: int) -> np.ndarray:
    """The positions round ``r`` labels: self-play positions, or their best plays' afterstates (``cfg.candidates``)."""
    grouped = cfg.group_size > 1
    # whole groups need only positions // k boards (twice that, for those with fewer than k plays)
    n_boards = min(cfg.positions, 2 * (cfg.positions // cfg.candidates)) if grouped else cfg.positions
    boards = collect_positions(fn, n_boards, round_seed(cfg.seed, r, 0), cfg.batch_games, cfg.exploration)
    if cfg.candidates > 0:
        boards = candidate_positions(fn, boards, cfg.candidates, cfg.positions, round_seed(cfg.seed, r, 4), grouped)
    return boards


def run_rounds(init: str, out: str | os.PathLike[str], cfg: RoundsConfig,
               log: Callable[[str], None] = print) -> State:
    """Run (or continue) the rounds in folder ``out`` from checkpoint ``init``; the final state."""
    if cfg.label not in LABELS:
        raise ValueError(f"label {cfg.label!r} is not one of {', '.join(LABELS)}")
    if cfg.keep not in ("mean", "significant"):
        raise ValueError("keep must be mean or significant")
    if cfg.kind not in ROUND_KINDS:
        raise ValueError(f"kind {cfg.kind!r} is not one of {', '.join(ROUND_KINDS)}")
    if cfg.workers < 1 or cfg.label_chunk < 0:
        raise ValueError("--workers must be at least 1 and --label-chunk 0 or more")
    check_label_top(cfg.label, cfg.label_top)
    if cfg.candidates < 0:
        raise ValueError("--candidates must be 0 or more")
    if cfg.candidates and cfg.kind != "all":
        raise ValueError("--candidates works with --kind all only")
    if cfg.rank_weight < 0 or (cfg.rank_weight > 0 and (cfg.candidates < 2 or cfg.minibatch % cfg.candidates)):
        raise ValueError("--rank-weight must be 0, or above 0 with --candidates 2 or more that divides --minibatch")
    if cfg.schedule not in ("constant", "cosine"):
        raise ValueError(f"schedule {cfg.schedule!r} is not constant or cosine")
    check_loss(cfg.loss)  # before any labelling, not after it when the fit starts
    if cfg.fit_window < 1 or (cfg.fit_window > 1 and cfg.kind != "all"):
        raise ValueError("--fit-window must be at least 1, and 1 with --kind")
    _parse_widths(cfg.hidden)
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    state_path = out_dir / "state.json"
    current_path = out_dir / "current.pt"
    if state_path.is_file():
        state = State(**json.loads(state_path.read_text()))
        stored = {**asdict(RoundsConfig()), **state.config}  # fields added since the run began take their defaults
        # may change between sittings: rounds and workers change nothing a round computes, fit_window only the
        # fits of rounds still to run
        free = ("rounds", "workers", "fit_window")
        same = ({k: v for k, v in stored.items() if k not in free}
                == {k: v for k, v in asdict(cfg).items() if k not in free})
        if not same or state.init != str(init):
            raise ValueError(f"{state_path} was made with other settings or another --init; use a new --out")
        state.config["rounds"] = cfg.rounds  # more rounds may be asked for later
    else:
        state = State(config=asdict(cfg), init=str(init))
        if cfg.kind == "all":
            save_checkpoint(current_path, net_from_checkpoint(read_checkpoint(init), f"checkpoint {str(init)!r}"),
                            rounds_source=str(init))
        else:
            save_netset(current_path, netset_from_checkpoint(read_checkpoint(init), f"checkpoint {str(init)!r}"),
                        rounds_source=str(init))
        _write_json(state_path, asdict(state))
    torch.set_num_threads(1)
    if cfg.kind != "all":
        return _run_kind_rounds(out_dir, cfg, state, str(init), log)
    for r in range(len(state.done) + 1, cfg.rounds + 1):
        net = net_from_checkpoint(read_checkpoint(current_path), "the current net")
        student_widths(cfg, net.config.hidden)
        fn = probs_fn_of(net)
        t0 = time.perf_counter()
        boards, targets = _round_labels(out_dir, r, cfg, fn, lambda: round_positions(fn, cfg, r))
        t1 = time.perf_counter()
        fit_boards, fit_targets = window_labels(out_dir, r, cfg.fit_window, boards, targets)
        cand, mse = fit_copy(net, fit_boards, fit_targets, cfg, round_seed(cfg.seed, r, 2))
        t2 = time.perf_counter()
        ppg, ci = duel(probs_fn_of(cand), fn, cfg.duel_pairs, round_seed(cfg.seed, r, 3))
        save_checkpoint(out_dir / f"round_{r:03d}.pt", cand, rounds_source=str(init), round=r)
        _record_round(out_dir, state, cfg, RoundResult(r, len(boards), round(t1 - t0, 1), round(t2 - t1, 1), mse, ppg,
                                                       ci, _kept(cfg, ppg, ci)), f"round {r}", "the current net", log)
    return state


def _kept(cfg: RoundsConfig, ppg: float, ci: float) -> bool:
    """Whether a round's fitted net wins its duel by ``cfg.keep``'s rule (any margin, or beyond its interval)."""
    return ppg > ci if cfg.keep == "significant" else ppg > 0


def _record_round(out_dir: Path, state: State, cfg: RoundsConfig, res: RoundResult, name: str, against: str,
                  log: Callable[[str], None]) -> None:
    """Make the saved ``round_NNN.pt`` the current net when it was kept, store the round in state.json, log it."""
    if res.kept:
        shutil.copyfile(out_dir / f"round_{res.round:03d}.pt", out_dir / "current.pt.tmp")
        os.replace(out_dir / "current.pt.tmp", out_dir / "current.pt")
    state.done.append(asdict(res))
    _write_json(out_dir / "state.json", asdict(state))
    log(f"{name}: {res.positions} positions labelled ({cfg.label}) in {res.label_seconds:.0f} s, fit mse "
        f"{res.fit_mse:.5f}; duel vs {against} {res.duel_ppg:+.3f} +- {res.duel_ci95:.3f} ppg over {cfg.duel_pairs} "
        f"pairs: {'kept' if res.kept else 'dropped'}")


def _run_kind_rounds(out_dir: Path, cfg: RoundsConfig, state: State, init: str, log: Callable[[str], None]) -> State:
    """The rounds of one kind's net: its positions only, fitted into that net, duelled as whole NetSets."""
    for r in range(len(state.done) + 1, cfg.rounds + 1):
        netset = netset_from_checkpoint(read_checkpoint(out_dir / "current.pt"), "the current nets")
        student_widths(cfg, netset.net_for(cfg.kind).config.hidden)
        t0 = time.perf_counter()
        boards, targets = _round_labels(out_dir, r, cfg, netset.probs_of_boards, lambda: collect_kind_positions(
            netset.probs_of_boards, cfg.positions, round_seed(cfg.seed, r, 0), cfg.kind, cfg.batch_games,
            cfg.exploration))
        t1 = time.perf_counter()
        fitted, mse = fit_copy(netset.net_for(cfg.kind), boards, targets, cfg, round_seed(cfg.seed, r, 2))
        cand = NetSet({**netset.nets, cfg.kind: fitted}, netset.bearoff)
        t2 = time.perf_counter()
        ppg, ci = duel(cand.probs_of_boards, netset.probs_of_boards, cfg.duel_pairs, round_seed(cfg.seed, r, 3))
        save_netset(out_dir / f"round_{r:03d}.pt", cand, rounds_source=init, round=r)
        _record_round(out_dir, state, cfg, RoundResult(r, len(boards), round(t1 - t0, 1), round(t2 - t1, 1), mse, ppg,
                                                       ci, _kept(cfg, ppg, ci)), f"round {r} ({cfg.kind} net)",
                      "the current nets", log)
    return state


def widen_main(argv: list[str]) -> int:
    """``widen SRC DST [--feature-version 2]``: SRC's net on a later feature version, the same function (bgnet.nets.model.widen)."""
    ap = argparse.ArgumentParser(prog="python -m bgnet.trainer.rounds widen", description=widen_main.__doc__)
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--feature-version", type=int, default=2)
    ap.add_argument("--hidden", type=int, nargs="+", help="also widen the hidden layers to these widths (Net2Net)")
    ap.add_argument("--seed", type=int, default=0, help="which units the new hidden units copy")
    args = ap.parse_args(argv)
    from bgnet.nets.model import widen, widen_hidden

    try:
        net = widen(net_from_checkpoint(read_checkpoint(args.src), f"checkpoint {args.src!r}"), args.feature_version)
        if args.hidden:
            net = widen_hidden(net, args.hidden, seed=args.seed)
    except (ValueError, CheckpointError) as exc:
        print(f"bgnet.trainer.rounds widen: error: {exc}", file=sys.stderr)
        return 2
    save_checkpoint(args.dst, net, widened_from=str(args.src))
    print(f"{args.dst}: {args.src} on features version {args.feature_version} ({net.config.num_features} inputs), "
          f"hidden {list(net.config.hidden)}")
    return 0


def _combine_main(argv: list[str], command: str, doc: str, combine: Callable[[list[BgNet]], BgNet],
                  what: str, key: str) -> int:
    """``COMMAND DST CKPT CKPT ...``: write the net ``combine`` makes of the checkpoints' nets."""
    ap = argparse.ArgumentParser(prog=f"python -m bgnet.trainer.rounds {command}", description=doc)
    ap.add_argument("dst")
    ap.add_argument("checkpoints", nargs="+")
    args = ap.parse_args(argv)
    try:
        nets = [net_from_checkpoint(read_checkpoint(p), f"checkpoint {p!r}") for p in args.checkpoints]
        net = combine(nets)
    except (ValueError, CheckpointError) as exc:
        print(f"bgnet.trainer.rounds {command}: error: {exc}", file=sys.stderr)
        return 2
    save_checkpoint(args.dst, net, **{key: [str(p) for p in args.checkpoints]})
    print(f"{args.dst}: {what} of {len(nets)} nets, hidden {list(net.config.hidden)}")
    return 0


def average_main(argv: list[str]) -> int:
    """``average DST CKPT CKPT ...``: a net whose weights are the mean of the checkpoints' (bgnet.nets.model.average_nets)."""
    from bgnet.nets.model import average_nets

    return _combine_main(argv, "average", average_main.__doc__ or "", average_nets, "the mean", "averaged_from")


def committee_main(argv: list[str]) -> int:
    """``committee DST CKPT CKPT ...``: one wider net computing the checkpoints' committee (bgnet.nets.model.committee_net)."""
    from bgnet.nets.model import committee_net

    return _combine_main(argv, "committee", committee_main.__doc__ or "", committee_net, "the committee",
                         "committee_of")


def refit(run: str | os.PathLike[str], start: str, r: int, fit_window: int | None = None,
          hidden: str | None = None, with_labels: tuple[str, ...] = ()) -> tuple[BgNet, float, int]:
    """Round ``r`` of the rounds run in folder ``run`` fitted again: ``start``'s net fitted to the labels of rounds
    r - fit_window + 1 to r, with the run's settings (``hidden`` and ``fit_window`` may differ) and round r's fit
    seed, as ``run_rounds`` would have; (net, last epoch's squared error, labels fitted). Labels already made are
    reused, so a wider net or window is tried without labelling again; ``with_labels`` are other runs' labels
    files, fitted too (put before the window's, in the order given)."""
    run_dir = Path(run)
    state_path = run_dir / "state.json"
    if not state_path.is_file():
        raise ValueError(f"{str(run)!r} is not the folder of a rounds run (it has no state.json)")
    try:
        cfg = RoundsConfig(**{**asdict(RoundsConfig()), **json.loads(state_path.read_text())["config"]})
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{str(state_path)!r} is not a rounds run's state ({exc!r})") from None
    if cfg.kind != "all":
        raise ValueError("refit works with runs of --kind all only")
    if fit_window is not None:
        cfg.fit_window = fit_window
    if hidden is not None:
        cfg.hidden = hidden
    if cfg.fit_window < 1:
        raise ValueError("--fit-window must be at least 1")
    paths = [run_dir / f"labels_{k:03d}.npz" for k in range(max(1, r - cfg.fit_window + 1), r + 1)]
    missing = [p.name for p in paths if not p.is_file()]
    if r < 1 or missing:
        raise ValueError(f"{str(run)!r} has no labels for round {r}" + (f" ({', '.join(missing)})" if missing else ""))
    net = net_from_checkpoint(read_checkpoint(start), f"checkpoint {start!r}")
    student_widths(cfg, net.config.hidden)
    with np.load(paths[-1], allow_pickle=False) as data:
        boards, targets = data["boards"], data["targets"]
    boards, targets = window_labels(run_dir, r, cfg.fit_window, boards, targets)
    if with_labels:
        extra = [_labels_file(path, boards.shape[1:], targets.shape[1:], cfg.group_size) for path in with_labels]
        boards = np.concatenate([*(b for b, _ in extra), boards])
        targets = np.concatenate([*(t for _, t in extra), targets])
    torch.set_num_threads(1)
    fitted, mse = fit_copy(net, boards, targets, cfg, round_seed(cfg.seed, r, 2))
    return fitted, mse, len(boards)


def _labels_file(path: str, board_shape: tuple[int, ...], target_shape: tuple[int, ...],
                 group: int) -> tuple[np.ndarray, np.ndarray]:
    """(boards, targets) of a rounds run's labels file, checked to match a run's labels (shapes, whole groups)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            boards, targets = data["boards"], data["targets"]
    except (OSError, KeyError, ValueError) as exc:
        raise ValueError(f"{path!r} is not a labels file of a rounds run ({exc})") from None
    if (boards.shape[1:] != board_shape or targets.shape[1:] != target_shape or len(boards) != len(targets)
            or len(boards) % group):
        raise ValueError(f"{path!r} does not hold labels like the run's (boards {board_shape}, targets "
                         f"{target_shape}, whole groups of {group})")
    return boards, targets


def refit_main(argv: list[str]) -> int:
    """``refit RUN DST --start CKPT --round R [--fit-window W] [--hidden WIDTHS] [--with-labels NPZ ...]``:
    round R of run RUN fitted again (``refit``), written to DST."""
    ap = argparse.ArgumentParser(prog="python -m bgnet.trainer.rounds refit", description=refit_main.__doc__)
    ap.add_argument("run", help="folder of a rounds run, with its labels_NNN.npz")
    ap.add_argument("dst")
    ap.add_argument("--start", required=True, help="checkpoint of the net to fit")
    ap.add_argument("--round", type=int, required=True, help="the round whose labels (and fit seed) to use")
    ap.add_argument("--fit-window", type=int, help="labels of this many rounds up to --round (default: the run's)")
    ap.add_argument("--hidden", help="widths to widen the net to first, e.g. 768,384 (default: the run's)")
    ap.add_argument("--with-labels", nargs="+", default=[], metavar="NPZ",
                    help="other runs' labels files to fit as well (before the window's)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    try:
        net, mse, n = refit(args.run, args.start, args.round, args.fit_window, args.hidden, tuple(args.with_labels))
    except (ValueError, CheckpointError) as exc:
        print(f"bgnet.trainer.rounds refit: error: {exc}", file=sys.stderr)
        return 2
    save_checkpoint(args.dst, net, rounds_source=str(args.start), round=args.round, refit_of=str(args.run),
                    with_labels=list(args.with_labels))
    print(f"{args.dst}: {args.start} fitted to {n} labels of {args.run} (round {args.round}), hidden "
          f"{list(net.config.hidden)}, fit mse {mse:.5f} in {time.perf_counter() - t0:.0f} s")
    return 0


def duel_netset(path: str, opponent: str, games: int, seed: int, bearoff: bool = True,
                chunk: int = 256) -> Any:
    """A paired cubeless duel of the NetSet in checkpoint ``path`` (its nets by kind, the bear-off database when
    ``bearoff``) against agent ``opponent`` (as ``python -m eval`` names them), on the deals and dice of
    ``python -m eval A B --games games --seed seed``; the DuelResult for the NetSet."""
    from bgnet.play.agents import load_agent
    from bgnet.sim.duel import NeuralScorer, play_cubeless
    from bgnet.sim.duel_stats import summarise_outcomes
    from bgnet.sim.runner import DuelSpec
    from bgnet.nets.model import load_netset

    netset = load_netset(path)
    netset.bearoff = bearoff
    spec = DuelSpec(path, opponent, games // 2, seed)
    opp = load_agent(opponent, seed=spec.agent_seed(1)).batch_scorer()
    if opp is None:
        raise ValueError(f"agent {opponent!r} has no batch scorer")
    mine = NeuralScorer(netset)
    outcomes = []
    for lo in range(0, games // 2, chunk):
        outcomes += play_cubeless(mine, opp, range(lo, min(lo + chunk, games // 2)), seed)
    return summarise_outcomes(outcomes)


def duel_main(argv: list[str]) -> int:
    """``duel CKPT OPPONENT [--games N] [--seed S] [--no-bearoff]``: a NetSet checkpoint in a paired duel."""
    ap = argparse.ArgumentParser(prog="python -m bgnet.trainer.rounds duel", description=duel_main.__doc__)
    ap.add_argument("checkpoint")
    ap.add_argument("opponent")
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-bearoff", action="store_true", help="the nets alone, without the bear-off database")
    args = ap.parse_args(argv)
    try:
        res = duel_netset(args.checkpoint, args.opponent, args.games, args.seed, not args.no_bearoff)
    except (ValueError, CheckpointError) as exc:
        print(f"bgnet.trainer.rounds duel: error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.checkpoint} ({'nets + bear-off database' if not args.no_bearoff else 'nets only'}) vs {args.opponent}: "
          f"{res.games} games, seed {args.seed}: {res.ppg:+.3f} +- {res.ci95:.3f} ppg (95%), win rate {res.win_rate:.3f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command line: see the module docstring."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "widen":
        return widen_main(argv[1:])
    if argv and argv[0] == "duel":
        return duel_main(argv[1:])
    if argv and argv[0] == "average":
        return average_main(argv[1:])
    if argv and argv[0] == "committee":
        return committee_main(argv[1:])
    if argv and argv[0] == "refit":
        return refit_main(argv[1:])
    d = RoundsConfig()
    ap = argparse.ArgumentParser(prog="python -m bgnet.trainer.rounds", description=__doc__.splitlines()[0])
    ap.add_argument("--init", required=True, help="checkpoint of the starting net (a TD run's last.pt or a release)")
    ap.add_argument("--out", required=True, help="folder of the run (continued when it exists)")
    for name, value in asdict(d).items():
        ap.add_argument("--" + name.replace("_", "-"), type=type(value), default=value)
    args = ap.parse_args(argv)
    cfg = RoundsConfig(**{k: getattr(args, k) for k in asdict(d)})
    try:
        state = run_rounds(args.init, args.out, cfg)
    except (ValueError, CheckpointError) as exc:
        print(f"bgnet.trainer.rounds: error: {exc}", file=sys.stderr)
        return 2
    kept = sum(1 for r in state.done if r["kept"])
    print(f"{len(state.done)} rounds done, {kept} kept; current net {Path(args.out) / 'current.pt'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
