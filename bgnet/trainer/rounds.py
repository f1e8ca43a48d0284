"""Training beyond TD: rounds of (self-play positions, labels from the net's own search, supervised fit, duel).

Each round r starts from the current net: it plays self-play games with it
(``exploration`` random plays keep the positions varied) and samples
``positions`` of the positions reached (``bgnet.trainer.round_positions``), labels each
with the net's own n-ply search (``bgnet.play.search.evaluate_boards``: the expectation
over all 21 rolls) or with rollouts (``bgnet.trainer.round_labels``), fits a copy of the
net to the labels (``bgnet.trainer.round_fit``; with ``fit_window`` W, those of the last W
rounds; mean squared error over the five outputs, Adam), and plays the copy against the
current net in a paired duel. The copy replaces the current net only when it wins that
duel (points per game > 0, or > its 95% interval with ``keep`` "significant"). Every
round's seeds come from ``seed`` and the round number, so the same settings give the
same rounds. ``python -m bgnet.trainer.rounds`` (``bgnet.cli.rounds``) is its command line.

The folder holds ``state.json`` (rounds done, the current net, every duel),
``round_NNN.pt`` (each round's fitted net) and ``current.pt`` (the net the
next round starts from). Running again continues after the last finished round
(``rounds`` may be raised to add rounds; the other settings must stay the same,
except ``workers``, ``fit_window`` and ``device``). With ``device`` "cuda" the search labels are computed on
the GPU (``bgnet.play.search_torch``).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

import torch

from bgnet.core.atomic import atomic_path, atomic_write, default_permissions
from bgnet.core.protocols import ProbsFn
from bgnet.nets.model import (NetSet, net_from_checkpoint, netset_from_checkpoint, read_checkpoint, save_checkpoint,
                              save_netset)
from bgnet.nets.bf16net import with_precision
from bgnet.trainer.inference import numpy_net_of, probs_fn_of
from bgnet.trainer.round_config import FREE_SETTINGS, RoundResult, RoundsConfig, RoundsError, State, round_seed
from bgnet.trainer.round_fit import fit_copy, student_widths
from bgnet.trainer.round_labels import round_labels, window_labels
from bgnet.trainer.round_positions import round_kind_positions, round_positions

__all__ = ["RoundsConfig", "RoundsError", "State", "duel", "run_rounds"]


def duel(a: ProbsFn, b: ProbsFn, pairs: int, seed: int) -> tuple[float, float]:
    """(points per game for ``a``, 95% half-width) over ``pairs`` paired cubeless games at 0-ply."""
    from bgnet.sim.duel import NeuralScorer, paired_duel

    res = paired_duel(NeuralScorer(a), NeuralScorer(b), pairs, seed)
    return float(res.ppg), float(res.ci95)


def _write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` atomically (a temporary file renamed into place)."""
    with atomic_write(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)


def _open_run(init: str, out_dir: Path, cfg: RoundsConfig) -> State:
    """The run's state: read from ``state.json`` (refused when made with other settings), or a new run whose
    current net is ``init``'s."""
    state_path = out_dir / "state.json"
    if state_path.is_file():
        state = State(**json.loads(state_path.read_text()))
        stored = {**asdict(RoundsConfig()), **state.config}  # fields added since the run began take their defaults
        same = ({k: v for k, v in stored.items() if k not in FREE_SETTINGS}
                == {k: v for k, v in asdict(cfg).items() if k not in FREE_SETTINGS})
        if not same or state.init != init:
            raise RoundsError(f"{state_path} was made with other settings or another --init; use a new --out")
        state.config["rounds"] = cfg.rounds  # more rounds may be asked for later
        return state
    state = State(config=asdict(cfg), init=init)
    current_path = out_dir / "current.pt"
    if cfg.kind == "all":
        save_checkpoint(current_path, net_from_checkpoint(read_checkpoint(init), f"checkpoint {init!r}"),
                        rounds_source=init)
    else:
        save_netset(current_path, netset_from_checkpoint(read_checkpoint(init), f"checkpoint {init!r}"),
                    rounds_source=init)
    _write_json(state_path, asdict(state))
    return state


def run_rounds(init: str, out: str | os.PathLike[str], cfg: RoundsConfig,
               log: Callable[[str], None] = print) -> State:
    """Run (or continue) the rounds in folder ``out`` from checkpoint ``init``; the final state."""
    cfg.check()
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    state = _open_run(str(init), out_dir, cfg)
    torch.set_num_threads(1)
    if cfg.kind != "all":
        return _run_kind_rounds(out_dir, cfg, state, str(init), log)
    for r in range(len(state.done) + 1, cfg.rounds + 1):
        net = net_from_checkpoint(read_checkpoint(out_dir / "current.pt"), "the current net")
        student_widths(cfg, net.config.hidden)
        fn = probs_fn_of(net)
        label_fn = fn if cfg.precision == "float32" else with_precision(numpy_net_of(net), cfg.precision)
        t0 = time.perf_counter()
        boards, targets = round_labels(out_dir, r, cfg, label_fn, lambda: round_positions(fn, cfg, r), net)
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
        with atomic_path(out_dir / "current.pt", permissions=default_permissions()) as tmp:
            shutil.copyfile(out_dir / f"round_{res.round:03d}.pt", tmp)
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
        fn = netset.probs_of_boards
        t0 = time.perf_counter()
        boards, targets = round_labels(out_dir, r, cfg, fn, lambda: round_kind_positions(fn, cfg, r), netset)
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


if __name__ == "__main__":
    import sys

    from bgnet.cli.rounds import main

    sys.exit(main())
