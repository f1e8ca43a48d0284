"""Rollout benchmarks: throughput against GNU Backgammon's own rollout, a full 1,296-trial rollout, variance reduction.

    python bench/rollout.py                 # every section (about 5 minutes on a 2-core machine)
    python bench/rollout.py --json          # one JSON object
    python bench/rollout.py --only gnubg    # one section: gnubg | full | vr | agree | cubeful
    python bench/rollout.py --only gnubg --precision bfloat16   # bgnet's net in float32 and bfloat16, side by side
    python bench/rollout.py --only gnubg --truncate 0 --plain    # plain rollouts played to the end

Sections:

* ``gnubg``: rollout games per second of ``bgnet.sim.rollout`` (the shipped net, 0-ply, one thread; pruned: its
  pruning net keeps each roll's 8 plays the net values, as ``bgnet rollout`` plays) and of the ``gnubg`` package's
  ``rollout`` command (its own nets, 0-ply, ``set threads 1``; pruned: its pruning nets) on the same position,
  trials, truncation and dice settings, without and with variance reduction (gnubg's lookahead, ours by luck);
* ``full``: wall time of a full (untruncated) 1,296-trial 0-ply cubeless rollout of the opening position
  (X to roll), chunks on two threads, with and without luck variance reduction;
* ``vr``: standard error and time (wall and CPU) of the same 1,296-trial rollout without luck VR and with
  five luck variants, interleaved and repeated, one thread;
* ``cubeful``: the cube played inside the trials against the cubeless rollout (time, cube decisions, the cube
  lines' standard errors with luck VR);
* ``agree``: ``bgnet.sim.rollout`` driven by GNU Backgammon's evaluator (``GnubgAgent(0).probs_fn``, gnubg-nn)
  against the gnubg package's own rollout of the same position and settings: the means must agree within
  their combined 95% interval.

gnubg is a reference here only (never imported by bgnet). Its text goes to C-level stdout, so it is
captured through ``os.dup2`` on file descriptor 1; its progress printing is switched on through the
exported ``fShowProgress`` flag, since that is how the text build prints a rollout's result.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one BLAS thread per worker
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import ctypes  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bgnet.core.position import Position  # noqa: E402
from bgnet.nets.bf16net import PRECISIONS  # noqa: E402
from bgnet.sim.rollout import RolloutSettings, rollout, thread_map  # noqa: E402

OPENING = "4HPwATDgc/ABMA"
"""The opening position, X to roll (gnubg: a game in progress with no dice rolled)."""
OPENING_MATCH_ID = "cAkAAAAAAAAA"
MIDGAME = "4HPwASik5+ABMA"
"""A middle game with contact for both sides (X: 24:2 13:4 8:3 6:4 5:1 3:1)."""
"""Money game, X on roll, no dice: the Match ID gnubg needs to roll out the position before the roll."""


# -- GNU Backgammon, driven through its command interpreter ----------------------------------


class Gnubg:
    """The gnubg package's command interpreter with its C stdout captured."""

    def __init__(self) -> None:
        import gnubg

        self.gnubg = gnubg
        self.libc = ctypes.CDLL(None)
        ctypes.c_int.in_dll(ctypes.CDLL(gnubg._gnubg.__file__), "fShowProgress").value = 1
        for c in ("set threads 1", "set player 0 human", "set player 1 human", "new session"):
            self.command(c)

    def command(self, cmd: str) -> str:
        """Run one command; returns what it printed."""
        sys.stdout.flush()
        fd, path = tempfile.mkstemp()
        saved = os.dup(1)
        os.dup2(fd, 1)
        try:
            self.gnubg.command(cmd)
        finally:
            self.libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
        with open(path) as fh:
            out = fh.read()
        os.close(fd)
        os.unlink(path)
        return out

    def rollout(self, position_id: str, match_id: str, trials: int, truncate: int | None, vr: bool, seed: int,
                prune: bool = True) -> dict[str, object]:
        """Roll out the position before the roll (cubeless, 0-ply); mean chances, stderrs and seconds."""
        self.gnubg.setgnubgid(f"{position_id}:{match_id}")
        for c in (f"set rollout trials {trials}", "set rollout cubeful off", "set rollout quasirandom on",
                  f"set rollout varredn {'on' if vr else 'off'}", f"set rollout seed {seed}",
                  f"set rollout truncation enable {'on' if truncate is not None else 'off'}",
                  f"set rollout truncation plies {truncate or 10}",
                  "set rollout bearofftruncation exact off", "set rollout bearofftruncation onesided off",
                  "set rollout chequerplay plies 0", f"set rollout chequerplay prune {'on' if prune else 'off'}",
                  "set rollout cubedecision plies 0", "set rollout truncation chequerplay plies 0",
                  "set rollout truncation cubedecision plies 0", "set rollout later enable off",
                  "set cache 1024", "set cache 1048576"):  # resizing empties gnubg's evaluation cache
            self.command(c)
        t0 = time.perf_counter()
        out = self.command("rollout")
        seconds = time.perf_counter() - t0
        final = out.split("Printing final results.")[-1]
        nums = re.search(r"^\s+([\d.]+) ([\d.]+) ([\d.]+) - ([\d.]+) ([\d.]+) ([\d.]+) CL ([+-][\d.]+)", final, re.M)
        errs = re.search(r"^\s*\[([\d.]+) ([\d.]+) ([\d.]+) - ([\d.]+) ([\d.]+) ([\d.]+) CL\s+([\d.]+)\]", final, re.M)
        games = re.search(r"^(\d+) games", final, re.M)
        if not nums or not errs or not games:
            raise RuntimeError(f"could not read gnubg's rollout output:\n{out[-2000:]}")
        w, wg, wb, _l, lg, lb, eq = (float(x) for x in nums.groups())
        sw, swg, swb, _sl, slg, slb, seq = (float(x) for x in errs.groups())
        return {"probs": [w, wg, wb, lg, lb], "stderr": [sw, swg, swb, slg, slb], "equity": eq, "equity_stderr": seq,
                "games": int(games.group(1)), "seconds": seconds}


