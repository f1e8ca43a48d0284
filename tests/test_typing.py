"""``mypy bgnet`` through a subprocess, with the settings of ``[tool.mypy]`` in pyproject.toml: no errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_reports_no_errors_in_bgnet() -> None:
    """The library type-checks cleanly (the library is typed), so new code keeps its hints honest."""
    pytest.importorskip("mypy")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "bgnet"], capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout, result.stdout
