"""The checks before a fused Triton kernel runs: one sentence for each refusal, boards as contiguous int8."""

import pytest
import torch

from bgnet.core.errors import BgnetError
from bgnet.core.fused_boards import boards_for_kernel


class KernelError(BgnetError):
    pass


class InterpretedFunction:
    """Stands for a kernel in Triton's interpreter (the check reads its type's name)."""


def test_no_triton_a_cpu_without_the_interpreter_and_bad_shapes_are_refused() -> None:
    boards = torch.zeros((2, 26), dtype=torch.int8)
    with pytest.raises(KernelError, match="the kernel needs Triton.*use the torch ops here"):
        boards_for_kernel(boards, None, KernelError, "the kernel", "the torch ops")
    with pytest.raises(KernelError, match="runs on a CUDA GPU.*not on cpu: use the torch ops there"):
        boards_for_kernel(boards, object(), KernelError, "the kernel", "the torch ops")
    with pytest.raises(KernelError, match=r"boards must be \(N, 26\), not \(2, 25\)"):
        boards_for_kernel(torch.zeros((2, 25), dtype=torch.int8), InterpretedFunction(), KernelError, "k", "t")


def test_boards_come_back_contiguous_int8_with_the_kernel() -> None:
    kernel = InterpretedFunction()
    wide = torch.arange(-5, 47, dtype=torch.int16).reshape(26, 2).t()  # (2, 26), not contiguous
    got_kernel, got = boards_for_kernel(wide, kernel, KernelError, "k", "t")
    assert got_kernel is kernel and got.dtype == torch.int8 and got.is_contiguous()
    assert torch.equal(got, wide.to(torch.int8))
