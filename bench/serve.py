"""``bgnet serve`` under load: concurrent hint requests over HTTP, latency percentiles, errors and wrong answers.

Starts ``python -m bgnet serve`` on 127.0.0.1 (a free port), times its start,
then runs ``--clients`` concurrent clients, each sending ``--requests`` hint
requests one after another over its own keep-alive connection (a seeded mix of
0-ply and 1-ply hints for positions from seeded random games). Every answer is
compared with the single-threaded CLI's (``bgnet hint ... --json``, run in this
process before the server starts, with one OpenBLAS thread as in the server):
any difference, down to the last bit of a float, is a wrong answer. Then a few
2-ply hints, one at a time, and the same number sent at once (the server runs
one deep search at a time and refuses the rest with 429 rather than queueing
them). The server is stopped at the end.

    python bench/serve.py                      # 50 clients x 40 requests, half 0-ply, half 1-ply
    python bench/serve.py --json               # one JSON object
    python bench/serve.py --clients 8 --requests 10
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bgnet.cli.main import main as cli_main  # noqa: E402
from bgnet.core.movegen import legal_moves  # noqa: E402
from bgnet.core.position import Position  # noqa: E402
from bgnet.core.blas import limit_blas_threads  # noqa: E402

DEEP_POSITION = Position.from_points({24: 2, 13: 4, 8: 3, 6: 4, 5: 1, 3: 1}, {24: 1, 23: 1, 13: 5, 8: 3, 6: 5})


def sample_cases(n: int, seed: int) -> list[tuple[str, str]]:
    """``n`` (Position ID, dice) pairs from random games (seeded), live positions with at least two plays."""
    rng = np.random.default_rng(seed)
    cases: list[tuple[str, str]] = []
    pos = Position.start()
    while len(cases) < n:
        d = (int(rng.integers(1, 7)), int(rng.integers(1, 7)))
        moves = legal_moves(pos, d)
        if len(moves) >= 2 and rng.random() < 0.3:
            cases.append((pos.position_id(), f"{d[0]}{d[1]}"))
        m = moves[int(rng.integers(len(moves)))]
        assert m.after is not None
        nxt = m.after.swap_sides()
        pos = Position.start() if nxt.is_game_over() else nxt
    return cases


def cli_hint(pid: str, dice: str, ply: int) -> Any:
    """The single-threaded CLI's JSON answer."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["hint", pid, dice, "--ply", str(ply), "--json"]) == 0
    return json.loads(out.getvalue())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def path_for(pid: str, dice: str, ply: int) -> str:
    return "/api/hint?" + urllib.parse.urlencode({"position": pid, "dice": dice, "ply": ply})


def strip_steps(answer: Any) -> Any:
    """The answer without the API's extra ``steps`` field, to compare with the CLI."""
    for row in answer.get("moves", []):
        row.pop("steps", None)
    return answer


async def http_get(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, path: str) -> tuple[int, bytes]:
    """One GET on a keep-alive HTTP/1.1 connection: (status, body)."""
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = next(int(h.split(":", 1)[1]) for h in lines[1:] if h.lower().startswith("content-length:"))
    return status, await reader.readexactly(length)


