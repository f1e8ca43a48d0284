"""The registry of match-file formats: each a name, its suffixes, a content sniffer, a reader and a writer.

Everything that reads or writes a match file (``bgnet analyze``, ``bgnet play --save``,
the server's upload, a duel's saved games) goes through ``format_of`` here, so all
agree on the format of a file: the first format whose sniffer accepts the text, else
the one whose suffix the name has, else ``.mat``. A new format is one module with a
reader, a writer and a sniffer, and one ``register`` call at the bottom of this file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol

from bgnet.core.atomic import atomic_write
from bgnet.io import mat, sgf
from bgnet.io.record import MatchFileError, MatchRecord


class MatchReader(Protocol):
    """Reads and replays the text of one match file; ``source`` names it in error messages."""

    def __call__(self, text: str, *, lenient: bool = False, source: str = ...) -> MatchRecord: ...


@dataclass(frozen=True)
class MatchFormat:
    """One match-file format."""

    name: str
    """Short name, e.g. ``"mat"``."""
    suffixes: tuple[str, ...]
    """File suffixes, lower case with the dot (the first is the one written by default)."""
    sniff: Callable[[str], bool]
    """Whether a file's text is in this format, by its content alone."""
    read: MatchReader
    write: Callable[[MatchRecord], str]
    """The text of a match in this format."""


FORMATS: dict[str, MatchFormat] = {}
"""The registered formats by name, in the order they are sniffed."""
DEFAULT_FORMAT = "mat"
"""The format of a file neither its content nor its suffix identifies."""


def register(fmt: MatchFormat) -> MatchFormat:
    """Add ``fmt`` to the registry (a second format of the same name is refused)."""
    if fmt.name in FORMATS:
        raise MatchFileError(f"a match-file format named {fmt.name!r} is already registered")
    FORMATS[fmt.name] = fmt
    return fmt


def format_for_name(name: str | os.PathLike[str]) -> MatchFormat:
    """The format a file name's suffix says (``.mat`` when no format claims it), for writing."""
    suffix = Path(name).suffix.lower()
    return next((f for f in FORMATS.values() if suffix in f.suffixes), FORMATS[DEFAULT_FORMAT])


def format_of(text: str, name: str | os.PathLike[str] = "") -> MatchFormat:
    """The format of a file's ``text``: the first sniffer that accepts it, else ``name``'s suffix, else ``.mat``."""
    return next((f for f in FORMATS.values() if f.sniff(text)), None) or format_for_name(name)


def parse_match_text(text: str, *, name: str | os.PathLike[str] = "", lenient: bool = False,
                     source: str | None = None) -> MatchRecord:
    """Read and replay a match file's ``text`` in the format ``format_of`` finds (``name``: its file name)."""
    return format_of(text, name).read(text, lenient=lenient, source=source or Path(name).name or "the match file")


def read_match(path: str | os.PathLike[str], *, lenient: bool = False) -> MatchRecord:
    """Read and replay a match file of any registered format (found by ``format_of``)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise MatchFileError(f"cannot read {p}: {err.strerror or err}") from None
    return parse_match_text(text, name=p, lenient=lenient, source=p.name)


def write_match(match: MatchRecord, path: str | os.PathLike[str]) -> None:
    """Write ``match`` in the format of ``path``'s suffix, through a temporary file renamed into place."""
    p = Path(path)
    text = format_for_name(p).write(match)
    with atomic_write(p, "w", encoding="utf-8", permissions=0o644) as f:
        f.write(text)


register(MatchFormat(name="mat", suffixes=(".mat", ".txt"), sniff=mat.sniff_mat, read=mat.parse_mat,
                     write=mat.format_mat))
register(MatchFormat(name="sgf", suffixes=(".sgf",), sniff=sgf.sniff_sgf, read=sgf.parse_sgf, write=sgf.format_sgf))
