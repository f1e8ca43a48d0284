"""Cube decisions against GNU Backgammon 2-ply: agreement on double/no double and take/pass, and equity lost.

Positions come from self-play of the shipped net (seeded), filtered to those where
the side on roll wins 55% to 95% by the net at 0-ply (below that the decision
is a trivial "no double", above it mostly a trivial cash), across money and match contexts. For each one
GNU Backgammon (the ``gnubg`` package's command interpreter, the ``ref`` extra)
gives its 2-ply cubeless probabilities and its 2-ply cubeful verdict; bgnet's
``cube_decision`` is fed gnubg's probabilities ("model" figures) or the shipped
net's 1-ply probabilities ("pipeline" figures), and its calls are scored with
gnubg's cubeful equities (mEMG lost: gnubg's equity of its best action minus that
of bgnet's action, doubler's and taker's decisions added, per position).

gnubg's answers are cached in tests/data/cube_gnubg.json (tests/test_cube_agreement.py
reads it), so only missing positions need gnubg; without gnubg the script scores the
cache, or says it cannot run and exits 0.

    python bench/cube_agreement.py                       # score the cache (gnubg only for missing positions)
    python bench/cube_agreement.py --pipeline            # also the shipped net at 1-ply
    python bench/cube_agreement.py --refresh --per-context 45 --seed 11   # rebuild the cache with gnubg
    python bench/cube_agreement.py --bearoff 8000 --seed 8   # the bear-off efficiency against the exact database

"lookahead" figures value no double and double/take one exchange ahead
(``bgnet.cube.lookahead.lookahead_decision``) with the shipped net's 0-ply leaves, ``--no-lookahead``
skips them; ``--gnubg-leaves`` adds the same on gnubg-nn's leaves (gnubg's chances all through).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CACHE = ROOT / "tests" / "data" / "cube_gnubg.json"


@dataclass(frozen=True)
class Context:
    """One kind of cube situation: a name and the MatchState fields (seen from the side on roll)."""

    name: str
    match_length: int = 0
    score_me: int = 0
    score_opp: int = 0
    cube: int = 1
    owner: str = "centred"
    crawford: bool = False
    jacoby: bool = False
    beavers: bool = False
    share: float = 1.0
    """Positions drawn relative to the others (the Crawford game, where nobody may double, gets few)."""

    def state(self) -> Any:
        """The MatchState of this context."""
        from bgnet.cube.match import MatchState

        return MatchState(self.match_length, self.score_me, self.score_opp, self.cube, self.owner,  # type: ignore[arg-type]
                          crawford=self.crawford, jacoby=self.jacoby, beavers=self.beavers)


CONTEXTS = (
    Context("money centred"),
    Context("money owned", cube=2, owner="me"),
    Context("money Jacoby+beavers", jacoby=True, beavers=True),
    Context("5pt 0-0 (5a-5a)", 5),
    Context("5pt 2a-4a", 5, 3, 1),
    Context("5pt 4a-2a", 5, 1, 3),
    Context("5pt Crawford 2a-1a", 5, 3, 4, crawford=True, share=0.25),
    Context("5pt post-Crawford 3a-1a", 5, 2, 4),
    Context("5pt post-Crawford 2a-1a", 5, 3, 4),
)
CONTEXT_BY_NAME = {c.name: c for c in CONTEXTS}


# -- gnubg -------------------------------------------------------------------------------

class Gnubg:
    """GNU Backgammon's command interpreter, with its C-level stdout captured per command."""

    def __init__(self, plies: int = 2) -> None:
        import gnubg  # noqa: F401  (the ``ref`` extra)

        self.g = gnubg
        for cmd in ("set sound enable off", "set threads 1", f"set evaluation cubedecision eval plies {plies}",
                    f"set evaluation chequer eval plies {plies}", "set output digits 5", "set output mwc off",
                    "new session"):
            self.run(cmd)

    def run(self, cmd: str, gnubg_id: str | None = None) -> str:
        """Output of one command, stdout and stderr (after ``setgnubgid(gnubg_id)`` when given)."""
        sys.stdout.flush()
        sys.stderr.flush()
        saved = (os.dup(1), os.dup(2))
        with tempfile.TemporaryFile() as f:
            os.dup2(f.fileno(), 1)
            os.dup2(f.fileno(), 2)
            try:
                if gnubg_id is not None:
                    self.g.setgnubgid(gnubg_id)
                self.g.command(cmd)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                for fd, old in zip((1, 2), saved):
                    os.dup2(old, fd)
                    os.close(old)
            f.seek(0)
            return f.read().decode("utf-8", "replace")

    def cube_hint(self, position_id: str, match_id: str, ctx: Context) -> dict[str, Any]:
        """gnubg's 2-ply cube analysis of a position: probabilities, cubeful equities and its verdict."""
        self.run("show jacoby", f"{position_id}:{match_id}")
        if ctx.match_length == 0:
            # The Match ID's Jacoby bit sets the session's rule; "set jacoby off" reaches the
            # running session (while "on" only changes new sessions), so check what gnubg uses.
            if not ctx.jacoby:
                self.run("set jacoby off")
            self.run(f"set beavers {3 if ctx.beavers else 0}")
            shown = self.run("show jacoby")
            if ("played with the Jacoby rule" in shown) != ctx.jacoby:
                raise RuntimeError(f"gnubg did not take the Jacoby rule of {ctx.name!r}: {shown.strip()}")
        fields = parse_hint(self.run("hint"))
        if "probs" not in fields:  # no cube decision to make: the 2-ply cubeless chances from ``eval``
            row = _EVAL_ROW.search(self.run("eval"))
            if row is None:
                raise RuntimeError("gnubg's eval gave no 2-ply line")
            fields["probs"] = [float(v) for v in row.groups()]
        return fields


