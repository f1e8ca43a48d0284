"""Text IDs other backgammon tools use: gnubg Position ID and Match ID, the 20-letter key, XGID.

Boards here are gnubg's interchange form (docs/ARCHITECTURE.md, Formats 1): a pair
``(not_on_roll, on_roll)`` of 25-int arrays, index ``i`` (0..23) = that
player's own point ``i + 1``, index 24 = that player's bar.  Bits are packed
least significant first, so a byte string read as a little-endian integer
gives stream bit ``k`` as ``(n >> k) & 1``.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Protocol, Sequence

from bgnet.core.errors import FormatError  # re-exported: raised here


_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
CHECKERS = 15
"""Checkers a side (the one definition; ``bgnet.core.position`` takes it from here)."""
POSITION_ID_LENGTH = 14
MATCH_ID_LENGTH = 12
MAX_CUBE_LOG2 = 15
_MAX_15BIT = (1 << 15) - 1
GAME_STATES = {0: "no game", 1: "playing", 2: "over", 3: "ended by resignation", 4: "ended by a dropped cube"}


# -- shared checks ------------------------------------------------------------


def _check_boards(
    not_on_roll: Sequence[int],
    on_roll: Sequence[int],
    source: str,
    names: tuple[str, str] = ("player not on roll", "player on roll"),
) -> None:
    """Reject arrays that are not 25 counts, hold over 15 checkers, or share a point."""
    for name, arr in zip(names, (not_on_roll, on_roll)):
        if len(arr) != 25:
            raise FormatError(f"{source}: the array of the {name} has {len(arr)} entries; it needs 25")
        if any(int(n) < 0 for n in arr):
            raise FormatError(f"{source}: the array of the {name} has a negative checker count")
        total = sum(int(n) for n in arr)
        if total > CHECKERS:
            raise FormatError(f"{source}: the {name} has {total} checkers; at most {CHECKERS} are allowed")
    for i in range(24):
        if on_roll[i] and not_on_roll[23 - i]:
            raise FormatError(
                f"{source}: both sides have checkers on the same point "
                f"(point {i + 1} of the {names[1]}, point {24 - i} of the {names[0]})"
            )


def _check_b64(text: str, length: int, what: str) -> str:
    """Strip ``text`` and check its length and alphabet; return the stripped text."""
    if not isinstance(text, str):
        raise FormatError(f"a {what} must be a string, not {type(text).__name__}")
    s = text.strip()
    if len(s) != length:
        raise FormatError(f"a {what} has {length} characters, but {s!r} has {len(s)}")
    for i, ch in enumerate(s):
        if ch not in _B64:
            raise FormatError(f"the {what} {s!r} has the character {ch!r} at index {i}, which is not Base64")
    return s


# -- Position ID and 20-letter key --------------------------------------------


def _key_from_boards(boards: tuple[Sequence[int], Sequence[int]], source: str) -> bytes:
    """The 10 key bytes: per side (not on roll first) and index, that many one-bits then a zero."""
    not_on_roll, on_roll = boards
    _check_boards(not_on_roll, on_roll, source)
    value, k = 0, 0
    for arr in (not_on_roll, on_roll):
        for n in arr:
            value |= ((1 << int(n)) - 1) << k
            k += int(n) + 1
    return value.to_bytes(10, "little")


def _boards_from_key(key: bytes, source: str) -> tuple[list[int], list[int]]:
    """Read the runs of ones of a 10-byte key back into two arrays (bits past the 50th zero ignored)."""
    value = int.from_bytes(key, "little")
    arrays: list[list[int]] = [[], []]
    side, run = 0, 0
    for k in range(8 * len(key)):
        if (value >> k) & 1:
            run += 1
            if run > CHECKERS:
                who = "player not on roll" if side == 0 else "player on roll"
                raise FormatError(f"{source}: one point of the {who} holds more than {CHECKERS} checkers")
            continue
        arrays[side].append(run)
        run = 0
        if len(arrays[side]) == 25:
            side += 1
            if side == 2:
                break
    else:
        raise FormatError(f"{source}: the key ends before both sides are complete, so it holds more than 30 checkers")
    _check_boards(arrays[0], arrays[1], source)
    return arrays[0], arrays[1]


def position_id_from_boards(boards: tuple[Sequence[int], Sequence[int]]) -> str:
    """The 14-character gnubg Position ID of ``(not_on_roll, on_roll)``."""
    key = _key_from_boards(boards, "cannot write a Position ID")
    return base64.b64encode(key).decode("ascii").rstrip("=")


def boards_from_position_id(text: str) -> tuple[list[int], list[int]]:
    """Decode a gnubg Position ID into ``(not_on_roll, on_roll)``."""
    s = _check_b64(text, POSITION_ID_LENGTH, "Position ID")
    return _boards_from_key(base64.b64decode(s + "=="), f"the Position ID {s!r} is invalid")


def key20_from_boards(boards: tuple[Sequence[int], Sequence[int]]) -> str:
    """The 20-letter position key (gnubg_nn, training files): each key byte as two letters A..P, high nibble first."""
    key = _key_from_boards(boards, "cannot write a position key")
    return "".join(chr(65 + (b >> 4)) + chr(65 + (b & 15)) for b in key)


def boards_from_key20(text: str) -> tuple[list[int], list[int]]:
    """Decode a 20-letter position key into ``(not_on_roll, on_roll)``."""
    if not isinstance(text, str):
        raise FormatError(f"a position key must be a string, not {type(text).__name__}")
    s = text.strip()
    if len(s) != 20:
        raise FormatError(f"a position key has 20 letters, but {s!r} has {len(s)}")
    for i, ch in enumerate(s):
        if not "A" <= ch <= "P":
            raise FormatError(f"the position key {s!r} has the character {ch!r} at index {i}; only A..P are allowed")
    key = bytes(((ord(s[2 * j]) - 65) << 4) | (ord(s[2 * j + 1]) - 65) for j in range(10))
    return _boards_from_key(key, f"the position key {s!r} is invalid")


# -- Match ID -----------------------------------------------------------------

# (name, first stream bit, width) of the Match ID fields, docs/ARCHITECTURE.md, Formats 3.
_MATCH_LAYOUT = (
    ("cube_log2", 0, 4),
    ("cube_owner", 4, 2),
    ("dice_owner", 6, 1),
    ("crawford", 7, 1),
    ("game_state", 8, 3),
    ("turn", 11, 1),
    ("double_offered", 12, 1),
    ("resignation", 13, 2),
    ("die1", 15, 3),
    ("die2", 18, 3),
    ("match_length", 21, 15),
    ("score0", 36, 15),
    ("score1", 51, 15),
    ("jacoby_off", 66, 1),
)


@dataclass(frozen=True)
class MatchIdFields:
    """The decoded fields of a gnubg Match ID; players are gnubg's 0 and 1, not X and O."""

    cube_value: int
    """Cube value (1, 2, 4, ... 2**15); the pre-double value while a double is pending."""
    cube_owner: int
    """0 or 1 = that player owns the cube, 3 = centred."""
    dice_owner: int
    """The player on roll, or who just rolled or doubled."""
    crawford: bool
    """True in the Crawford game."""
    game_state: int
    """0 no game, 1 playing, 2 over, 3 ended by resignation, 4 ended by a dropped cube."""
    turn: int
    """The player who must act now."""
    double_offered: bool
    """True while a double waits for an answer."""
    resignation: int
    """Resignation on offer: 0 none, 1 single, 2 gammon, 3 backgammon."""
    dice: tuple[int, int]
    """(die1, die2) as stored; (0, 0) = not rolled."""
    match_length: int
    """Match length in points; 0 = money game."""
    score: tuple[int, int]
    """(player 0's score, player 1's score)."""
    jacoby_off: bool
    """Raw bit 66: True when the Jacoby rule is not in use (meaningful in money play only)."""



