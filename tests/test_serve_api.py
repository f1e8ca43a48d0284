"""``bgnet serve``'s JSON API through FastAPI's TestClient: the CLI's answers, one-sentence refusals, limits, games."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("fastapi", reason="bgnet serve needs the web extra (pip install 'bgnet[web]')")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx")

from fastapi.testclient import TestClient  # noqa: E402

from bgnet import Position, legal_moves  # noqa: E402
from bgnet.cli.main import main as cli_main  # noqa: E402
from bgnet.serve.app import STATIC, create_app  # noqa: E402
from bgnet.serve.engine import Engine, ServeConfig  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
START_ID = "4HPwATDgc/ABMA"
MIDGAME = Position.from_points({24: 2, 13: 4, 8: 3, 6: 4, 5: 1, 3: 1}, {24: 1, 23: 1, 13: 5, 8: 3, 6: 5})
XGID_7PT_64 = "XGID=-b----E-C---eE---c-e----B-:0:0:1:64:0:0:0:7:3"  # 7-point match 0-0, bottom to play 6-4
XGID_CRAWFORD_33 = "XGID=-BC-DAD-A---------------f-:0:0:1:33:4:1:1:5:8"  # 5-point match 4-1 Crawford, 3-3 to play
MATCH_POS = START_ID + ":MIHlAAAAAAAE"  # 7-point match 0-0, player 0 rolled 3-1
ONE_SENTENCE = re.compile(r"^[^\n]{3,300}$")
CONFIG = ServeConfig(blas_threads=0)
"""The server's defaults, but numpy's BLAS threads left alone: this process runs other tests after these."""


@pytest.fixture(scope="module")
def engine() -> Engine:
    """One engine (the shipped net, loaded once) shared by the module's apps."""
    e = Engine(CONFIG)
    e.warm()
    return e


@pytest.fixture(scope="module")
def client(engine: Engine) -> Iterator[TestClient]:
    with TestClient(create_app(engine=engine, warm=False), raise_server_exceptions=False) as c:
        yield c


def cli_json(*args: str) -> Any:
    """What ``bgnet ARGS --json`` prints, run in this process (the single-threaded reference)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main([*args, "--json"]) == 0
    return json.loads(out.getvalue())


def refused(res: Any, status: int) -> str:
    """The error sentence of a refusal with ``status`` (and no traceback)."""
    assert res.status_code == status, (res.status_code, res.text)
    body = res.json()
    assert set(body) == {"error"}, body
    assert ONE_SENTENCE.match(body["error"]) and "Traceback" not in body["error"], body
    return str(body["error"])


# -- answers equal the CLI's ------------------------------------------------------------------


@pytest.mark.parametrize("position, dice", [(START_ID, "31"), (MIDGAME.position_id(), "42"), (START_ID, "66")])
def test_moves_equal_the_cli(client: TestClient, position: str, dice: str) -> None:
    res = client.get("/api/moves", params={"position": position, "dice": dice})
    assert res.status_code == 200, res.text
    assert res.json() == cli_json("moves", position, dice)


@pytest.mark.parametrize("position, dice, ply, cubeful", [
    (START_ID, "31", 0, False), (MIDGAME.position_id(), "42", 1, False), (XGID_7PT_64, None, 0, False),
    (MATCH_POS, None, 1, True), (XGID_CRAWFORD_33, None, 0, False), (MIDGAME.position_id(), "55", 0, True)])
def test_hint_equals_the_cli_plus_steps(client: TestClient, position: str, dice: str | None, ply: int,
                                        cubeful: bool) -> None:
    """Same fields and numbers as ``bgnet hint --json``; each play's steps lead to its afterstate."""
    params: dict[str, Any] = {"position": position, "ply": ply, "cubeful": cubeful}
    args = ["hint", position, "--ply", str(ply)] + (["--cubeful"] if cubeful else ["--cubeless"])
    if dice:
        params["dice"] = dice
        args.insert(2, dice)
    res = client.get("/api/hint", params=params)
    assert res.status_code == 200, res.text
    got = res.json()
    pos = Position.parse(position)
    legal = {m.after.position_id(): m for m in legal_moves(pos, got["dice"])}
    for row in got["moves"]:
        steps = [tuple(s) for s in row.pop("steps")]
        assert tuple(steps) == legal[row["position_id"]].steps
    assert got == cli_json(*args)