_EQ = re.compile(r"^\s*\d+\.\s+(No (?:re)?double|(?:Re)?[Dd]ouble, (?:take|pass|beaver))\s+([+-]?\d+\.\d+)", re.M)
_PROBS = re.compile(r"^\s+(\d\.\d+) (\d\.\d+) (\d\.\d+) - (\d\.\d+) (\d\.\d+) (\d\.\d+)\s*$", re.M)
_EVAL_ROW = re.compile(r"^\s*\d+ ply:\s+(\d\.\d+) (\d\.\d+) (\d\.\d+) (\d\.\d+) (\d\.\d+)", re.M)
_PROPER = re.compile(r"Proper cube action:\s*(.+?)\s*(?:\([\d.]+%\))?\s*$", re.M)


def parse_hint(text: str) -> dict[str, Any]:
    """The fields of gnubg's cube ``hint`` text (``cannot`` when it refuses: no access or a dead cube)."""
    if "cannot double" in text.lower():
        return {"verdict": "cannot double"}
    probs = _PROBS.search(text)
    proper = _PROPER.search(text)
    if probs is None or proper is None:
        raise RuntimeError(f"unexpected gnubg hint output:\n{text}")
    eq: dict[str, float] = {}
    for label, value in _EQ.findall(text):
        key = "nd" if label.lower().startswith("no ") else ("dp" if label.endswith("pass") else "dt")
        eq[key] = float(value)
    w, wg, wb, _lose, lg, lb = (float(v) for v in probs.groups())
    return {"probs": [w, wg, wb, lg, lb], **eq, "verdict": proper.group(1)}


def match_id_for(ctx: Context) -> str:
    """The gnubg Match ID of a context with the side on roll as gnubg's player 0, dice not rolled."""
    from bgnet.core.formats import MatchIdFields, match_id_from_fields

    owner = {"centred": 3, "me": 0, "opponent": 1}[ctx.owner]
    return match_id_from_fields(MatchIdFields(ctx.cube, owner, 0, ctx.crawford, 1, 0, False, 0, (0, 0),
                                              ctx.match_length, (ctx.score_me, ctx.score_opp), ctx.match_length > 0
                                              or not ctx.jacoby))


# -- positions ---------------------------------------------------------------------------