async def client(port: int, jobs: list[tuple[str, str, int]], out: list[dict[str, Any]]) -> None:
    """Send ``jobs`` one after another on one connection, recording latency and the answer (checked later)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for pid, dice, ply in jobs:
            t0 = time.perf_counter()
            try:
                status, body = await http_get(reader, writer, path_for(pid, dice, ply))
                ms = 1000 * (time.perf_counter() - t0)
                ok = status == 200
            except (OSError, asyncio.IncompleteReadError, ValueError, StopIteration):
                ms, ok, body = 1000 * (time.perf_counter() - t0), False, b""
                writer.close()
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            out.append({"ply": ply, "ms": ms, "ok": ok, "key": (pid, dice, ply), "body": body})
    finally:
        writer.close()


def percentiles(ms: list[float]) -> dict[str, float]:
    if not ms:
        return {}
    a = np.array(ms)
    return {"n": len(ms), "p50": float(np.percentile(a, 50)), "p95": float(np.percentile(a, 95)),
            "p99": float(np.percentile(a, 99)), "max": float(a.max())}


def start_server(port: int, workers: int) -> tuple[subprocess.Popen[str], float]:
    """``bgnet serve`` on ``port``; the process and the seconds until /api/health answered."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "bgnet", "serve", "--port", str(port), "--workers", str(workers)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=1):
                return proc, time.perf_counter() - t0
        except OSError:
            if proc.poll() is not None or time.perf_counter() - t0 > 60:
                proc.kill()
                raise SystemExit(f"bgnet serve did not start: {proc.communicate()[1]}") from None
            time.sleep(0.02)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--requests", type=int, default=40, help="requests per client")
    ap.add_argument("--one-ply", type=float, default=0.5, help="share of 1-ply requests (the rest are 0-ply)")
    ap.add_argument("--positions", type=int, default=40)
    ap.add_argument("--deep", type=int, default=5, help="2-ply hints timed one at a time after the load")
    ap.add_argument("--workers", type=int, default=1, help="server processes (bgnet serve --workers)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    cases = sample_cases(args.positions, args.seed)
    # Single-threaded like the server's engine: OpenBLAS's thread count changes the last bits of float32 sums.
    limit_blas_threads(1)
    t0 = time.perf_counter()
    expected = {(p, d, ply): cli_hint(p, d, ply) for p, d in cases for ply in (0, 1)}
    deep_key = (DEEP_POSITION.position_id(), "42", 2)
    expected[deep_key] = cli_hint(*deep_key)
    reference_s = time.perf_counter() - t0
    rng = np.random.default_rng(args.seed + 1)
    plans = [[(*cases[int(rng.integers(len(cases)))], int(rng.random() < args.one_ply)) for _ in range(args.requests)]
             for _ in range(args.clients)]

    port = free_port()
    proc, startup_s = start_server(port, args.workers)
    try:
        results: list[dict[str, Any]] = []

        async def run_all() -> float:
            t = time.perf_counter()
            await asyncio.gather(*(client(port, plan, results) for plan in plans))
            return time.perf_counter() - t

        wall = asyncio.run(run_all())
        deep: list[dict[str, Any]] = []
        asyncio.run(client(port, [deep_key] * args.deep, deep))
        burst: list[dict[str, Any]] = []  # deep requests at once: one runs, the others are refused at once (429)

        async def run_burst() -> None:
            await asyncio.gather(*(client(port, [deep_key], burst) for _ in range(args.deep)))

        asyncio.run(run_burst())
    finally:
        proc.terminate()
        proc.communicate(timeout=20)

    for r in results + deep:  # compared after the load, so that the clients spend no CPU on it meanwhile
        r["wrong"] = r["ok"] and strip_steps(json.loads(r["body"])) != expected[r["key"]]
    report = {
        "clients": args.clients, "requests_per_client": args.requests, "one_ply_share": args.one_ply,
        "workers": args.workers, "positions": len(cases), "startup_s": round(startup_s, 3),
        "reference_s": round(reference_s, 2), "wall_s": round(wall, 3),
        "throughput_rps": round(len(results) / wall, 1),
        "errors": sum(not r["ok"] for r in results) + sum(not r["ok"] for r in deep),
        "wrong": sum(r["wrong"] for r in results) + sum(r["wrong"] for r in deep),
        "ply0_ms": percentiles([r["ms"] for r in results if r["ply"] == 0 and r["ok"]]),
        "ply1_ms": percentiles([r["ms"] for r in results if r["ply"] == 1 and r["ok"]]),
        "all_ms": percentiles([r["ms"] for r in results if r["ok"]]),
        "ply2_ms": percentiles([r["ms"] for r in deep if r["ok"]]),
        "ply2_burst": {"n": len(burst), "answered": sum(r["ok"] for r in burst),
                       "refused_429": sum(r["body"].startswith(b'{"error"') and "busy" in r["body"].decode() for r in burst),
                       "max_ms": round(max((r["ms"] for r in burst), default=0.0), 1)},
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}",
    }
    if args.json:
        print(json.dumps(report))
        return
    print(f"bgnet serve on 127.0.0.1, {args.workers} worker(s): up in {report['startup_s']:.2f} s")
    print(f"{args.clients} clients x {args.requests} requests ({100 * args.one_ply:.0f}% 1-ply) over "
          f"{len(cases)} positions: {report['wall_s']:.2f} s, {report['throughput_rps']:.0f} requests/s")
    print(f"errors {report['errors']}, wrong answers {report['wrong']} (vs the single-threaded CLI)")
    for key in ("ply0_ms", "ply1_ms", "all_ms", "ply2_ms"):
        p = report[key]
        if p:
            print(f"  {key:8s} n={p['n']:5d}  p50 {p['p50']:8.1f}  p95 {p['p95']:8.1f}  p99 {p['p99']:8.1f}  "
                  f"max {p['max']:8.1f} ms")
    b = report["ply2_burst"]
    print(f"  {b['n']} 2-ply hints at once: {b['answered']} answered, {b['refused_429']} refused with 429, "
          f"slowest {b['max_ms']:.0f} ms")
    print(f"({report['machine']}; median 2-ply {statistics.median([r['ms'] for r in deep]) if deep else 0:.0f} ms)")


if __name__ == "__main__":
    main()
