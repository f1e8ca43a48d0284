"""The choice of device kernels: its names, and why fused kernels cannot serve a device, in one sentence."""

from __future__ import annotations

import pytest

from bgnet.core import device_kernels
from bgnet.core.device_kernels import DEVICE_KERNELS, DeviceKernelsError, check_kernels, kernels_problem


def test_the_names_are_checked() -> None:
    assert DEVICE_KERNELS == ("torch", "fused")
    assert [check_kernels(k) for k in DEVICE_KERNELS] == list(DEVICE_KERNELS)
    with pytest.raises(DeviceKernelsError, match="device kernels must be torch or fused, not 'triton'"):
        check_kernels("triton")


def test_torch_ops_serve_every_device() -> None:
    for device in ("cpu", "cuda", "cuda:1"):
        assert kernels_problem("torch", device) is None
    assert kernels_problem("Fused", "cuda") == "device kernels must be torch or fused, not 'Fused'"


def test_fused_kernels_need_triton_and_a_gpu_or_the_interpreter(monkeypatch) -> None:
    monkeypatch.setattr(device_kernels, "triton_available", lambda: True)
    monkeypatch.setattr(device_kernels, "triton_interprets", lambda: False)
    assert kernels_problem("fused", "cuda") is None and kernels_problem("fused", "cuda:0") is None
    assert kernels_problem("fused", "cpu") == "fused device kernels run on a CUDA GPU, not on cpu: use torch there"
    monkeypatch.setattr(device_kernels, "triton_interprets", lambda: True)  # Triton's interpreter runs them anywhere
    assert kernels_problem("fused", "cpu") is None
    monkeypatch.setattr(device_kernels, "triton_available", lambda: False)
    assert kernels_problem("fused", "cuda") == ("fused device kernels need Triton, which torch's CUDA builds "
                                                "install: use torch here")


def test_the_interpreter_is_on_by_tritons_own_reading_of_its_variable(monkeypatch) -> None:
    pytest.importorskip("triton")
    for value, on in (("1", True), ("true", True), ("ON", True), ("0", False), ("", False), ("no", False)):
        monkeypatch.setenv("TRITON_INTERPRET", value)
        assert device_kernels.triton_interprets() is on, value
        assert (kernels_problem("fused", "cpu") is None) is on
    monkeypatch.delenv("TRITON_INTERPRET")
    assert device_kernels.triton_interprets() is False