def sample_positions(n: int, seed: int, min_win: float = 0.55, max_win: float = 0.95) -> list[str]:
    """Position IDs from seeded self-play of the shipped net where the side on roll wins ``min_win..max_win`` at 0-ply."""
    import numpy as np

    from bgnet.play.agents import DEFAULT_CHECKPOINT
    from bgnet.nets.fastnet import load_numpy_net
    from bgnet.core.position import Position
    from bgnet.sim.selfplay import SelfPlay

    net = load_numpy_net(DEFAULT_CHECKPOINT)
    sp = SelfPlay(64, seed)
    boards: list[np.ndarray] = []
    while sum(len(b) for b in boards) < 40 * n:
        for traj in sp.step(net.probs_of_boards, exploration=0.02):
            boards.append(traj.boards[1:])
    pool = np.concatenate(boards)
    probs = net.probs_of_boards(pool)
    keep = pool[(probs[:, 0] >= min_win) & (probs[:, 0] <= max_win)]
    rng = np.random.default_rng(seed)
    ids: list[str] = []
    seen: set[str] = set()
    for i in rng.permutation(len(keep)):
        pos = Position.from_array(keep[i])
        pid = pos.position_id()
        if pid not in seen and not pos.is_game_over():
            seen.add(pid)
            ids.append(pid)
        if len(ids) == n:
            break
    return ids


def build_cache(per_context: int, seed: int, plies: int = 2, progress: bool = True) -> list[dict[str, Any]]:
    """Ask gnubg about fresh self-play positions in every context (the records of the cache file)."""
    total = sum(max(1, round(per_context * c.share)) for c in CONTEXTS)
    ids = sample_positions(total, seed)
    gnu = Gnubg(plies)
    records = []
    it = iter(ids)
    t0 = time.perf_counter()
    for ctx in CONTEXTS:
        mid = match_id_for(ctx)
        for _ in range(max(1, round(per_context * ctx.share))):
            pid = next(it)
            rec = {"context": ctx.name, "position_id": pid, "match_id": mid, **gnu.cube_hint(pid, mid, ctx)}
            records.append(rec)
            if progress:
                print(f"\r{len(records)}/{total} positions ({time.perf_counter() - t0:.0f} s)", end="", file=sys.stderr)
    if progress:
        print(file=sys.stderr)
    return records


def write_cache(records: list[dict[str, Any]], meta: dict[str, Any], path: Path = CACHE) -> None:
    """Write the cache atomically (a temp file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    body = ",\n".join(json.dumps(r, separators=(",", ":")) for r in records)
    tmp.write_text('{"meta": ' + json.dumps(meta) + ',\n"records": [\n' + body + "\n]}\n", encoding="utf-8")
    os.replace(tmp, path)


def load_cache(path: Path = CACHE) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The cache's meta data and records."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    return doc["meta"], doc["records"]


# -- scoring -----------------------------------------------------------------------------

def gnubg_calls(rec: dict[str, Any]) -> tuple[bool, str | None]:
    """gnubg's verdict as (doubles, response); response None where it cannot double."""
    verdict = rec["verdict"].lower()
    if verdict == "cannot double":
        return False, None
    doubles = not (verdict.startswith("no ") or verdict.startswith("too good"))
    response = "beaver" if "beaver" in verdict else ("pass" if verdict.endswith("pass") else "take")
    return doubles, response


def _double_value(rec: dict[str, Any], response: str) -> float:
    """gnubg's equity of a double answered ``response``."""
    return {"take": rec["dt"], "pass": rec["dp"], "beaver": 2.0 * rec["dt"]}[response]


@dataclass
class Tally:
    """Agreement counts and equity lost for one group of positions."""

    positions: int = 0
    double_agree: int = 0
    take_decisions: int = 0
    take_agree: int = 0
    lost: float = 0.0
    near_ties: int = 0
    """Double/no double disagreements where gnubg's own margin between the two is under 0.01."""

    def add(self, ours_double: bool, ours_response: str | None, rec: dict[str, Any]) -> None:
        """Score one position: bgnet's calls against gnubg's, loss in gnubg's cubeful equities."""
        g_double, g_response = gnubg_calls(rec)
        self.positions += 1
        self.double_agree += ours_double == g_double
        if g_response is None:  # no cube access for gnubg: bgnet must not double either
            return
        if ours_double != g_double and abs(min(rec["dt"], rec["dp"]) - rec["nd"]) < NEAR_TIE:
            self.near_ties += 1
        self.take_decisions += 1
        response = ours_response or "take"
        self.take_agree += response == g_response
        best_double = _double_value(rec, g_response)
        best = max(rec["nd"], best_double) if g_double else rec["nd"]
        chosen = best_double if ours_double else rec["nd"]
        self.lost += max(0.0, best - chosen)                                            # the doubler's decision
        self.lost += abs(_double_value(rec, response) - best_double)                    # the taker's decision

    def figures(self) -> dict[str, float]:
        """Percentages and mEMG per position."""
        n = max(1, self.positions)
        return {"positions": self.positions,
                "double_agreement_pct": round(100.0 * self.double_agree / n, 1),
                "take_agreement_pct": (round(100.0 * self.take_agree / self.take_decisions, 1)
                                       if self.take_decisions else None),
                "memg_lost_per_decision": round(1000.0 * self.lost / n, 2),
                "double_disagreements": self.positions - self.double_agree, "near_ties": self.near_ties}