def _check_dice(source: str, dice: tuple[int, int], double_offered: bool, sep: str) -> None:
    """Dice of a Match ID or an XGID: two values 1..6, or 0 and 0 for not rolled, and not rolled while a double is
    offered (``sep`` joins the two dice as the format writes them)."""
    d1, d2 = dice
    if (d1, d2) != (0, 0) and not (1 <= d1 <= 6 and 1 <= d2 <= 6):
        raise FormatError(f"{source}: the dice {d1}{sep}{d2} are not two values 1..6 (or 0{sep}0 for not rolled)")
    if double_offered and (d1, d2) != (0, 0):
        raise FormatError(f"{source}: a double is offered but the dice {d1}{sep}{d2} are already rolled")

def _check_match_fields(f: MatchIdFields, source: str) -> None:
    """Reject field values a Match ID cannot hold or a game cannot reach."""
    cv = f.cube_value
    if not isinstance(cv, int) or cv < 1 or cv & (cv - 1) or cv > 1 << MAX_CUBE_LOG2:
        raise FormatError(f"{source}: the cube value {cv!r} is not a power of two from 1 to {1 << MAX_CUBE_LOG2}")
    if f.cube_owner not in (0, 1, 3):
        raise FormatError(f"{source}: the cube owner {f.cube_owner!r} must be 0 or 1 (a player) or 3 (centred)")
    for name in ("dice_owner", "turn"):
        if getattr(f, name) not in (0, 1):
            raise FormatError(f"{source}: the {name.replace('_', ' ')} {getattr(f, name)!r} must be player 0 or 1")
    if f.game_state not in GAME_STATES:
        raise FormatError(f"{source}: the game state {f.game_state!r} is not one of 0..4")
    if f.resignation not in (0, 1, 2, 3):
        raise FormatError(f"{source}: the resignation level {f.resignation!r} must be 0..3")
    if len(f.dice) != 2:
        raise FormatError(f"{source}: the dice must be a pair, not {f.dice!r}")
    _check_dice(source, f.dice, f.double_offered, "-")
    for name, v in (("match length", f.match_length), ("score of player 0", f.score[0]), ("score of player 1", f.score[1])):
        if not 0 <= v <= _MAX_15BIT:
            raise FormatError(f"{source}: the {name} {v!r} must be 0..{_MAX_15BIT}")
    if f.match_length and f.game_state in (0, 1):
        for player, sc in enumerate(f.score):
            if sc >= f.match_length:
                raise FormatError(
                    f"{source}: player {player} has {sc} points in a {f.match_length}-point match, "
                    f"but the game state says '{GAME_STATES[f.game_state]}' rather than over"
                )