def test_hint_without_dice_is_the_cube_hint_and_cube_equals_the_cli(client: TestClient) -> None:
    res = client.get("/api/hint", params={"position": MIDGAME.position_id()})
    assert res.status_code == 200
    assert res.json() == cli_json("hint", MIDGAME.position_id(), "--ply", "0")
    for pos in (MIDGAME.position_id(), XGID_7PT_64.replace(":64:", ":00:")):
        res = client.get("/api/cube", params={"position": pos, "ply": 1})
        assert res.status_code == 200
        assert res.json() == cli_json("cube", pos, "--ply", "1")


def test_position_gives_the_board_ids_and_match_state(client: TestClient) -> None:
    res = client.get("/api/position", params={"position": XGID_7PT_64})
    assert res.status_code == 200
    got = res.json()
    pos = Position.from_xgid(XGID_7PT_64)
    assert got["board"] == list(pos.board)
    assert got["position_id"] == pos.position_id()
    assert got["dice"] == [6, 4]
    assert got["match"]["match_length"] == 7
    assert got["pips"] == list(pos.pips())
    assert Position.parse(got["xgid"]) == pos


def test_health_reports_the_limits(client: TestClient, engine: Engine) -> None:
    got = client.get("/api/health").json()
    assert got["status"] == "ok" and got["max_ply"] == 2 and got["model"] == engine.model_path


# -- refusals: one sentence, the right status ------------------------------------------------------


@pytest.mark.parametrize("path, params, status, words", [
    ("/api/hint", {"position": "not-an-id", "dice": "31"}, 400, "position"),
    ("/api/hint", {"position": START_ID, "dice": "71"}, 400, "dice"),
    ("/api/hint", {"position": START_ID, "dice": "31", "ply": 3}, 400, "at most 2 plies"),
    ("/api/hint", {"position": START_ID, "dice": "31", "ply": -1}, 422, "ply"),
    ("/api/hint", {"position": START_ID, "dice": "31", "ply": "two"}, 422, "ply"),
    ("/api/hint", {"dice": "31"}, 422, "position"),
    ("/api/hint", {"position": START_ID, "dice": "31", "top": 0}, 422, "top"),
    ("/api/moves", {"position": START_ID}, 422, "dice"),
    ("/api/cube", {"position": "x" * 300}, 422, "position"),
    ("/api/cube", {"position": "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:7"}, 400, "XGID"),
    ("/api/nothing", {}, 404, "nothing"),
])
def test_bad_input_gets_one_sentence(client: TestClient, path: str, params: dict[str, Any], status: int,
                                     words: str) -> None:
    assert words.lower() in refused(client.get(path, params=params), status).lower()


def test_wrong_method_bad_json_and_oversized_bodies_are_refused(client: TestClient) -> None:
    refused(client.post("/api/hint"), 405)
    refused(client.post("/api/play", content=b"{not json", headers={"content-type": "application/json"}), 422)
    refused(client.post("/api/play", json={"state": None}), 422)  # no action
    big = json.dumps({"action": "new", "pad": "x" * (ServeConfig().max_body_bytes + 10)})
    assert "limit" in refused(client.post("/api/play", content=big, headers={"content-type": "application/json"}), 413)

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit applies while the body streams in
        for _ in range(100):
            yield b"x" * 1024

    refused(client.post("/api/play", content=chunks(), headers={"content-type": "application/json"}), 413)


def test_deep_work_beyond_the_limit_is_refused_not_queued(client: TestClient, engine: Engine) -> None:
    """With the only deep slot taken, a 2-ply request is refused at once with 429; 0-ply still works."""
    with engine.work(deep=True):
        t0 = time.perf_counter()
        res = client.get("/api/hint", params={"position": START_ID, "dice": "31", "ply": 2})
        assert time.perf_counter() - t0 < 2.0
        assert "busy" in refused(res, 429)
        assert res.headers["retry-after"] == "1"
        assert client.get("/api/hint", params={"position": START_ID, "dice": "31"}).status_code == 200
    res = client.get("/api/hint", params={"position": START_ID, "dice": "31", "ply": 2})
    assert res.status_code == 200 and res.json()["ply"] == 2