NEAR_TIE = 0.01
"""gnubg's own margin (normalised equity) under which a double/no double call is a near-tie."""

Decider = Callable[[dict[str, Any]], tuple[bool, str | None]]


def model_decider(rec: dict[str, Any]) -> tuple[bool, str | None]:
    """bgnet's cube_decision fed gnubg's own 2-ply cubeless probabilities."""
    from bgnet.cube.decision import cube_decision
    from bgnet.core.position import Position

    d = cube_decision(rec["probs"], CONTEXT_BY_NAME[rec["context"]].state(), Position.from_position_id(rec["position_id"]))
    return d.action.startswith("double"), d.response


_EVALUATORS: dict[str, Any] = {}
_LEAVES: dict[tuple[str, str, str], Any] = {}


def _evaluator(source: str) -> Any:
    """The 0-ply chances that value the leaves: "net" the shipped net, "gnubg" GNU Backgammon's (gnubg-nn)."""
    if source not in _EVALUATORS:
        from bgnet.play.agents import DEFAULT_CHECKPOINT, GnubgAgent
        from bgnet.nets.fastnet import load_numpy_net

        _EVALUATORS[source] = (load_numpy_net(DEFAULT_CHECKPOINT).probs_of_boards if source == "net"
                               else GnubgAgent(0).probs_fn)
    return _EVALUATORS[source]


def _leaves(rec: dict[str, Any], source: str = "net") -> Any:
    """``source``'s chances one exchange ahead of a record's position (cached per position, context and source)."""
    from bgnet.play.cube_search import exchange_leaves
    from bgnet.core.position import Position

    key = (rec["position_id"], rec["context"], source)
    if key not in _LEAVES:
        _LEAVES[key] = exchange_leaves(_evaluator(source), Position.from_position_id(rec["position_id"]),
                                       CONTEXT_BY_NAME[rec["context"]].state())
    return _LEAVES[key]


def _lookahead(rec: dict[str, Any], probs: Any, source: str) -> tuple[bool, str | None]:
    """``lookahead_decision`` from ``probs`` with ``source``'s leaves: (doubles, response)."""
    from bgnet.cube.lookahead import lookahead_decision
    from bgnet.core.position import Position
    from bgnet.play.search import ROLLS

    leaves, weights = _leaves(rec, source)
    d = lookahead_decision(probs, CONTEXT_BY_NAME[rec["context"]].state(),
                           Position.from_position_id(rec["position_id"]), leaves, weights, replies=len(ROLLS))
    return d.action.startswith("double"), d.response


def lookahead_decider(rec: dict[str, Any]) -> tuple[bool, str | None]:
    """gnubg's 2-ply probabilities with the cube valued one exchange ahead by the shipped net (its 0-ply leaves)."""
    return _lookahead(rec, rec["probs"], "net")


def gnubg_leaves_decider(rec: dict[str, Any]) -> tuple[bool, str | None]:
    """The look-ahead on gnubg's own chances all through: its 2-ply probabilities and its 0-ply leaves (gnubg-nn)."""
    return _lookahead(rec, rec["probs"], "gnubg")


def two_ply_decider(rec: dict[str, Any]) -> tuple[bool, str | None]:
    """The shipped net's 2-ply chances (the leaves' mean) through plain cube_decision, without the look-ahead."""
    import numpy as np

    from bgnet.cube.decision import cube_decision
    from bgnet.core.position import Position

    leaves, weights = _leaves(rec)
    mean = np.clip(weights @ leaves / weights.sum(), 0.0, 1.0)
    d = cube_decision(mean, CONTEXT_BY_NAME[rec["context"]].state(), Position.from_position_id(rec["position_id"]))
    return d.action.startswith("double"), d.response