# -- ours ---------------------------------------------------------------------------------------


def _net(prune: bool = True, precision: str = "float32"):
    """The release's evaluator as ``bgnet rollout`` loads it: with its pruning net (``prune``), or valuing every play;
    in ``precision`` (``bgnet rollout --precision``)."""
    from bgnet.play.agents import NeuralAgent, checkpoint_path

    return NeuralAgent(checkpoint_path("default"), 0, prune=prune, precision=precision).evaluator


def ours(probs_fn, position_id: str, trials: int, truncate: int | None, vr: bool, seed: int, workers: int = 1,
         chunk_size: int = 648, prune: int = 0, ply: int = 0, cube: bool = False, **more) -> dict[str, object]:
    """bgnet's rollout of the position before the roll (cubeless unless ``cube``); chances, stderrs, seconds.

    ``cpu_seconds`` is this process's CPU time: on a machine shared with other jobs it
    measures the work far more steadily than the wall time.
    """
    st = RolloutSettings(trials=trials, truncate=truncate, luck_vr=vr, bearoff=False, chunk_size=chunk_size,
                         prune=prune, ply=ply, **more)
    t0, c0 = time.perf_counter(), time.process_time()
    res = rollout(probs_fn, Position.from_position_id(position_id), settings=st, seed=seed, bearoff_fn=None,
                  map_fn=thread_map(workers) if workers > 1 else None, cube_in_trials=cube)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    c = res.candidates[0]
    out = {"probs": list(c.probs), "stderr": list(c.probs_stderr), "equity": c.equity,
           "equity_stderr": c.equity_stderr, "games": c.trials, "seconds": seconds, "cpu_seconds": cpu}
    if cube:
        out["cube"] = res.cube
        out["lines"] = {r.label: [r.cubeful_equity, r.cubeful_stderr] for r in res.candidates}
    return out


