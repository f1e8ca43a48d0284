"""``bgnet analyze`` speed and agreement with GNU Backgammon's own analysis of the same match files.

1. Speed: gnubg plays a seeded 7-point match against itself; bgnet analyses it at
   ``--ply`` (default 2) in this process, as ``bgnet analyze`` does (with the released
   net's pruning net) and with ``--no-prune`` (every reply valued), and gnubg analyses the
   same .mat at the same ply in the same run (all single-threaded).
2. Agreement: ``--matches`` seeded 5-point matches between gnubg players of
   different strength (chequer-play noise 0 to 0.08); per-player error rates from
   bgnet (at ``--corr-ply``) against gnubg's (2 ply): Pearson correlation over all
   players, and whether both name the same player as the weaker in each match.

    .venv/bin/python bench/analyze.py                   # about 2-3 minutes
    .venv/bin/python bench/analyze.py --matches 8 --corr-ply 2 --json
    .venv/bin/python bench/analyze.py --matches 0 --precision bfloat16   # the speed part, bfloat16 beside float32
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one thread, like gnubg here (set before numpy loads)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402

from make_match_fixtures import analyse, bench_set, play_match  # noqa: E402

from bgnet.app.analysis import analyse_match  # noqa: E402
from bgnet.app.answers import load_probs_fn  # noqa: E402
from bgnet.io.formats import read_match  # noqa: E402
from bgnet.nets.bf16net import PRECISIONS  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ply", type=int, default=2, help="ply of the timed 7-point analysis (default 2)")
    ap.add_argument("--seed", type=int, default=7, help="seed of the 7-point match")
    ap.add_argument("--matches", type=int, default=6, help="5-point matches for the agreement part (0 = skip)")
    ap.add_argument("--corr-ply", type=int, default=1, help="bgnet's ply in the agreement part (default 1)")
    ap.add_argument("--precision", choices=PRECISIONS, default="float32",
                    help="bfloat16: also time bgnet with its net in bfloat16 (``bf16:default``) in the same run")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    fn = load_probs_fn("default")  # what bgnet analyze uses: the released net with its pruning net
    full_fn = load_probs_fn("default", prune=False)
    report: dict[str, object] = {"python": platform.python_version(), "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        mat = Path(tmp) / "seven.mat"
        play_match(mat, 7, args.seed, (0.0, 0.04))
        match = read_match(mat)
        analyse_match(fn, read_match(mat), ply=0)  # warm-up: numba kernels from cache, first net call
        t0, c0 = time.perf_counter(), time.process_time()
        a = analyse_match(fn, match, ply=args.ply)
        ours, ours_cpu = time.perf_counter() - t0, time.process_time() - c0
        t0 = time.perf_counter()
        a_full = analyse_match(full_fn, match, ply=args.ply)
        full = time.perf_counter() - t0
        low = None
        if args.precision != "float32":
            low_fn = load_probs_fn("bf16:default")
            analyse_match(low_fn, read_match(mat), ply=0)  # warm-up: torch's first products
            t0 = time.perf_counter()
            a_low = analyse_match(low_fn, match, ply=args.ply)
            low = time.perf_counter() - t0
        k0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        stats, theirs = analyse(mat, args.ply)
        k1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        theirs_cpu = (k1.ru_utime + k1.ru_stime) - (k0.ru_utime + k0.ru_stime)
        load = os.getloadavg()[0]
        moves = sum(1 for d in a.decisions if d.kind == "move")
        report["speed"] = {"length": 7, "seed": args.seed, "games": len(match.games), "decisions": len(a.decisions),
                           "checker_decisions": moves, "ply": args.ply, "bgnet_seconds": round(ours, 2),
                           "bgnet_no_prune_seconds": round(full, 2),
                           "bgnet_cpu_seconds": round(ours_cpu, 2), "gnubg_seconds": round(theirs, 2),
                           "gnubg_cpu_seconds": round(theirs_cpu, 2), "load_average": round(load, 2),
                           "bgnet_overall_memg": [round(p.overall_error_rate_memg, 1) for p in a.players],
                           "bgnet_no_prune_overall_memg": [round(p.overall_error_rate_memg, 1) for p in a_full.players],
                           "gnubg_overall_memg": [p["overall_error_rate_memg"] for p in stats["players"]]}  # type: ignore[index]
        if low is not None:
            report["speed"].update({f"bgnet_{args.precision}_seconds": round(low, 2),  # type: ignore[union-attr]
                                    f"bgnet_{args.precision}_overall_memg":
                                        [round(p.overall_error_rate_memg, 1) for p in a_low.players]})
        if not args.json:
            s = report["speed"]
            print(f"7-point match, {s['games']} games, {s['decisions']} decisions ({moves} checker plays), "  # type: ignore[index]
                  f"{args.ply} ply: bgnet {ours:.1f} s wall ({ours_cpu:.1f} s CPU; --no-prune {full:.1f} s"
                  + ("" if low is None else f"; {args.precision} {low:.1f} s") + "), "
                  f"gnubg {theirs:.1f} s wall ({theirs_cpu:.1f} s CPU); load average {load:.1f}")
        rows = []
        for name, length, seed, n0, n1 in bench_set(args.matches):
            path = Path(tmp) / f"{name}.mat"
            play_match(path, length, seed, (n0, n1))
            g_stats, _ = analyse(path, 2)
            b = analyse_match(fn, read_match(path), ply=args.corr_ply)
            for seat in (0, 1):
                gp = g_stats["players"][seat]  # type: ignore[index]
                bp = b.players[seat]
                rows.append({"match": name, "seat": seat, "noise": (n0, n1)[seat],
                             "gnubg_checker": gp["checker_error_rate_memg"], "gnubg_overall": gp["overall_error_rate_memg"],
                             "bgnet_checker": round(bp.checker_error_rate_memg, 1),
                             "bgnet_overall": round(bp.overall_error_rate_memg, 1),
                             "gnubg_unforced": gp["unforced_moves"], "bgnet_unforced": bp.unforced_moves})
            if not args.json:
                r0, r1 = rows[-2], rows[-1]
                print(f"{name}: noise {n0}/{n1}: gnubg overall {r0['gnubg_overall']}/{r1['gnubg_overall']}, "
                      f"bgnet {r0['bgnet_overall']}/{r1['bgnet_overall']} mEMG")
        if rows:
            corr = {k: float(np.corrcoef([r[f"gnubg_{k}"] for r in rows], [r[f"bgnet_{k}"] for r in rows])[0, 1])
                    for k in ("checker", "overall")}
            same = sum(1 for i in range(0, len(rows), 2)
                       if (rows[i]["gnubg_overall"] > rows[i + 1]["gnubg_overall"])
                       == (rows[i]["bgnet_overall"] > rows[i + 1]["bgnet_overall"]))
            report["agreement"] = {"matches": len(rows) // 2, "corr_ply": args.corr_ply, "gnubg_ply": 2,
                                   "pearson_checker": round(corr["checker"], 3), "pearson_overall": round(corr["overall"], 3),
                                   "same_weaker_player": same, "rows": rows}
            if not args.json:
                print(f"Pearson r over {len(rows)} players (bgnet {args.corr_ply} ply vs gnubg 2 ply): "
                      f"checker {corr['checker']:.3f}, overall {corr['overall']:.3f}; "
                      f"same weaker player in {same}/{len(rows) // 2} matches")
    if args.json:
        print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