def searched_decider(rec: dict[str, Any]) -> tuple[bool, str | None]:
    """The whole pipeline at 2 plies: the shipped net's leaves one exchange ahead (``bgnet.play.cube_search.searched_decision``)."""
    import numpy as np

    leaves, weights = _leaves(rec)
    return _lookahead(rec, np.clip(weights @ leaves / weights.sum(), 0.0, 1.0), "net")


def pipeline_decider(ply: int = 1, prune: bool = True) -> Decider:
    """bgnet's whole pipeline: the shipped net's ``ply``-ply probabilities (as ``bgnet cube`` searches: with its
    pruning net unless ``prune`` is False), then cube_decision."""
    from bgnet.app.answers import load_probs_fn
    from bgnet.cube.decision import cube_decision
    from bgnet.core.position import Position
    from bgnet.play.search import evaluate_position

    fn = load_probs_fn("default", prune=prune)

    def decide(rec: dict[str, Any]) -> tuple[bool, str | None]:
        pos = Position.from_position_id(rec["position_id"])
        state = CONTEXT_BY_NAME[rec["context"]].state()
        d = cube_decision(evaluate_position(fn, pos, ply, state=state), state, pos)
        return d.action.startswith("double"), d.response

    return decide


def bearoff_agreement(n: int, seed: int) -> dict[str, dict[str, float]]:
    """cube_decision against the exact bear-off database (money, centred cube, <= 6 checkers a side, no gnubg).

    Draws ``n`` seeded positions where the side on roll wins 45% to 95%; the exact
    optimal action is "double" where the centred equity equals the double's value,
    "take" where the doubler's equity with the cube given away is below half a point.
    Scores the shipped bear-off efficiency rule and two constant efficiencies.
    """
    import numpy as np

    from bgnet.nets import bearoff
    from bgnet.cube.decision import cube_decision
    from bgnet.cube.match import MatchState
    from bgnet.core.position import Position

    db, table = bearoff.database(), bearoff.positions_table()
    rng = np.random.default_rng(seed)
    rows = []
    while len(rows) < n:
        i, j = (int(v) for v in rng.integers(1, 924, 2))
        board = np.zeros(26, np.int8)
        board[1:7] = table[i][:6]
        board[19:25] = -np.asarray(table[j][:6], np.int8)[::-1]
        _mask, probs = db.exact_probs(board[None])
        inside, eq = db.cubeful_equities(board[None])
        if inside[0] and 0.45 < probs[0, 0] < 0.95:
            doubles = abs(eq[0, 0] - min(2.0 * eq[0, 2], 1.0)) < 1e-6
            rows.append((Position.from_array(board), probs[0], doubles, eq[0, 2] < 0.5))
    out = {}
    for name, x in (("bear-off rule", None), ("x = 0.6", 0.6), ("x = 0.68", 0.68)):
        d_ok = t_ok = 0
        for pos, probs, doubles, takes in rows:
            d = cube_decision(probs, MatchState(), pos, efficiency=x)
            d_ok += d.action.startswith("double") == doubles
            t_ok += (d.response == "take") == takes
        out[name] = {"double_agreement_pct": round(100.0 * d_ok / n, 1), "take_agreement_pct": round(100.0 * t_ok / n, 1)}
    return out


def score(records: Iterable[dict[str, Any]], decide: Decider) -> dict[str, Any]:
    """Figures over all records and per context."""
    total, by_ctx = Tally(), {}
    for rec in records:
        ours = decide(rec)
        total.add(*ours, rec)
        by_ctx.setdefault(rec["context"], Tally()).add(*ours, rec)
    return {"all": total.figures(), "contexts": {k: v.figures() for k, v in by_ctx.items()}}


def _print(title: str, figures: dict[str, Any]) -> None:
    """A small table of figures."""
    print(title)
    print(f"  {'context':<28}{'n':>5}{'D/ND %':>9}{'T/P %':>8}{'mEMG':>8}{'D/ND miss':>11}{'near-tie':>10}")
    rows = list(figures["contexts"].items()) + [("all", figures["all"])]
    for name, f in rows:
        take = "-" if f["take_agreement_pct"] is None else f"{f['take_agreement_pct']:.1f}"
        print(f"  {name:<28}{f['positions']:>5}{f['double_agreement_pct']:>9.1f}{take:>8}"
              f"{f['memg_lost_per_decision']:>8.2f}{f['double_disagreements']:>11}{f['near_ties']:>10}")