def _row(name: str, r: dict[str, object]) -> str:
    p = r["probs"]
    return (f"  {name:<34} {r['games']:5d} games {r['seconds']:7.2f} s {r['games'] / r['seconds']:8.1f} games/s  "
            f"win {p[0]:.3f}  eq {r['equity']:+.3f} +- {r['equity_stderr']:.3f}")


def section_gnubg(trials: int, truncate: int | None, seed: int, precision: str = "float32",
                  vr_rows: tuple[bool, ...] = (False, True)) -> dict[str, object]:
    """bgnet's rollouts against the gnubg package's (``truncate`` None: played to the end); with ``precision``
    bfloat16, bgnet's net in float32 and in bfloat16 side by side (the float32 row the reference); ``vr_rows``: the
    rows without variance reduction (False) and with it (True)."""
    precisions = ["float32"] + ([precision] if precision != "float32" else [])
    nets = {(prune, p): _net(prune, p) for prune in (True, False) for p in precisions}
    for vr in vr_rows:  # warm-up: compiled kernels, weights in cache
        for net in nets.values():
            ours(net, OPENING, 36, truncate, vr, seed)
    g = Gnubg()
    out: dict[str, object] = {"trials": trials, "truncate": truncate}
    for vr in vr_rows:
        for prune in (True, False):
            rows = {p: ours(nets[prune, p], OPENING, trials, truncate, vr, seed) for p in precisions}
            b = g.rollout(OPENING, OPENING_MATCH_ID, trials, truncate, vr, seed, prune=prune)
            key = ("vr" if vr else "plain") + ("_pruned" if prune else "_full")
            a = rows["float32"]
            out[key] = {"bgnet": a, "gnubg": b, "ratio": (a["games"] / a["seconds"]) / (b["games"] / b["seconds"])}
            print(f"[gnubg] {trials} trials, {'to the end' if truncate is None else f'truncated at {truncate} plies'}, "
                  "0-ply, one thread, "
                  f"{'with' if vr else 'without'} variance reduction, "
                  f"{'pruned (bgnet: its pruning net keeps 8 plays; gnubg: its pruning nets)' if prune else 'no pruning'}:")
            print(_row("bgnet (its net)", a))
            for p in precisions[1:]:
                r = rows[p]
                out[key][f"bgnet_{p}"] = r
                out[key][f"ratio_{p}"] = (r["games"] / r["seconds"]) / (b["games"] / b["seconds"])
                print(_row(f"bgnet (its net in {p})", r))
            print(_row("gnubg package (its nets)", b))
            print(f"  ratio bgnet / gnubg: {out[key]['ratio']:.2f}x"
                  + "".join(f"; in {p}: {out[key][f'ratio_{p}']:.2f}x" for p in precisions[1:]))
    return out


def section_full(seed: int, precision: str = "float32") -> dict[str, object]:
    net = _net(precision=precision)
    ours(net, OPENING, 36, 2, True, seed)
    out: dict[str, object] = {}
    for vr in (False, True):
        r = ours(net, OPENING, 1296, None, vr, seed, workers=2, chunk_size=324)
        out["vr" if vr else "plain"] = r
        print(f"[full] 1296-trial full 0-ply cubeless rollout of the opening position, 2 threads, "
              f"{'with' if vr else 'without'} luck VR:")
        print(_row("bgnet", r))
    return out