def parse_match_id(text: str) -> MatchIdFields:
    """Decode a 12-character gnubg Match ID."""
    s = _check_b64(text, MATCH_ID_LENGTH, "Match ID")
    value = int.from_bytes(base64.b64decode(s), "little")
    raw = {name: (value >> start) & ((1 << width) - 1) for name, start, width in _MATCH_LAYOUT}
    fields = MatchIdFields(
        cube_value=1 << raw["cube_log2"],
        cube_owner=raw["cube_owner"],
        dice_owner=raw["dice_owner"],
        crawford=bool(raw["crawford"]),
        game_state=raw["game_state"],
        turn=raw["turn"],
        double_offered=bool(raw["double_offered"]),
        resignation=raw["resignation"],
        dice=(raw["die1"], raw["die2"]),
        match_length=raw["match_length"],
        score=(raw["score0"], raw["score1"]),
        jacoby_off=bool(raw["jacoby_off"]),
    )
    _check_match_fields(fields, f"the Match ID {s!r} is invalid")
    return fields


def match_id_from_fields(fields: MatchIdFields) -> str:
    """The 12-character gnubg Match ID of ``fields``."""
    _check_match_fields(fields, "cannot write a Match ID")
    raw = {
        "cube_log2": fields.cube_value.bit_length() - 1,
        "cube_owner": fields.cube_owner,
        "dice_owner": fields.dice_owner,
        "crawford": int(fields.crawford),
        "game_state": fields.game_state,
        "turn": fields.turn,
        "double_offered": int(fields.double_offered),
        "resignation": fields.resignation,
        "die1": fields.dice[0],
        "die2": fields.dice[1],
        "match_length": fields.match_length,
        "score0": fields.score[0],
        "score1": fields.score[1],
        "jacoby_off": int(fields.jacoby_off),
    }
    value = 0
    for name, start, _width in _MATCH_LAYOUT:
        value |= int(raw[name]) << start
    return base64.b64encode(value.to_bytes(9, "little")).decode("ascii")


# -- XGID -----------------------------------------------------------------------

_XGID_FIELDS = 10  # the position and nine numbers
_XGID_IN_TEXT = re.compile(r"XGID=([^\r\n]*)", re.IGNORECASE)


@dataclass(frozen=True)
class XgidFields:
    """The fields of an XGID, which uses a fixed bottom (upper case) / top (lower case) viewpoint."""

    bottom: list[int]
    """Bottom player's checkers, gnubg-style array in bottom's own numbering (bar at 24)."""
    top: list[int]
    """Top player's checkers, gnubg-style array in top's own numbering (bar at 24)."""
    cube_log2: int
    """log2 of the cube value (the pre-double value while a double is pending), 0..15."""
    cube_position: int
    """1 = bottom owns the cube, -1 = top owns it, 0 = centred."""
    turn: int
    """1 = bottom, -1 = top: the player on roll, or the doubler when ``double_offered``."""
    dice: tuple[int, int]
    """The dice as written; (0, 0) = not rolled."""
    double_offered: bool
    """True for the dice field 'D': the turn player doubled and the other must answer."""
    score_bottom: int
    """Bottom player's score."""
    score_top: int
    """Top player's score."""
    rules: int
    """Match: 1 = Crawford game. Money: bit 0 = Jacoby, bit 1 = beavers."""
    match_length: int
    """Match length; 0 = money game."""
    max_cube: int
    """log2 of the cube limit (0 = cube disabled for gnubg)."""

    @property
    def on_roll(self) -> list[int]:
        """The array of the turn player."""
        return self.bottom if self.turn == 1 else self.top

    @property
    def not_on_roll(self) -> list[int]:
        """The array of the player who is not the turn player."""
        return self.top if self.turn == 1 else self.bottom