@pytest.mark.parametrize("bug", [RuntimeError, ValueError, TypeError])
def test_an_unexpected_failure_is_a_500_sentence_without_traceback(engine: Engine, bug: type) -> None:
    """Only a BgnetError is the client's fault: a plain ValueError deep inside is a bug (500), not a 400."""
    def broken(boards: Any) -> Any:
        raise bug("the net exploded\nTraceback (most recent call last): ...")

    app = create_app(engine=Engine(CONFIG, probs_fn=broken), warm=False)
    with TestClient(app, raise_server_exceptions=False) as c:
        msg = refused(c.get("/api/hint", params={"position": START_ID, "dice": "31"}), 500)
    assert bug.__name__ in msg and "exploded" not in msg


def test_a_bgnet_error_from_deep_inside_is_a_400_with_its_sentence() -> None:
    from bgnet import SearchError

    def refusing(boards: Any) -> Any:
        raise SearchError("these boards cannot be searched")

    app = create_app(engine=Engine(CONFIG, probs_fn=refusing), warm=False)
    with TestClient(app, raise_server_exceptions=False) as c:
        msg = refused(c.get("/api/hint", params={"position": START_ID, "dice": "31"}), 400)
    assert msg == "these boards cannot be searched"


@pytest.mark.parametrize("fields", [{"max_ply": 9}, {"play_ply": 3}, {"deep_jobs": 0}])
def test_bad_server_settings_are_a_bgnet_error(fields: dict[str, int]) -> None:
    from bgnet import BgnetError, ServeConfigError

    with pytest.raises(ServeConfigError) as caught:
        ServeConfig(**fields)
    assert isinstance(caught.value, BgnetError) and "\n" not in str(caught.value)


def test_rollout_equals_the_cli_and_is_capped(client: TestClient) -> None:
    pid = MIDGAME.position_id()
    body = {"position": pid, "dice": "42", "trials": 36, "truncate": 3, "seed": 7}
    res = client.post("/api/rollout", json=body)
    assert res.status_code == 200, res.text
    assert res.json() == cli_json("rollout", pid, "42", "--trials", "36", "--truncate", "3", "--seed", "7",
                                  "--no-progress")
    hint = client.get("/api/hint", params={"position": pid, "dice": "42", "ply": 0}).json()
    after = {m["move"]: m["position_id"] for m in hint["moves"]}
    rolled = res.json()["moves"]  # the hint's names: move, its afterstate's position_id, probs, equity
    assert rolled and all(after[m["move"]] == m["position_id"] for m in rolled)
    assert all(set(m["probs"]) == set(hint["moves"][0]["probs"]) for m in rolled)
    assert res.json()["partial"] is False and res.json()["trials_done"] == 36
    cap = ServeConfig().rollout_max_trials
    assert str(cap) in refused(client.post("/api/rollout", json=dict(body, trials=cap + 1)), 400)
    refused(client.post("/api/rollout", json=dict(body, ply=2)), 422)
    refused(client.post("/api/rollout", json=dict(body, plays=["24/16"])), 400)  # not a play of 4-2
    refused(client.post("/api/rollout", json=dict(body, position="zzz")), 400)


def test_analyze_equals_the_cli_and_limits_uploads(client: TestClient) -> None:
    mat = ROOT / "tests" / "data" / "matches" / "gnubg_3pt_noise.mat"
    res = client.post("/api/analyze", files={"file": (mat.name, mat.read_bytes(), "text/plain")}, data={"ply": "0"})
    assert res.status_code == 200, res.text
    got = res.json()
    assert got.pop("skipped") == []
    assert got == cli_json("analyze", str(mat), "--ply", "0")
    refused(client.post("/api/analyze", files={"file": ("m.mat", mat.read_bytes(), "text/plain")}, data={"ply": "2"}), 400)
    big = {"file": ("m.mat", b"x" * (ServeConfig().max_upload_bytes + 200 * 1024), "text/plain")}
    refused(client.post("/api/analyze", files=big), 413)
    refused(client.post("/api/analyze", files={"file": ("m.mat", b"no match in here", "text/plain")}), 400)
    refused(client.post("/api/analyze"), 422)  # no file


# -- games against bgnet -------------------------------------------------------------------------


