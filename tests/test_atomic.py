"""Atomic file writes: the target is replaced only by a complete file, and a failed write leaves no trace."""

import os
import stat

import numpy as np
import pytest

from bgnet.core.atomic import atomic_path, atomic_write, default_permissions


class Boom(Exception):
    """An error raised inside a write block."""


def test_success_replaces_the_target(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"old")
    with atomic_write(path) as fh:
        fh.write(b"new bytes")
        assert path.read_bytes() == b"old"  # not visible before the block ends
    assert path.read_bytes() == b"new bytes"
    assert [p.name for p in tmp_path.iterdir()] == ["f.bin"]


def test_failure_keeps_the_old_file_and_leaves_no_temp_file(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("old")
    with pytest.raises(Boom), atomic_write(path, "w", encoding="utf-8") as fh:
        fh.write("half a fil")
        raise Boom
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_failure_in_path_form_leaves_no_temp_file(tmp_path):
    path = tmp_path / "a.npz"
    with pytest.raises(Boom), atomic_path(path) as tmp:
        tmp.write_bytes(b"partial")
        raise Boom
    assert list(tmp_path.iterdir()) == []


def test_missing_folder_is_made_only_when_asked(tmp_path):
    path = tmp_path / "new" / "deeper" / "f.bin"
    with pytest.raises(FileNotFoundError), atomic_write(path) as fh:
        fh.write(b"x")
    assert not path.parent.exists()
    with atomic_write(path, parents=True) as fh:
        fh.write(b"x")
    assert path.read_bytes() == b"x"
    assert [p.name for p in path.parent.iterdir()] == ["f.bin"]


def test_text_and_binary_modes(tmp_path):
    text = tmp_path / "t.txt"
    with atomic_write(text, "w", encoding="utf-8") as fh:
        fh.write("équité\n")
    assert text.read_bytes() == "équité\n".encode()
    data = bytes(range(256))
    binary = tmp_path / "b.bin"
    with atomic_write(binary, "wb", fsync=True) as fh:
        fh.write(data)
    assert binary.read_bytes() == data


def test_path_form_with_savez(tmp_path):
    path = tmp_path / "arrays.npz"
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    with atomic_path(path) as tmp:
        assert tmp.parent == tmp_path and tmp.name.endswith(".tmp") and tmp != path
        with open(tmp, "wb") as fh:
            np.savez(fh, a=a)
    with np.load(path) as data:
        assert np.array_equal(data["a"], a)
    assert [p.name for p in tmp_path.iterdir()] == ["arrays.npz"]


def test_permissions(tmp_path):
    private = tmp_path / "private"
    with atomic_write(private) as fh:
        fh.write(b"x")
    assert stat.S_IMODE(os.stat(private).st_mode) == 0o600  # a temporary file's own mode when none is asked
    shared = tmp_path / "shared"
    with atomic_write(shared, permissions=0o644) as fh:
        fh.write(b"x")
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o644
    plain = tmp_path / "plain"
    plain.write_bytes(b"x")  # what open() gives a new file
    assert default_permissions() == stat.S_IMODE(os.stat(plain).st_mode)