def section_vr(seed: int, trials: int = 1296, repeats: int = 3) -> dict[str, object]:
    import statistics

    net = _net()
    ours(net, OPENING, 36, 2, True, seed)
    variants = {"luck, the ranker's top 1, valued by the student (default)": {},
                "the same, valued by the release itself": {"luck_net": "net"},
                "luck, the ranker's top 2": {"luck_candidates": 2},
                "luck, pubeval's top 2 (before)": {"luck_ranker": "pubeval", "luck_candidates": 2},
                "luck, pubeval's top 1": {"luck_ranker": "pubeval", "luck_candidates": 1}}
    runs: dict[str, list[dict[str, object]]] = {"plain": [], **{k: [] for k in variants}}
    for _ in range(repeats):  # interleaved, so that each repeat sees about the same load
        runs["plain"].append(ours(net, OPENING, trials, None, False, seed))
        for name, kw in variants.items():
            runs[name].append(ours(net, OPENING, trials, None, True, seed, **kw))
    plain = runs["plain"][0]
    print(f"[vr] {trials}-trial full 0-ply rollout of the opening position, one thread, {repeats} interleaved repeats "
          "(medians of the per-repeat ratios):")
    print(_row("without VR (quasi-random dice only)", plain))
    out: dict[str, object] = {"plain": plain}
    for name in variants:
        r = runs[name][0]
        se_ratio = plain["equity_stderr"] / r["equity_stderr"]
        wall = statistics.median(v["seconds"] / p["seconds"] for v, p in zip(runs[name], runs["plain"]))
        cpu = statistics.median(v["cpu_seconds"] / p["cpu_seconds"] for v, p in zip(runs[name], runs["plain"]))
        print(_row(name, r))
        print(f"    stderr {se_ratio:.2f}x smaller at {wall:.2f}x the wall time, {cpu:.2f}x the CPU time "
              f"(variance x CPU time: {se_ratio ** 2 / cpu:.2f}x more efficient)")
        out[name] = {"run": r, "stderr_ratio": se_ratio, "time_ratio": wall, "cpu_ratio": cpu,
                     "wall_ratios": [v["seconds"] / p["seconds"] for v, p in zip(runs[name], runs["plain"])],
                     "cpu_ratios": [v["cpu_seconds"] / p["cpu_seconds"] for v, p in zip(runs[name], runs["plain"])]}
    # 1-ply checker play: the luck (judged at 0-ply) costs little next to the play itself.
    plain1 = ours(net, OPENING, 324, 7, False, seed, ply=1)
    vr1 = ours(net, OPENING, 324, 7, True, seed, ply=1)
    se1, t1 = plain1["equity_stderr"] / vr1["equity_stderr"], vr1["seconds"] / plain1["seconds"]
    c1 = vr1["cpu_seconds"] / plain1["cpu_seconds"]
    print("[vr] 324-trial 1-ply rollout of the opening position truncated at 7 plies, one thread:")
    print(_row("without VR", plain1))
    print(_row("with luck VR", vr1))
    print(f"  stderr {se1:.2f}x smaller at {t1:.2f}x the wall time, {c1:.2f}x the CPU time "
          f"(variance x CPU time: {se1 ** 2 / c1:.2f}x)")
    out["ply1"] = {"plain": plain1, "vr": vr1, "stderr_ratio": se1, "time_ratio": t1, "cpu_ratio": c1}
    return out


CUBE_POSITION = "eO8BAHDbtjkAAA"
"""X (on roll) has a closed board and three checkers on his 8-point; O has three on the bar: too good to double."""


def section_cubeful(seed: int, trials: int = 1296, truncate: int = 10) -> dict[str, object]:
    """The cube played inside the trials: what it costs, and the cube decisions it gives."""
    net = _net()
    ours(net, OPENING, 36, 2, True, seed, cube=True)
    out: dict[str, object] = {}
    for pid, name in ((OPENING, "opening position, X to roll"), (MIDGAME, "a middle game, X to roll"),
                      (CUBE_POSITION, "X far ahead with gammons")):
        cl = ours(net, pid, trials, truncate, True, seed)
        cf = ours(net, pid, trials, truncate, True, seed, cube=True)
        print(f"[cubeful] {trials} trials truncated at {truncate}, 0-ply, luck VR (cubeless, and each cube line charged the luck times its cube): {name} ({pid})")
        print(_row("cubeless (Janowski on the means)", cl))
        print(_row("cube played in every trial", cf))
        for label, (eq, se) in cf["lines"].items():
            print(f"    {label:<14} cubeful {eq:+.3f} +- {se:.3f}")
        print(f"    rolled out: {cf['cube']['proper_cube_action']}; Janowski on the rolled-out chances: "
              f"{cf['cube']['janowski_action']}; CPU time {cf['cpu_seconds'] / cl['cpu_seconds']:.2f}x the cubeless one")
        out[pid] = {"cubeless": cl, "cubeful": cf}
    return out