def checkers(board: list[int]) -> tuple[int, int]:
    """Checkers of each side still on the board (bar included)."""
    return sum(n for n in board if n > 0), -sum(n for n in board if n < 0)


def play_out(client: TestClient, length: int, seed: int, max_calls: int = 400) -> list[dict[str, Any]]:
    """Play a whole match (or one money game) taking every double and choosing the last legal play."""
    answers = [client.post("/api/play", json={"action": "new", "length": length, "seed": seed}).json()]
    while len(answers) < max_calls:
        a = answers[-1]
        assert "error" not in a, a
        if a["match_over"] or (length == 0 and a["phase"] == "over"):
            return answers
        if a["phase"] == "over":
            body: dict[str, Any] = {"action": "next"}
        elif a["phase"] == "doubled":
            body = {"action": "take"}
        elif a["phase"] == "roll":
            body = {"action": "roll"}
        else:
            body = {"action": "move", "move": a["legal_moves"][-1]["position_id"]}
        res = client.post("/api/play", json=dict(body, state=a["state"]))
        assert res.status_code == 200, res.text
        answers.append(res.json())
    raise AssertionError("the match did not end")


def test_a_match_against_the_bot_follows_the_rules_and_replays_from_its_seed(client: TestClient) -> None:
    answers = play_out(client, length=3, seed=11)
    for a in answers:
        mine, theirs = checkers(a["board"])
        off_me, off_them = 15 - mine, 15 - theirs
        assert 0 <= off_me <= 15 and 0 <= off_them <= 15
        if a["phase"] == "move" and a["turn"] == "you":
            assert a["legal_moves"], a
            assert {m["position_id"] for m in a["legal_moves"]} == {
                m.after.position_id() for m in legal_moves(Position.from_position_id(a["position_id"]), a["dice"])}
    final = answers[-1]
    assert final["match_over"] and max(final["score"].values()) >= 3
    wins = [e for a in answers for e in a["events"] if e["action"] == "win"]
    assert sum(e["points"] for e in wins) == sum(final["score"].values())
    assert play_out(client, length=3, seed=11) == answers  # the same seed, the same match


def test_the_opening_roll_of_a_seed_is_kept(client: TestClient) -> None:
    # Seed 34 ties three times, then the player's 5 beats bgnet's 2; seed 11 ties twice and bgnet's 6 wins.
    for seed, dice, who in ((34, [5, 2], "you"), (11, [1, 6], "bgnet")):
        a = client.post("/api/play", json={"action": "new", "length": 0, "seed": seed}).json()
        opening = next(e for e in a["events"] if e["action"] == "opening")
        assert (opening["dice"], opening["who"]) == (dice, who)


def test_bot_moves_are_its_best_plays(client: TestClient, engine: Engine) -> None:
    """Every play bgnet makes in a game is the top play of /api/hint for its position at the play depth."""
    a = client.post("/api/play", json={"action": "new", "length": 0, "seed": 3}).json()
    checked = 0
    for _ in range(60):
        if a["phase"] == "over":
            break
        if a["phase"] != "move":
            a = client.post("/api/play", json={"action": "roll" if a["phase"] == "roll" else "take", "state": a["state"]}).json()
            continue
        mine = a["legal_moves"][0]
        a = client.post("/api/play", json={"action": "move", "move": mine["move"], "state": a["state"]}).json()
        bot_moves = [e for e in a["events"] if e["action"] == "move" and e["who"] == "bgnet"]
        if bot_moves:
            bot_pos = Position.from_position_id(mine["position_id"]).swap_sides()
            roll = next(e["dice"] for e in a["events"] if e["action"] == "roll" and e["who"] == "bgnet")
            best = client.get("/api/hint", params={"position": bot_pos.position_id(), "dice": f"{roll[0]}{roll[1]}"}).json()
            assert bot_moves[0]["move"] == best["moves"][0]["move"]
            checked += 1
    assert checked >= 3


