"""cube_decision against GNU Backgammon's cached 2-ply verdicts (tests/data/cube_gnubg.json): no regression.

The cache holds gnubg's 2-ply cubeless probabilities and cubeful verdicts for
self-play positions in nine money and match contexts (built by
``python bench/cube_agreement.py --refresh``); scoring it needs no gnubg.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bench() -> ModuleType:
    """bench/cube_agreement.py as a module."""
    spec = importlib.util.spec_from_file_location("cube_agreement", ROOT / "bench" / "cube_agreement.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("cube_agreement", mod)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return _bench()


def test_cache_covers_every_context(bench: ModuleType) -> None:
    meta, records = bench.load_cache()
    assert meta["plies"] == 2 and len(records) >= 300
    assert {r["context"] for r in records} == {c.name for c in bench.CONTEXTS}
    for r in records:
        assert len(r["probs"]) == 5 and r["verdict"]


def test_agreement_with_gnubg_does_not_regress(bench: ModuleType) -> None:
    _meta, records = bench.load_cache()
    start = time.perf_counter()
    figures = bench.score(records, bench.model_decider)
    per = (time.perf_counter() - start) / len(records)
    total = figures["all"]
    # Measured when the cache was built: 93.7% double/no double, 100% take/pass, 0.98 mEMG.
    assert total["double_agreement_pct"] >= 93.0
    assert total["take_agreement_pct"] >= 99.0
    assert total["memg_lost_per_decision"] <= 1.5
    for name, f in figures["contexts"].items():
        assert f["double_agreement_pct"] >= 86.0, name
        assert f["memg_lost_per_decision"] <= 3.0, name
    assert per < 5e-3      # parsing the Position ID included


def test_no_double_where_gnubg_cannot_double(bench: ModuleType) -> None:
    _meta, records = bench.load_cache()
    cannot = [r for r in records if r["verdict"] == "cannot double"]
    assert cannot
    for r in cannot:
        doubles, response = bench.model_decider(r)
        assert not doubles and response is None


def test_hint_text_parser(bench: ModuleType) -> None:
    text = """
Cube analysis
2-ply cubeless equity +0.07583
  0.52496 0.14941 0.00683 - 0.47504 0.12504 0.00530
Cubeful equities:
1. No double           +0.25447
2. Double, pass        +1.00000  (+0.74553)
3. Double, take        -0.17136  (-0.42583)
Proper cube action: No redouble, take (36.4%)
"""
    fields = bench.parse_hint(text)
    assert fields["probs"] == [0.52496, 0.14941, 0.00683, 0.12504, 0.0053]
    assert (fields["nd"], fields["dp"], fields["dt"]) == (0.25447, 1.0, -0.17136)
    assert fields["verdict"] == "No redouble, take"
    assert bench.gnubg_calls(fields) == (False, "take")
    assert bench.gnubg_calls({"verdict": "Too good to double, pass"}) == (False, "pass")
    assert bench.gnubg_calls({"verdict": "Optional double, beaver"}) == (True, "beaver")


def test_lookahead_agreement_on_a_subset(bench: ModuleType) -> None:
    """No double valued one exchange ahead (the shipped net's leaves): every 4th cached position."""
    _meta, records = bench.load_cache()
    subset = records[::4]
    plain = bench.score(subset, bench.model_decider)["all"]
    ahead = bench.score(subset, bench.lookahead_decider)["all"]
    # Measured on these 103 positions: 98.1% / 100% / 0.05 mEMG (plain cube_decision: 95.1% / 100% / 0.43).
    assert ahead["double_agreement_pct"] >= 96.0 and ahead["double_agreement_pct"] > plain["double_agreement_pct"]
    assert ahead["take_agreement_pct"] >= 99.0
    assert ahead["memg_lost_per_decision"] <= 0.2 < plain["memg_lost_per_decision"]


def test_bearoff_efficiency_reproduces_the_exact_database(bench: ModuleType) -> None:
    """The bear-off efficiency rule against exact optimal cube play (bgnet.nets.bearoff), on seeded small bear-offs."""
    figures = bench.bearoff_agreement(1500, seed=3)
    rule, flat = figures["bear-off rule"], figures["x = 0.6"]
    # Measured with 8,000 positions (seed 8): 98.4% / 97.3%, against 95.4% / 96.3% with a flat 0.6.
    assert rule["double_agreement_pct"] >= 96.5 and rule["double_agreement_pct"] > flat["double_agreement_pct"]
    assert rule["take_agreement_pct"] >= 95.5


def test_lookahead_on_gnubgs_own_chances_agrees_on_a_subset(bench: ModuleType) -> None:
    """gnubg's chances all through (its 2-ply probabilities, gnubg-nn's 0-ply leaves): every 8th cached position."""
    pytest.importorskip("gnubg_nn")
    _meta, records = bench.load_cache()
    subset = records[::8]
    figures = bench.score(subset, bench.gnubg_leaves_decider)["all"]
    ours = bench.score(subset, bench.lookahead_decider)["all"]
    # Measured on these 52 positions: 100% / 100% / 0.00 mEMG (the shipped net's leaves: see the test above).
    assert figures["double_agreement_pct"] >= 98.0 and figures["double_agreement_pct"] >= ours["double_agreement_pct"]
    assert figures["take_agreement_pct"] >= 99.0
    assert figures["memg_lost_per_decision"] <= 0.1
