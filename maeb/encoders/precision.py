"""`--precision`: the dtype option it sets for a family whose wrapper takes one, refused in one
line where the device cannot compute in it, and the check that the loaded encoder obeyed."""

from __future__ import annotations

from collections.abc import Mapping

from ..core.errors import ModelError
from .load import resolve_factory
from .meta import ModelMeta

# --precision NAME -> the dtype option of the families whose wrapper takes one (maeb.encoders.hf)
PRECISIONS = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}


def precision_options(meta: ModelMeta, precision: str | None, device: str, overrides: dict) -> dict:
    """The encoder option a --precision sets ({"dtype": ...}; {} without one), refused in one line
    where it cannot apply: a family whose wrapper has no dtype, a dtype given twice, a device
    that cannot compute in it."""
    import inspect

    if precision is None:
        return {}
    if precision not in PRECISIONS:
        raise ModelError(f"unknown precision {precision!r}; known: {', '.join(PRECISIONS)}")
    dtype = PRECISIONS[precision]
    accepts: Mapping[str, inspect.Parameter]
    try:
        accepts = inspect.signature(resolve_factory(meta.family)).parameters
    except (TypeError, ValueError):
        accepts = {}
    if "dtype" not in accepts:
        raise ModelError(
            f"model {meta.name!r}: --precision {precision} does not apply to family {meta.family!r}, whose wrapper "
            "has no dtype option; run it without --precision"
        )
    given = overrides.get("dtype", meta.options.get("dtype"))
    if given is not None and given != dtype:
        raise ModelError(f"model {meta.name!r}: --precision {precision} contradicts dtype={given!r}; give one of them")
    problem = device_precision_problem(dtype, device)
    if problem:
        raise ModelError(f"model {meta.name!r}: --precision {precision} cannot run on {device}: {problem}")
    return {"dtype": dtype}


def device_precision_problem(dtype: str, device: str) -> str | None:
    """Why `device` cannot compute in `dtype` (None: it can): a CUDA device without bfloat16, or a
    CPU torch build without half-precision kernels (probed with a convolution, a matmul and a
    layer norm, what the audio encoders run)."""
    if dtype == "float32":
        return None
    import torch

    kind = str(device).split(":")[0]
    if kind == "cuda":
        if not torch.cuda.is_available():
            return "no CUDA device is available"
        if dtype == "bfloat16" and not torch.cuda.is_bf16_supported():
            return f"{torch.cuda.get_device_name(device)} has no bfloat16 support; use fp16"
        return None
    if kind == "cpu":
        return _cpu_half_problem(dtype)
    return None


def _cpu_half_problem(dtype: str) -> str | None:
    import torch

    t = getattr(torch, dtype)
    try:
        x = torch.ones(1, 2, 8, dtype=t)
        torch.nn.functional.conv1d(x, torch.ones(2, 2, 3, dtype=t))
        torch.nn.functional.layer_norm(x @ torch.ones(8, 8, dtype=t), (8,))
    except RuntimeError as exc:
        return f"torch {torch.__version__} has no {dtype} CPU kernels ({str(exc).splitlines()[0]}); use --device cuda or bf16"
    return None


def check_precision(meta: ModelMeta, encoder, precision: str | None) -> None:
    """The loaded encoder computes in the precision asked for (a wrapper or a transformers release
    that ignores the dtype would otherwise label float32 vectors bf16)."""
    if precision is None:
        return
    got = (encoder.config() or {}).get("dtype")
    if got != PRECISIONS[precision]:
        raise ModelError(
            f"model {meta.name!r}: --precision {precision} asked for {PRECISIONS[precision]}, but it loaded in {got}"
        )