def test_play_refuses_bad_actions_and_states(client: TestClient) -> None:
    a = client.post("/api/play", json={"action": "new", "length": 5, "seed": 5}).json()
    while a["phase"] != "move":
        a = client.post("/api/play", json={"action": "roll", "state": a["state"]}).json()
    refused(client.post("/api/play", json={"action": "move", "move": "24/1", "state": a["state"]}), 400)
    refused(client.post("/api/play", json={"action": "roll", "state": a["state"]}), 409)
    refused(client.post("/api/play", json={"action": "take", "state": a["state"]}), 409)
    refused(client.post("/api/play", json={"action": "fly", "state": a["state"]}), 400)
    refused(client.post("/api/play", json={"action": "roll"}), 400)
    forged = json.loads(json.dumps(a["state"]))
    forged["game"]["cube"] = 3
    assert "power of two" in refused(client.post("/api/play", json={"action": "roll", "state": forged}), 400)
    forged = json.loads(json.dumps(a["state"]))
    forged["game"]["position_id"] = "garbage"
    refused(client.post("/api/play", json={"action": "roll", "state": forged}), 400)
    refused(client.post("/api/play", json={"action": "new", "length": 99}), 400)


# -- the money rules: the CLI's defaults and flags, as query and JSON fields --------------------------------


def test_rule_fields_are_the_clis_rule_flags(client: TestClient) -> None:
    for params, flags in (({}, ()), ({"beavers": "false"}, ("--no-beavers",)),
                          ({"jacoby": "false", "max_cube": "2"}, ("--no-jacoby", "--max-cube", "2"))):
        served = client.get("/api/cube", params={"position": START_ID, **params}).json()
        assert served == cli_json("cube", START_ID, "--ply", "0", *flags)
        hint = client.get("/api/hint", params={"position": START_ID, "dice": "31", **params}).json()
        assert hint["rules"] == served["rules"] and hint["match"] == served["match"]
    assert served["rules"]["text"] == "money game, Jacoby rule off, beavers and raccoons allowed, cube limit 2"
    assert served["decision"]["response"] == "take"  # a beaver would take the cube to 4, past the limit
    assert client.get("/api/cube", params={"position": START_ID, "max_cube": 1}).json()["decision"][
        "equity_double_take"] is None  # a cube limit of 1: no double at all
    rolled = client.post("/api/rollout", json={"position": START_ID, "trials": 36, "truncate": 2,
                                               "beavers": False}).json()
    assert rolled["rules"]["text"] == "money game, Jacoby rule on, no beavers"
    assert rolled["decision"]["proper_cube_action"] == "No double, take"
    assert "only to money play" in refused(client.get("/api/cube", params={"position": MATCH_POS, "jacoby": "true"}),
                                           400)
    assert "max_cube" in refused(client.get("/api/cube", params={"position": START_ID, "max_cube": "-1"}), 422)
    documented = {q["name"] for q in client.get("/openapi.json").json()["paths"]["/api/cube"]["get"]["parameters"]}
    assert {"jacoby", "beavers", "raccoons", "max_cube"} <= documented and "holland" not in documented


def first_turn_before_the_roll(client: TestClient, **rules: Any) -> dict[str, Any]:
    """A new money game against bgnet whose first answer waits for the player's roll (bgnet opened)."""
    for seed in range(40):
        a = client.post("/api/play", json={"action": "new", "length": 0, "seed": seed, **rules}).json()
        if a["phase"] == "roll" and a["turn"] == "you":
            return a
    raise AssertionError("no seed below 40 lets bgnet open")


def test_games_against_bgnet_use_the_money_defaults_and_beavers(client: TestClient) -> None:
    a = first_turn_before_the_roll(client)
    assert a["rules"]["text"] == "money game, Jacoby rule on, beavers and raccoons allowed"
    assert a["state"]["rules"] == {"jacoby": True, "beavers": True, "raccoons": True, "holland": False, "max_cube": 0}
    assert a["may_double"] and not a["may_beaver"] and not a["may_raccoon"]
    # a double in the opening is worth less than nothing to the doubler: bgnet beavers, and the player may raccoon
    b = client.post("/api/play", json={"action": "double", "state": a["state"]}).json()
    assert [e["action"] for e in b["events"]][-1] == "beaver" and b["phase"] == "beavered" and b["may_raccoon"]
    assert b["cube"] == {"value": 4, "owner": "bgnet"} and b["turn"] == "you"
    c = client.post("/api/play", json={"action": "raccoon", "state": b["state"]}).json()
    assert c["cube"] == {"value": 8, "owner": "you"} and c["phase"] == "move" and c["turn"] == "you"
    # without beavers the same double is taken, and a state sent back keeps its game's rules
    a = first_turn_before_the_roll(client, beavers=False)
    assert a["rules"]["text"] == "money game, Jacoby rule on, no beavers"
    b = client.post("/api/play", json={"action": "double", "state": a["state"]}).json()
    assert [e["action"] for e in b["events"]][:2] == ["double", "take"] and b["cube"]["value"] == 2
    assert b["rules"] == a["rules"]
    refused(client.post("/api/play", json={"action": "beaver", "state": b["state"]}), 409)
    refused(client.post("/api/play", json={"action": "new", "length": 3, "jacoby": True}), 400)
    forged = json.loads(json.dumps(a["state"]))
    forged["rules"] = {"jacoby": True}
    assert "rules should name each cube rule" in refused(
        client.post("/api/play", json={"action": "roll", "state": forged}), 400)