TITLES = (
    ("model_lookahead", "lookahead_decision: gnubg's 2-ply probabilities, the cube valued one exchange ahead by the shipped net:"),
    ("model_lookahead_gnubg_leaves",
     "lookahead_decision on gnubg's chances all through (its 2-ply probabilities, gnubg-nn's 0-ply leaves):"),
    ("pipeline_1ply", "whole pipeline (shipped net at 1-ply, then cube_decision) vs gnubg 2-ply cubeful:"),
    ("pipeline_2ply", "whole pipeline at 2 plies without the look-ahead (net's 2-ply chances, then cube_decision):"),
    ("pipeline_2ply_lookahead", "whole pipeline at 2 plies (bgnet.play.cube_search.searched_decision, shipped net) vs gnubg 2-ply cubeful:"),
)
"""The printed figure groups after the model's, in order, by their key in the JSON output."""


def main(argv: list[str] | None = None) -> int:
    """Build or read the gnubg cache, then print the agreement figures."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--refresh", action="store_true", help="ask gnubg again about fresh positions (rewrites the cache)")
    p.add_argument("--per-context", type=int, default=50, metavar="N", help="positions per context with --refresh")
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--pipeline", action="store_true", help="also score the shipped net at 1-ply through cube_decision")
    p.add_argument("--no-prune", action="store_true", help="the pipeline's searches value every reply")
    p.add_argument("--cache", type=Path, default=CACHE, help="the gnubg answers file (default: the test's cache)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--bearoff", type=int, default=0, metavar="N",
                   help="instead: N seeded bear-offs scored against the exact bear-off database (no gnubg)")
    p.add_argument("--no-lookahead", action="store_true",
                   help="skip the look-ahead figures (they need the shipped net, ~30 s per 400 positions)")
    p.add_argument("--gnubg-leaves", action="store_true",
                   help="also the look-ahead with gnubg-nn's 0-ply leaves (gnubg's chances all through, ~2 min)")
    args = p.parse_args(argv)
    if args.bearoff:
        figures = bearoff_agreement(args.bearoff, args.seed)
        if args.json:
            print(json.dumps(figures))
        else:
            print(f"cube_decision vs the exact bear-off database ({args.bearoff} positions, seed {args.seed}):")
            for name, f in figures.items():
                print(f"  {name:<16}D/ND {f['double_agreement_pct']:5.1f}%   T/P {f['take_agreement_pct']:5.1f}%")
        return 0
    if args.refresh or not args.cache.exists():
        try:
            import gnubg  # noqa: F401
        except ImportError:
            print("gnubg is not installed (pip install 'bgnet[ref]'); nothing to compare against.", file=sys.stderr)
            return 0
        t0 = time.perf_counter()
        records = build_cache(args.per_context, args.seed, progress=not args.json)
        write_cache(records, {"seed": args.seed, "per_context": args.per_context, "plies": 2, "min_win": 0.55, "max_win": 0.95,
                              "gnubg_seconds": round(time.perf_counter() - t0, 1)}, args.cache)
    meta, records = load_cache(args.cache)
    t0 = time.perf_counter()
    out: dict[str, Any] = {"meta": meta, "model": score(records, model_decider)}
    out["model_ms_per_decision"] = round(1000.0 * (time.perf_counter() - t0) / max(1, len(records)), 3)
    if not args.no_lookahead:
        out["model_lookahead"] = score(records, lookahead_decider)
    if args.gnubg_leaves:
        try:
            import gnubg_nn  # noqa: F401
        except ImportError:
            print("gnubg-nn is not installed (pip install 'bgnet[ref]'): no figures on gnubg's leaves.", file=sys.stderr)
        else:
            out["model_lookahead_gnubg_leaves"] = score(records, gnubg_leaves_decider)
    if args.pipeline:
        out["pipeline_1ply"] = score(records, pipeline_decider(1, not args.no_prune))
        if not args.no_lookahead:
            out["pipeline_2ply"] = score(records, two_ply_decider)
            out["pipeline_2ply_lookahead"] = score(records, searched_decider)
    if args.json:
        print(json.dumps(out))
    else:
        _print(f"cube_decision on gnubg's 2-ply probabilities vs gnubg 2-ply cubeful ({len(records)} positions, "
               f"seed {meta['seed']}):", out["model"])
        for key, title in TITLES:
            if key in out:
                _print(title, out[key])
    return 0


if __name__ == "__main__":
    sys.exit(main())
