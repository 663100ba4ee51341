"""Device memory: telling an out-of-memory error from any other failure, and giving the memory
back before a retry (the embedder's back-off uses both)."""

from __future__ import annotations

import gc
import sys


def is_out_of_memory(exc: BaseException) -> bool:
    """A device out-of-memory error: torch.cuda.OutOfMemoryError (torch is only looked up if
    already imported), or a RuntimeError whose message says "out of memory" (MPS, older torch, a
    wrapper that re-raises), here or in the exception's causes."""
    torch = sys.modules.get("torch")
    oom = getattr(getattr(torch, "cuda", None), "OutOfMemoryError", None)
    seen = 0
    cause: BaseException | None = exc
    while cause is not None and seen < 8:
        if (oom is not None and isinstance(cause, oom)) or (
            isinstance(cause, RuntimeError) and "out of memory" in str(cause).lower()
        ):
            return True
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return False


def free_device_memory() -> None:
    """Give the failed batch's tensors back to the allocator before the retry."""
    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


class OutOfMemory(Exception):
    """An encoder's out-of-memory error, carried out of _forward to the back-off."""