# -- threads -----------------------------------------------------------------------------------


def test_concurrent_engine_calls_give_the_single_threaded_answers(engine: Engine) -> None:
    """Six threads asking for moves and hints at once get exactly what one thread gets (re-entrant kernels).

    (With the move generator's buffers shared between threads, as they once were, this fails.)
    """
    cases = [(pid, f"{a}{b}") for pid in (START_ID, MIDGAME.position_id()) for a in range(1, 7) for b in range(1, a + 1)]
    moves = {(p, d): engine.moves(p, d) for p, d in cases}
    hints = {(p, d): engine.hint(p, d, 1) for p, d in cases[::7]}
    wrong: list[tuple[str, str]] = []

    def worker(k: int) -> None:
        for i in range(60):
            p, d = cases[(k * 5 + i) % len(cases)]
            if engine.moves(p, d) != moves[(p, d)] or ((p, d) in hints and engine.hint(p, d, 1) != hints[(p, d)]):
                wrong.append((p, d))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong


# -- the page, the docs and the command ---------------------------------------------------------------


def test_page_and_docs_load_nothing_from_outside_the_app(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "<svg" in page.text
    docs = client.get("/docs")
    assert docs.status_code == 200 and "/static/docs.js" in docs.text
    spec = client.get("/openapi.json").json()
    assert {"/api/hint", "/api/moves", "/api/cube", "/api/rollout", "/api/analyze", "/api/health", "/api/play"} <= set(spec["paths"])
    for f in STATIC.iterdir():
        text = f.read_text()
        refs = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)|url\(([^)]+)\)|fetch\(\s*[`"']([^`"']+)""", text)
        for ref in (r for group in refs for r in group if r):
            assert ref.startswith(("/", "#")), f"{f.name} loads {ref!r}"
        assert "cdn" not in text.lower(), f.name
        assert client.get(f"/static/{f.name}").status_code == 200


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_bgnet_serve_starts_fast_and_says_when_it_listens_beyond_this_machine() -> None:
    """The real command under uvicorn: the notice for a non-local address, /api/health answering, startup time."""
    import httpx

    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "bgnet", "serve", "--host", "0.0.0.0", "--port", str(port)],
                            cwd=ROOT, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        up = None
        while time.perf_counter() - t0 < 30 and proc.poll() is None:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                    up = time.perf_counter() - t0
                    break
            except httpx.HTTPError:
                time.sleep(0.05)
        assert up is not None, "the server did not answer"
        assert up < 10.0  # the target is 3 s on an idle machine (bench/serve.py measures it); shared CI is slower
    finally:
        proc.terminate()
        _out, err = proc.communicate(timeout=10)
    assert "0.0.0.0" in err and "other machines" in err


def test_bad_serve_arguments_and_a_missing_web_extra_get_one_line() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, "-m", "bgnet", "serve", "--port", "70000"], capture_output=True, text=True,
                         cwd=ROOT, env=env, timeout=60)
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "--port" in res.stderr
    # Without fastapi the core still imports, and bgnet serve says which extra to install.
    code = ("import sys; sys.modules['fastapi'] = None; import bgnet, bgnet.cli.main, bgnet.serve.engine; "
            "sys.exit(bgnet.cli.main.main(['serve']))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
    assert res.returncode == 2 and "bgnet[web]" in res.stderr and res.stderr.count("\n") == 1, res.stderr
