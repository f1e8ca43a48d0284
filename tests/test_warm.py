"""The cold start's second process (``bgnet.app.warm``) and the signals it gives ``bgnet.core.first_run``."""

from __future__ import annotations

import io
import subprocess
import sys
import threading
import time

import pytest

from bgnet.app import warm
from bgnet.core import first_run


@pytest.fixture(autouse=True)
def _no_leftover_signals(monkeypatch):
    monkeypatch.setattr(first_run, "_WARMING", {})


def test_waiting_for_a_group_nobody_compiles_returns_at_once():
    t0 = time.perf_counter()
    first_run.wait_for_warm("net", timeout=5)
    assert time.perf_counter() - t0 < 1


def test_a_waiter_goes_on_when_the_group_is_announced():
    first_run.expect_warm("net")
    done = threading.Event()
    waiter = threading.Thread(target=lambda: (first_run.wait_for_warm("net", timeout=20), done.set()))
    waiter.start()
    assert not done.wait(0.3)  # still waiting: nothing announced yet
    first_run.warmed("net")
    assert done.wait(5)
    waiter.join()


def _fake(script: str) -> warm.WarmProcess:
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    return warm.WarmProcess(proc)


def test_the_process_lines_release_the_waiters_and_stop_ends_it():
    helper = _fake("import time; print('net', flush=True); time.sleep(60)")
    first_run.wait_for_warm("net", timeout=20)
    assert first_run._WARMING["net"].is_set() and not first_run._WARMING["cube"].is_set()
    helper.stop()
    assert helper.proc.returncode is not None  # terminated, not left behind
    assert first_run._WARMING["cube"].is_set()  # a group that will never come releases its waiters


def test_a_process_that_dies_early_releases_every_waiter():
    helper = _fake("import sys; sys.exit(3)")
    for group in warm.GROUPS:
        first_run.wait_for_warm(group, timeout=20)
        assert first_run._WARMING[group].is_set()
    helper.stop()


def test_no_second_process_when_disabled(monkeypatch):
    monkeypatch.setenv(warm.DISABLE_ENV, "1")
    assert warm.start_warm_process() is None


def test_warm_kernels_announces_each_group_in_order():
    out = io.StringIO()
    warm.warm_kernels(out)
    assert out.getvalue().split() == list(warm.GROUPS)


def test_the_notice_starts_the_helper_at_the_first_compile_and_stops_it_at_the_end():
    events = []

    class Helper:
        def stop(self):
            events.append("stop")

    notice = first_run.CompileNotice("bgnet", io.StringIO(), on_first=lambda: events.append("start") or Helper())

    class Event:
        data = {"dispatcher": type("D", (), {"py_func": staticmethod(lambda: None)})()}

    Event.data["dispatcher"].py_func.__module__ = "bgnet.core._movegen_kernels"
    notice.on_start(Event)
    notice.on_end(Event)
    notice.on_start(Event)
    notice.on_end(Event)
    notice.finish()
    assert events == ["start", "stop"]