def _xgid_count(ch: str, i: int, source: str) -> tuple[int, bool]:
    """(count, is_upper) of one position character; '-' gives (0, True)."""
    if ch == "-":
        return 0, True
    if "A" <= ch <= "P":
        return ord(ch) - 64, True
    if "a" <= ch <= "p":
        return ord(ch) - 96, False
    raise FormatError(f"{source}: the position has the character {ch!r} at index {i}; use '-', A..O or a..o")


def _parse_int(text: str, name: str, source: str) -> int:
    """One integer field of an XGID."""
    if not re.fullmatch(r"-?\d+", text):
        raise FormatError(f"{source}: the {name} field {text!r} is not an integer")
    return int(text)


def _check_xgid_numbers(f: XgidFields, source: str) -> None:
    """Reject XGID numbers out of range."""
    if not 0 <= f.cube_log2 <= MAX_CUBE_LOG2:
        raise FormatError(f"{source}: the cube field {f.cube_log2} must be 0..{MAX_CUBE_LOG2} (log2 of the cube value)")
    if f.cube_position not in (-1, 0, 1):
        raise FormatError(f"{source}: the cube position {f.cube_position} must be 1 (bottom), -1 (top) or 0 (centred)")
    if f.turn not in (-1, 1):
        raise FormatError(f"{source}: the turn {f.turn} must be 1 (bottom) or -1 (top)")
    _check_dice(source, f.dice, f.double_offered, "")
    if f.match_length < 0 or f.score_bottom < 0 or f.score_top < 0 or f.max_cube < 0:
        raise FormatError(f"{source}: scores, match length and max cube must not be negative")
    if not 0 <= f.rules <= 3 or (f.match_length and f.rules > 1):
        allowed = "0 or 1 (Crawford game)" if f.match_length else "0..3 (bit 0 Jacoby, bit 1 beavers)"
        raise FormatError(f"{source}: the rules field {f.rules} must be {allowed}")
    if f.match_length:
        for who, sc in (("bottom", f.score_bottom), ("top", f.score_top)):
            if sc >= f.match_length:
                raise FormatError(f"{source}: the {who} player's score {sc} is not below the match length {f.match_length}")


def is_xgid(text: str) -> bool:
    """Whether ``text`` is written as an XGID (``XGID=`` or ten ``:``-separated fields), not a Position ID.

    The one place that tells the two apart: ``Position.parse`` and the CLI ask here.
    """
    text = text.strip()
    return text.upper().startswith("XGID=") or text.count(":") >= 9


def parse_xgid(text: str) -> XgidFields:
    """Parse an XGID, with or without ``XGID=``; with it, the ID may sit inside a longer text."""
    if not isinstance(text, str):
        raise FormatError(f"an XGID must be a string, not {type(text).__name__}")
    found = _XGID_IN_TEXT.search(text)
    s = (found.group(1) if found else text).strip()
    source = f"the XGID {s!r} is invalid"
    parts = s.split(":")
    if len(parts) != _XGID_FIELDS:
        raise FormatError(f"{source}: it has {len(parts)} ':'-separated fields; an XGID has {_XGID_FIELDS}")
    pos = parts[0]
    if len(pos) != 26:
        raise FormatError(f"{source}: the position has {len(pos)} characters; it needs 26")
    bottom, top = [0] * 25, [0] * 25
    for i, ch in enumerate(pos):
        n, upper = _xgid_count(ch, i, source)
        if not n:
            continue
        if i == 0 and upper:
            raise FormatError(f"{source}: index 0 is the top player's bar and needs a lower-case letter, not {ch!r}")
        if i == 25 and not upper:
            raise FormatError(f"{source}: index 25 is the bottom player's bar and needs an upper-case letter, not {ch!r}")
        if i == 0:
            top[24] = n
        elif i == 25:
            bottom[24] = n
        elif upper:
            bottom[i - 1] = n
        else:
            top[24 - i] = n
    for who, arr in (("bottom", bottom), ("top", top)):
        if sum(arr) > CHECKERS:
            raise FormatError(f"{source}: the {who} player has {sum(arr)} checkers; at most {CHECKERS} are allowed")
    dice_text = parts[4]
    double_offered = dice_text.upper() == "D"
    if double_offered:
        dice = (0, 0)
    elif dice_text.upper() in ("B", "R"):
        raise FormatError(f"{source}: the dice field {dice_text!r} (beaver/raccoon pending) is not supported")
    elif re.fullmatch(r"[0-6][0-6]", dice_text):
        dice = (int(dice_text[0]), int(dice_text[1]))
    else:
        raise FormatError(f"{source}: the dice field {dice_text!r} must be 00, two dice 1..6 such as 52, or D")
    names = ("cube", "cube position", "turn", "", "bottom score", "top score", "rules", "match length", "max cube")
    nums = [0 if k == 3 else _parse_int(parts[k + 1], names[k], source) for k in range(9)]
    fields = XgidFields(
        bottom=bottom,
        top=top,
        cube_log2=nums[0],
        cube_position=nums[1],
        turn=nums[2],
        dice=dice,
        double_offered=double_offered,
        score_bottom=nums[4],
        score_top=nums[5],
        rules=nums[6],
        match_length=nums[7],
        max_cube=nums[8],
    )
    _check_xgid_numbers(fields, source)
    return fields


