"""The numeric environment a result was computed in: the BLAS libraries numpy, scipy and
scikit-learn actually loaded (threadpoolctl: library, version, the kernel family it picked for this
CPU, threads), the CPU model, torch's threads and the versions of the numeric packages.

Two machines with the same code and the same vectors can still give other scores when their BLAS
picks other kernels (OPENBLAS_CORETYPE, another CPU) or another thread count: the last bits of a
dot product change, and an unconverged probe turns them into points. A result records this so a
difference can be traced to it (`lite --check` names it)."""

from __future__ import annotations

import os
import platform
import sys
from functools import lru_cache
from pathlib import Path

PACKAGES = ("numpy", "scipy", "scikit-learn")
ENV_VARIABLES = ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "MKL_CBWR")


def cpu_model() -> str:
    """The CPU's model name (Linux: /proc/cpuinfo; elsewhere what the platform says)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def blas_libraries() -> list[dict]:
    """The BLAS and OpenMP libraries loaded in this process, as threadpoolctl reports them (the
    file's name only: a local path says nothing about the numbers)."""
    import numpy  # noqa: F401  (the libraries are listed only once loaded)
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_info

    out = []
    for lib in threadpool_info():
        out.append(
            {
                "api": lib.get("user_api"),
                "library": lib.get("internal_api"),
                "version": lib.get("version"),
                "architecture": lib.get("architecture"),  # OpenBLAS's kernel family (its core type)
                "threads": lib.get("num_threads"),
                "threading_layer": lib.get("threading_layer"),
                "file": Path(lib.get("filepath") or "").name,
            }
        )
    return sorted(out, key=lambda d: (str(d["api"]), str(d["file"])))


def _versions() -> dict:
    from ..core.identity import versions

    return versions(PACKAGES)


def _torch_threads() -> int | None:
    """torch's intra-op threads when torch is already loaded (it is not imported for this)."""
    torch = sys.modules.get("torch")
    try:
        return int(torch.get_num_threads()) if torch is not None else None
    except Exception:  # a partly imported or stubbed torch
        return None


@lru_cache(maxsize=1)
def _static() -> dict:
    return {
        "cpu": cpu_model(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "packages": _versions(),
    }


def numeric_env() -> dict:
    """What decides the last bits of this process's numbers (recorded as `maeb.run.numeric_env`)."""
    try:
        blas = blas_libraries()
    except Exception as exc:  # threadpoolctl absent or failing: say so rather than guess
        blas = [{"error": f"{type(exc).__name__}: {exc}"}]
    return {
        **_static(),
        "blas": blas,
        "torch_threads": _torch_threads(),
        "environment": {k: os.environ[k] for k in ENV_VARIABLES if k in os.environ},
    }


def summary(env: dict | None) -> str:
    """One line: the BLAS kernels and threads, the CPU (what differs first between two machines)."""
    if not env:
        return "not recorded"
    parts = []
    for lib in env.get("blas") or []:
        if lib.get("api") != "blas":
            continue
        parts.append(f"{lib.get('library')} {lib.get('version')} {lib.get('architecture')} x{lib.get('threads')}")
    kernels = ", ".join(dict.fromkeys(parts)) or "no BLAS recorded"
    coretype = (env.get("environment") or {}).get("OPENBLAS_CORETYPE")
    shown = f"{kernels}{f' (OPENBLAS_CORETYPE={coretype})' if coretype else ''}; {env.get('cpu')}"
    if env.get("torch_threads") is not None:
        shown += f"; torch x{env['torch_threads']}"
    return shown


def differences(reference: dict | None, run: dict | None) -> str:
    """The numeric environments of two results side by side, or '' when they are the same."""
    a, b = summary(reference), summary(run)
    packages = ""
    if reference and run and reference.get("packages") != run.get("packages"):
        pa, pb = reference.get("packages") or {}, run.get("packages") or {}
        packages = "; " + ", ".join(
            f"{k} {pa.get(k)} -> {pb.get(k)}" for k in sorted(set(pa) | set(pb)) if pa.get(k) != pb.get(k)
        )
    if a == b and not packages:
        return ""
    return f"numeric environment: reference {a}; run {b}{packages}"
