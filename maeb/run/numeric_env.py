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


def thread_counts() -> dict:
    """The threads this process computes with: each loaded BLAS/OpenMP library's (by its
    threadpoolctl prefix, e.g. libscipy_openblas, libgomp) and torch's intra-op threads (torch is
    imported when installed: the plain run's encoders and resampler load it). A Ray worker applies
    these (apply_thread_counts), so its vectors are the plain run's: the thread count changes the
    last bits of a BLAS or torch reduction, and Ray starts workers with OMP_NUM_THREADS=1."""
    import importlib.util

    import numpy  # noqa: F401  (the libraries are listed only once loaded)
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_info

    torch = sys.modules.get("torch")
    if torch is None and importlib.util.find_spec("torch") is not None:
        import torch  # before listing: it brings its own OpenMP library
    libraries: dict[str, int] = {}
    for lib in threadpool_info():
        key = f"{lib.get('user_api')}:{lib.get('prefix')}"
        libraries[key] = max(libraries.get(key, 0), int(lib.get("num_threads") or 0))
    return {"libraries": dict(sorted(libraries.items())), "torch": int(torch.get_num_threads()) if torch else None}


def apply_thread_counts(wanted: dict) -> str:
    """Set this process's threads to `wanted` (thread_counts() of the driver): a library of the
    same prefix gets its count, another library the largest count of its kind (blas, openmp); then
    read them back. Returns '' when they match, else what differs in one phrase."""
    from threadpoolctl import ThreadpoolController

    libraries = wanted.get("libraries") or {}
    by_api: dict[str, int] = {}
    for key, count in libraries.items():
        api = key.split(":", 1)[0]
        by_api[api] = max(by_api.get(api, 0), count)
    controller = ThreadpoolController()
    for lib in controller.lib_controllers:
        count = libraries.get(f"{lib.user_api}:{lib.prefix}", by_api.get(lib.user_api))
        if count and lib.num_threads != count:
            lib.set_num_threads(count)
    torch = sys.modules.get("torch")
    if wanted.get("torch") and torch is None:
        import torch
    if torch is not None and wanted.get("torch") and torch.get_num_threads() != wanted["torch"]:
        torch.set_num_threads(int(wanted["torch"]))
    got = thread_counts()
    wrong = [
        f"{key} {count} here, {libraries[key]} on the driver"
        for key, count in got["libraries"].items()
        if key in libraries and count != libraries[key]
    ]
    if wanted.get("torch") and got["torch"] != wanted["torch"]:
        wrong.append(f"torch {got['torch']} here, {wanted['torch']} on the driver")
    return "; ".join(wrong)