def format_xgid(fields: XgidFields) -> str:
    """The XGID text of ``fields``, always with the ``XGID=`` prefix."""
    source = "cannot write an XGID"
    _check_boards(fields.top, fields.bottom, source, ("top player", "bottom player"))
    _check_xgid_numbers(fields, source)
    chars = ["-"] * 26
    if fields.top[24]:
        chars[0] = chr(96 + fields.top[24])
    if fields.bottom[24]:
        chars[25] = chr(64 + fields.bottom[24])
    for i in range(1, 25):
        if fields.bottom[i - 1]:
            chars[i] = chr(64 + fields.bottom[i - 1])
        elif fields.top[24 - i]:
            chars[i] = chr(96 + fields.top[24 - i])
    if fields.double_offered:
        dice = "D"
    else:
        dice = f"{fields.dice[0]}{fields.dice[1]}"
    nums = (
        fields.cube_log2, fields.cube_position, fields.turn, dice, fields.score_bottom,
        fields.score_top, fields.rules, fields.match_length, fields.max_cube,
    )
    return "XGID=" + "".join(chars) + "".join(f":{v}" for v in nums)


class _HasBoards(Protocol):
    """Anything with gnubg arrays, such as ``bgnet.core.position.Position``."""

    def boards(self) -> tuple[list[int], list[int]]: ...


_OWNER_TO_XGID = {"centred": 0, "centered": 0, "me": 1, "opponent": -1}


def xgid_from_position(pos: _HasBoards, match: object | None = None, *, dice: tuple[int, int] = (0, 0)) -> str:
    """An XGID of ``pos`` with the side on roll at the bottom; money game unless ``match`` gives the state.

    ``match`` is any object with ``match_length, score_me, score_opp, cube_value,
    cube_owner`` ("centred", "me" or "opponent"), ``crawford``, ``jacoby`` and ``beavers``.
    The max-cube field is 10 (a 1024 cube), as XG writes for money play.
    """
    not_on_roll, on_roll = pos.boards()
    cube_log2, cube_position, rules, length, score_me, score_opp = 0, 0, 0, 0, 0, 0
    if match is not None:
        length = int(getattr(match, "match_length", 0))
        score_me = int(getattr(match, "score_me", 0))
        score_opp = int(getattr(match, "score_opp", 0))
        cube_value = int(getattr(match, "cube_value", 1))
        if cube_value < 1 or cube_value & (cube_value - 1):
            raise FormatError(f"cannot write an XGID: the cube value {cube_value} is not a power of two")
        cube_log2 = cube_value.bit_length() - 1
        owner = getattr(match, "cube_owner", "centred")
        if owner not in _OWNER_TO_XGID:
            raise FormatError(f"cannot write an XGID: the cube owner {owner!r} is not 'centred', 'me' or 'opponent'")
        cube_position = _OWNER_TO_XGID[owner]
        if length:
            rules = int(bool(getattr(match, "crawford", False)))
        else:
            rules = int(bool(getattr(match, "jacoby", False))) | 2 * int(bool(getattr(match, "beavers", False)))
    fields = XgidFields(
        bottom=list(on_roll),
        top=list(not_on_roll),
        cube_log2=cube_log2,
        cube_position=cube_position,
        turn=1,
        dice=(int(dice[0]), int(dice[1])),
        double_offered=False,
        score_bottom=score_me,
        score_top=score_opp,
        rules=rules,
        match_length=length,
        max_cube=10,
    )
    return format_xgid(fields)
