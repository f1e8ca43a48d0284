"""gnubg Position ID / Match ID, 20-letter key and XGID: vector round trips and rejected input."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bgnet.core.formats import (
    FormatError,
    MatchIdFields,
    XgidFields,
    boards_from_key20,
    boards_from_position_id,
    format_xgid,
    key20_from_boards,
    match_id_from_fields,
    parse_match_id,
    parse_xgid,
    position_id_from_boards,
    xgid_from_position,
)
from bgnet.core.position import Position

VECTORS_PATH = Path(__file__).resolve().parent / "data" / "format_vectors.json"  # made with GNU Backgammon
VECTORS: dict[str, Any] = json.loads(VECTORS_PATH.read_text())

START_ID = "4HPwATDgc/ABMA"
START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:3:0:10"


def _ids(items: list[dict[str, Any]], key: str) -> list[str]:
    return [str(item[key]) for item in items]


def _id_from_bits(bits: list[int], nbytes: int, chars: int) -> str:
    """Pack a bit list least significant bit first and Base64 it (the test's own encoder)."""
    value = sum(b << k for k, b in enumerate(bits))
    return base64.b64encode(value.to_bytes(nbytes, "little")).decode()[:chars]


def _position_bits(not_on_roll: list[int], on_roll: list[int]) -> list[int]:
    bits: list[int] = []
    for arr in (not_on_roll, on_roll):
        for n in arr:
            bits += [1] * n + [0]
    return bits + [0] * (80 - len(bits))


def _set_match_bits(match_id: str, start: int, width: int, value: int) -> str:
    """``match_id`` with the field at stream bits ``start .. start+width-1`` replaced by ``value``."""
    n = int.from_bytes(base64.b64decode(match_id), "little")
    mask = ((1 << width) - 1) << start
    n = (n & ~mask) | (value << start)
    return base64.b64encode(n.to_bytes(9, "little")).decode()


# -- Position ID and key -------------------------------------------------------


@pytest.mark.parametrize("vec", VECTORS["position_ids"], ids=_ids(VECTORS["position_ids"], "name"))
def test_position_id_vectors(vec: dict[str, Any]) -> None:
    boards = (vec["board_not_on_roll"], vec["board_on_roll"])
    assert boards_from_position_id(vec["position_id"]) == boards
    assert position_id_from_boards(boards) == vec["position_id"]
    assert key20_from_boards(boards) == vec["key20"]
    assert boards_from_key20(vec["key20"]) == boards
    assert 15 - sum(boards[0]) == vec["checkers_off_not_on_roll"]
    assert 15 - sum(boards[1]) == vec["checkers_off_on_roll"]
    assert Position.from_position_id(vec["position_id"]).position_id() == vec["position_id"]


def test_position_id_orientation() -> None:
    # docs/ARCHITECTURE.md, Formats 2: the player not on roll is encoded first.
    not_on_roll, on_roll = boards_from_position_id("4HPwATDgc/ABUA")
    assert on_roll[24] == 1 and not_on_roll[24] == 0


def test_position_id_accepts_surrounding_whitespace() -> None:
    assert boards_from_position_id(f"  {START_ID}\n") == boards_from_position_id(START_ID)


def test_position_id_ignores_trailing_bits() -> None:
    # No checkers: the 50 separators are bits 0..49; everything after them is ignored.
    bits = [0] * 50 + [1] * 30
    assert boards_from_position_id(_id_from_bits(bits, 10, 14)) == ([0] * 25, [0] * 25)
    # The last Base64 character carries 4 bits past the 80-bit key.
    assert boards_from_position_id(START_ID[:-1] + "P") == boards_from_position_id(START_ID)


def test_position_id_wrong_length() -> None:
    with pytest.raises(FormatError, match="14 characters"):
        boards_from_position_id(START_ID[:-1])


def test_position_id_bad_character() -> None:
    with pytest.raises(FormatError, match=r"'!' at index 12"):
        boards_from_position_id(START_ID[:12] + "!A")


def test_position_id_too_many_checkers() -> None:
    on_roll = [8, 8] + [0] * 23
    with pytest.raises(FormatError, match="16 checkers"):
        boards_from_position_id(_id_from_bits(_position_bits([0] * 25, on_roll), 10, 14))


def test_position_id_more_than_fifteen_on_a_point() -> None:
    with pytest.raises(FormatError, match="more than 15"):
        boards_from_position_id("//////////////")


def test_position_id_both_sides_on_one_point() -> None:
    not_on_roll = [0] * 23 + [1, 0]  # its 24-point ...
    on_roll = [1] + [0] * 24  # ... is the on-roll player's ace point
    with pytest.raises(FormatError, match="both sides"):
        boards_from_position_id(_id_from_bits(_position_bits(not_on_roll, on_roll), 10, 14))
    with pytest.raises(FormatError, match="both sides"):
        position_id_from_boards((not_on_roll, on_roll))


def test_position_id_encoder_rejects_short_array() -> None:
    with pytest.raises(FormatError, match="25"):
        position_id_from_boards(([0] * 24, [0] * 25))


def test_key20_bad_letter_and_length() -> None:
    key = VECTORS["position_ids"][0]["key20"]
    with pytest.raises(FormatError, match=r"'Q' at index 3"):
        boards_from_key20(key[:3] + "Q" + key[4:])
    with pytest.raises(FormatError, match="20 letters"):
        boards_from_key20(key + "A")


# -- Match ID ---------------------------------------------------------------------


def _expected_match_fields(raw: dict[str, Any]) -> MatchIdFields:
    """The vector's fields as MatchIdFields; the vectors use two key spellings (the manual's example differs)."""
    if "cube_log2" in raw:  # the spelling of the XGID vectors' gnubg_match_fields
        raw = {
            "cube_value": 1 << raw["cube_log2"], "cube_owner": raw["cube_owner"],
            "dice_owner_player_on_roll": raw["dice_owner"], "crawford_game": raw["crawford"],
            "game_state": raw["game_state"], "turn_player_to_decide": raw["turn"],
            "double_offered": raw["doubled"], "resignation": raw["resigned"], "die1": raw["die1"],
            "die2": raw["die2"], "match_length": raw["match_length"], "score_player0": raw["score0"],
            "score_player1": raw["score1"], "bit66_jacoby_not_in_use": raw["no_jacoby"],
        }
    owner = raw["cube_owner"]
    return MatchIdFields(
        cube_value=raw["cube_value"],
        cube_owner=3 if owner == "centered" else owner,
        dice_owner=raw["dice_owner_player_on_roll"],
        crawford=bool(raw["crawford_game"]),
        game_state=raw["game_state"],
        turn=raw["turn_player_to_decide"],
        double_offered=bool(raw["double_offered"]),
        resignation=raw["resignation"],
        dice=(raw["die1"], raw["die2"]),
        match_length=raw["match_length"],
        score=(raw["score_player0"], raw["score_player1"]),
        jacoby_off=bool(raw["bit66_jacoby_not_in_use"]),
    )


@pytest.mark.parametrize("vec", VECTORS["match_ids"], ids=_ids(VECTORS["match_ids"], "match_id"))
def test_match_id_vectors(vec: dict[str, Any]) -> None:
    fields = parse_match_id(vec["match_id"])
    assert fields == _expected_match_fields(vec["fields"])
    assert match_id_from_fields(fields) == vec["match_id"]


def test_match_id_wrong_length() -> None:
    with pytest.raises(FormatError, match="12 characters"):
        parse_match_id("cAkPAAAAAAA")


def test_match_id_bad_character() -> None:
    with pytest.raises(FormatError, match=r"'\*' at index 4"):
        parse_match_id("cAkP*AAAAAAE")


def test_match_id_cube_owner_two() -> None:
    with pytest.raises(FormatError, match="cube owner 2"):
        parse_match_id(_set_match_bits("MAEAAAAAAAAA", 4, 2, 2))


def test_match_id_die_seven() -> None:
    with pytest.raises(FormatError, match="dice 7-3"):
        parse_match_id(_set_match_bits("cAkPAAAAAAAE", 15, 3, 7))


def test_match_id_one_die_missing() -> None:
    with pytest.raises(FormatError, match="dice 0-3"):
        parse_match_id(_set_match_bits("cAkPAAAAAAAE", 15, 3, 0))


def test_match_id_bad_game_state() -> None:
    with pytest.raises(FormatError, match="game state 5"):
        parse_match_id(_set_match_bits("MAEAAAAAAAAA", 8, 3, 5))


def test_match_id_score_at_match_length_while_playing() -> None:
    playing = "MIHlAAAAAAAE"  # 7-point match, game state 1
    with pytest.raises(FormatError, match="7 points in a 7-point match"):
        parse_match_id(_set_match_bits(playing, 36, 15, 7))
    over = _set_match_bits(_set_match_bits(playing, 8, 3, 2), 36, 15, 7)
    assert parse_match_id(over).score == (7, 0)


def test_match_id_double_pending_with_dice() -> None:
    with pytest.raises(FormatError, match="double is offered"):
        parse_match_id(_set_match_bits("cAkPAAAAAAAE", 12, 1, 1))


@pytest.mark.parametrize("cube", [3, 1 << 16, 0])
def test_match_id_writer_rejects_bad_cube(cube: int) -> None:
    fields = parse_match_id("QYkqASAAIAAE")
    with pytest.raises(FormatError, match=f"cube value {cube}"):
        match_id_from_fields(replace(fields, cube_value=cube))


def test_match_id_writer_largest_cube() -> None:
    fields = replace(parse_match_id("QYkqASAAIAAE"), cube_value=1 << 15)
    assert parse_match_id(match_id_from_fields(fields)).cube_value == 1 << 15


def test_match_id_writer_rejects_score_too_large() -> None:
    fields = replace(parse_match_id("MAEAAAAAAAAA"), score=(1 << 15, 0))
    with pytest.raises(FormatError, match="score of player 0"):
        match_id_from_fields(fields)


# -- XGID -----------------------------------------------------------------------


def _gnubg_view_of_xgid(x: XgidFields) -> MatchIdFields:
    """What gnubg makes of an XGID (docs/ARCHITECTURE.md, Formats 4): bottom = player 1, a pending double stepped back."""
    player = 1 if x.turn == 1 else 0
    money = x.match_length == 0
    return MatchIdFields(
        cube_value=1 << x.cube_log2,
        cube_owner={1: 1, -1: 0, 0: 3}[x.cube_position],
        dice_owner=player,
        crawford=not money and x.rules == 1,
        game_state=1,
        turn=player,
        double_offered=False,
        resignation=0,
        dice=x.dice,
        match_length=x.match_length,
        score=(x.score_top, x.score_bottom),
        jacoby_off=not (money and x.rules & 1),
    )


@pytest.mark.parametrize("vec", VECTORS["xgids"], ids=_ids(VECTORS["xgids"], "xgid"))
def test_xgid_vectors(vec: dict[str, Any]) -> None:
    x = parse_xgid(vec["xgid"])
    assert x.bottom == vec["board_bottom_uppercase"]
    assert x.top == vec["board_top_lowercase"]
    assert x.turn == (1 if vec["player_on_roll"] == "bottom" else -1)
    assert position_id_from_boards((x.not_on_roll, x.on_roll)) == vec["gnubg_position_id"]
    assert Position.from_xgid(vec["xgid"]).position_id() == vec["gnubg_position_id"]
    assert match_id_from_fields(_gnubg_view_of_xgid(x)) == vec["gnubg_match_id"]
    assert _gnubg_view_of_xgid(x) == _expected_match_fields(vec["gnubg_match_fields"])
    assert x.double_offered == (vec["xgid"].split(":")[4] == "D")
    assert format_xgid(x) == vec["xgid"]


@pytest.mark.parametrize("vec", VECTORS["xgids"], ids=_ids(VECTORS["xgids"], "xgid"))
def test_xgid_from_position_puts_roller_at_bottom(vec: dict[str, Any]) -> None:
    x = parse_xgid(vec["xgid"])
    me_bottom = x.turn == 1
    owner = {0: "centred", 1: "me" if me_bottom else "opponent", -1: "opponent" if me_bottom else "me"}
    match = SimpleNamespace(
        match_length=x.match_length,
        score_me=x.score_bottom if me_bottom else x.score_top,
        score_opp=x.score_top if me_bottom else x.score_bottom,
        cube_value=1 << x.cube_log2,
        cube_owner=owner[x.cube_position],
        crawford=bool(x.match_length and x.rules == 1),
        jacoby=bool(not x.match_length and x.rules & 1),
        beavers=bool(not x.match_length and x.rules & 2),
    )
    pos = Position.from_xgid(vec["xgid"])
    y = parse_xgid(pos.xgid(match))
    assert (y.turn, y.bottom, y.top) == (1, x.on_roll, x.not_on_roll)
    assert y.cube_position == x.cube_position * x.turn
    assert (y.score_bottom, y.score_top) == (match.score_me, match.score_opp)
    assert (y.cube_log2, y.rules, y.match_length, y.dice) == (x.cube_log2, x.rules, x.match_length, (0, 0))


def test_xgid_from_position_money_default() -> None:
    text = Position.start().xgid()
    assert text.startswith("XGID=")
    x = parse_xgid(text)
    assert (x.turn, x.cube_log2, x.cube_position, x.match_length, x.rules, x.max_cube) == (1, 0, 0, 0, 0, 10)
    assert Position.from_xgid(text) == Position.start()


def test_xgid_found_inside_text_and_without_prefix() -> None:
    bare = START_XGID.removeprefix("XGID=")
    assert parse_xgid(bare) == parse_xgid(START_XGID)
    dump = f"Match info\n  {START_XGID}\r\nScore is X:0 O:0"
    assert parse_xgid(dump) == parse_xgid(START_XGID)


def _xgid_with(field: int, value: str) -> str:
    parts = START_XGID.removeprefix("XGID=").split(":")
    parts[field] = value
    return "XGID=" + ":".join(parts)


@pytest.mark.parametrize(
    "text, message",
    [
        (START_XGID.rsplit(":", 1)[0], "9 ':'-separated fields"),
        (_xgid_with(0, "-b----E-C---eE---c-e----B"), "25 characters; it needs 26"),
        (_xgid_with(0, "-b----E-C---eZ---c-e----B-"), "'Z' at index 13"),
        (_xgid_with(0, "-b----E-C---eE---c-e----D-"), "17 checkers"),
        (_xgid_with(0, "Ab----E-C---eE---c-e----B-"), "top player's bar"),
        (_xgid_with(0, "-b----E-C---eE---c-e----Ba"), "bottom player's bar"),
        (_xgid_with(1, "16"), "cube field 16"),
        (_xgid_with(2, "2"), "cube position 2"),
        (_xgid_with(3, "0"), "turn 0"),
        (_xgid_with(4, "72"), "dice field '72'"),
        (_xgid_with(4, "05"), "dice 05"),
        (_xgid_with(4, "B"), "not supported"),
        (_xgid_with(5, "x"), "bottom score field 'x' is not an integer"),
        (_xgid_with(7, "4"), "rules field 4"),
    ],
    ids=["fields", "length", "character", "too-many", "top-bar", "bottom-bar", "cube", "cube-position",
         "turn", "dice", "one-die", "beaver", "integer", "rules"],
)
def test_xgid_rejects(text: str, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        parse_xgid(text)


def test_xgid_rejects_score_at_match_length() -> None:
    with pytest.raises(FormatError, match="score 7 is not below the match length 7"):
        parse_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:64:7:0:0:7:3")


def test_format_xgid_rejects_shared_point() -> None:
    x = parse_xgid(START_XGID)
    top = list(x.top)
    top[23 - 5] += 1  # onto bottom's 6-point, which bottom holds
    top[5] -= 1
    with pytest.raises(FormatError, match="both sides"):
        format_xgid(replace(x, top=top))


def test_xgid_from_position_rejects_bad_owner() -> None:
    match = SimpleNamespace(match_length=5, score_me=0, score_opp=0, cube_value=2, cube_owner="bottom",
                            crawford=False, jacoby=False, beavers=False)
    with pytest.raises(FormatError, match="cube owner 'bottom'"):
        xgid_from_position(Position.start(), match)
