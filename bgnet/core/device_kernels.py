"""Which kernels run the device work that has a fused Triton kernel: whole-batch torch ops or the fused kernel
(``bgnet.features.v2_fused``, ``bgnet.nets.bearoff_fused``). Torch-free, so that configs can check the name cheaply."""

from __future__ import annotations

import importlib.util

from bgnet.core.errors import BgnetError

__all__ = ["DEVICE_KERNELS", "DeviceKernelsError", "check_kernels", "kernels_problem", "triton_available",
           "triton_interprets"]

DEVICE_KERNELS = ("torch", "fused")
"""How device work that has a fused kernel runs: "torch", whole-batch torch ops (any device), or "fused", one
Triton kernel each (feature set 2, the bear-off lookups; a CUDA GPU; the same bits). Work without one stays torch
ops either way."""


class DeviceKernelsError(BgnetError):
    """A name of device kernels that is not one of ``DEVICE_KERNELS``."""


def check_kernels(kernels: str) -> str:
    """``kernels`` when it names one of ``DEVICE_KERNELS``, else DeviceKernelsError in one sentence."""
    if kernels not in DEVICE_KERNELS:
        raise DeviceKernelsError(f"device kernels must be {' or '.join(DEVICE_KERNELS)}, not {kernels!r}")
    return kernels


def triton_available() -> bool:
    """Whether Triton can be imported here (torch's CUDA builds ship it; its CPU builds do not)."""
    return importlib.util.find_spec("triton") is not None


def triton_interprets() -> bool:
    """Whether Triton kernels decorated from now on run in Triton's interpreter (``TRITON_INTERPRET``, read by
    Triton's own rule), where they take CPU tensors too; False without Triton. Imports Triton when it is there."""
    if not triton_available():
        return False
    from triton import knobs

    return bool(knobs.runtime.interpret)


def kernels_problem(kernels: str, device: str) -> str | None:
    """Why ``kernels`` (one of ``DEVICE_KERNELS``) cannot serve work on ``device`` ("cpu", "cuda", "cuda:N"), in one
    sentence; None when it can. Fused kernels run on CUDA, or anywhere in Triton's interpreter (``TRITON_INTERPRET=1``,
    as the tests run them without a GPU)."""
    try:
        check_kernels(kernels)
    except DeviceKernelsError as err:
        return str(err)
    if kernels == "fused":
        if not triton_available():
            return "fused device kernels need Triton, which torch's CUDA builds install: use torch here"
        if not device.startswith("cuda") and not triton_interprets():
            return f"fused device kernels run on a CUDA GPU, not on {device}: use torch there"
    return None