def section_agree(trials: int, truncate: int | None, seed: int) -> dict[str, object]:
    from bgnet.play.agents import GnubgAgent

    fn = GnubgAgent(0).probs_fn
    g = Gnubg()
    out: dict[str, object] = {}
    names = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
    for vr in (False, True):
        a = ours(fn, OPENING, trials, truncate, vr, seed)
        b = g.rollout(OPENING, OPENING_MATCH_ID, trials, truncate, vr, seed + 1, prune=False)
        rows = {}
        ok = True
        for i, name in enumerate(names + ("equity",)):
            x = a["equity"] if name == "equity" else a["probs"][i]
            y = b["equity"] if name == "equity" else b["probs"][i]
            sx = a["equity_stderr"] if name == "equity" else a["stderr"][i]
            sy = b["equity_stderr"] if name == "equity" else b["stderr"][i]
            # gnubg prints means and standard errors to three decimals: each may be off by 0.0005.
            bound = 1.96 * (sx ** 2 + (sy + 0.0005) ** 2) ** 0.5 + 0.0005
            rows[name] = {"bgnet": x, "gnubg": y, "diff": x - y, "bound95": bound, "agree": abs(x - y) <= bound}
            ok &= abs(x - y) <= bound
        print(f"[agree] gnubg's evaluator in bgnet.sim.rollout vs the gnubg package's rollout: {trials} trials, "
              f"truncated at {truncate}, 0-ply, cubeless, {'VR on both' if vr else 'no VR'} (gnubg: no pruning nets):")
        for name, r in rows.items():
            print(f"  {name:<16} bgnet {r['bgnet']:+.4f}  gnubg {r['gnubg']:+.4f}  diff {r['diff']:+.4f}  "
                  f"95% bound {r['bound95']:.4f}  {'ok' if r['agree'] else 'DISAGREE'}")
        print(f"  times: bgnet with gnubg-nn evaluator {a['seconds']:.1f} s, gnubg {b['seconds']:.1f} s; "
              f"{'all agree' if ok else 'SOME DISAGREE'}")
        out["vr" if vr else "plain"] = {"rows": rows, "agree": ok, "bgnet_seconds": a["seconds"],
                                        "gnubg_seconds": b["seconds"]}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", choices=("gnubg", "full", "vr", "agree", "cubeful"), default=None)
    parser.add_argument("--trials", type=int, default=1296, help="trials of the gnubg and agree sections")
    parser.add_argument("--truncate", type=int, default=7,
                        help="truncation of the gnubg and agree sections (0: every trial played to the end)")
    parser.add_argument("--plain", action="store_true",
                        help="the gnubg section's rollouts without variance reduction only (gnubg's lookahead "
                             "makes its rows with it slow to the end)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--precision", choices=PRECISIONS, default="float32",
                        help="the net's arithmetic in the gnubg section (beside float32) and the full section")
    args = parser.parse_args(argv)
    if args.truncate < 0:
        parser.error(f"--truncate takes a number of plies, or 0 for none, not {args.truncate}")
    truncate = args.truncate or None
    from bgnet.nets.bf16net import cpu_model, has_amx

    load, cpu, amx = os.getloadavg(), cpu_model(), has_amx()
    out: dict[str, object] = {"load_average": load, "cpu": cpu, "amx": amx}
    print(f"load average at start: {load[0]:.2f} on {os.cpu_count()} CPUs ({cpu}, AMX tiles: {amx})")
    if args.only in (None, "gnubg"):
        out["gnubg"] = section_gnubg(args.trials, truncate, args.seed, args.precision,
                                     (False,) if args.plain else (False, True))
    if args.only in (None, "full"):
        out["full"] = section_full(args.seed, args.precision)
    if args.only in (None, "vr"):
        out["vr"] = section_vr(args.seed)
    if args.only in (None, "cubeful"):
        out["cubeful"] = section_cubeful(args.seed)
    if args.only in (None, "agree"):
        out["agree"] = section_agree(args.trials, truncate, args.seed)
    if args.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
