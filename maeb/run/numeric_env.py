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
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

PACKAGES = ("numpy", "scipy", "scikit-learn")
# BLAS threads of the evaluator's small fits (probes, k-means). scripts/blas_threads.py on MAEB-lite
# sized data, 2 loaded cores (AMD EPYC), 2 threads vs 1, alternating: the probe's fit took 3.2x
# (96-d) and 5.3x (384-d) as long with 2 threads, k-means 1.0x; and one thread makes the evaluator's
# last bits independent of the machine's core count. Embedding (torch, CTranslate2) is not limited.
EVALUATOR_BLAS_THREADS = 1
ENV_VARIABLES = (
    "OPENBLAS_CORETYPE",
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "MKL_CBWR",
    "MKL_ENABLE_INSTRUCTIONS",
    "ATEN_CPU_CAPABILITY",
    "CT2_FORCE_CPU_ISA",
)
# what an imitated kernel needs of the CPU (/proc/cpuinfo flags): a library told to run kernels the
# CPU lacks dies (OPENBLAS_CORETYPE=SkylakeX on a CPU without AVX-512: SIGILL in one matrix product)
NEEDS: dict[str, dict[str, set[str]]] = {
    "OPENBLAS_CORETYPE": {
        "SkylakeX": {"avx512f", "avx512bw", "avx512vl", "avx512dq"},
        "Cooperlake": {"avx512f", "avx512_bf16"},
        "Haswell": {"avx2", "fma"},
        "Zen": {"avx2", "fma"},
        "Sandybridge": {"avx"},
        "Nehalem": {"sse4_2"},
        "Prescott": {"pni"},  # SSE3 is "pni" in /proc/cpuinfo
    },
    "ATEN_CPU_CAPABILITY": {"avx512": {"avx512f", "avx512bw", "avx512vl", "avx512dq"}, "avx2": {"avx2", "fma"}, "default": set()},
    "MKL_ENABLE_INSTRUCTIONS": {"AVX512": {"avx512f"}, "AVX2": {"avx2", "fma"}, "AVX": {"avx"}, "SSE4_2": {"sse4_2"}},
    "CT2_FORCE_CPU_ISA": {"AVX512": {"avx512f", "avx512bw"}, "AVX2": {"avx2", "fma"}, "AVX": {"avx"}, "GENERIC": set()},
}


def cpu_model() -> str:
    """The CPU's model name (Linux: /proc/cpuinfo; elsewhere what the platform says)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


# other CPUs imitated for every library that computes vectors or scores (scripts/parity.py --imitate,
# lite --check's out-of-sample set-ups): torch's kernels, torch's MKL, CTranslate2 and numpy's OpenBLAS
IMITATE = {
    "avx2": {
        "ATEN_CPU_CAPABILITY": "avx2",
        "MKL_ENABLE_INSTRUCTIONS": "AVX2",
        "CT2_FORCE_CPU_ISA": "AVX2",
        "OPENBLAS_CORETYPE": "Sandybridge",
    },
    "generic": {
        "ATEN_CPU_CAPABILITY": "default",
        "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
        "CT2_FORCE_CPU_ISA": "GENERIC",
        "OPENBLAS_CORETYPE": "Haswell",
    },
    # the oldest kernels of each library: OpenBLAS's Prescott request runs its Katmai (SSE) kernels,
    # under which k-means' distances flip a clip that 2 replays on perturbed vectors did not (issue 31)
    "sse": {
        "ATEN_CPU_CAPABILITY": "default",
        "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
        "CT2_FORCE_CPU_ISA": "GENERIC",
        "OPENBLAS_CORETYPE": "Prescott",
    },
}


def cpu_flags(text: str | None = None) -> set[str] | None:
    """The CPU's feature flags (/proc/cpuinfo's first "flags" line), None where unknown."""
    try:
        text = text if text is not None else Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.lower().startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return None


def runnable(variable: str, value: str, flags: set[str] | None = None) -> bool:
    """Whether this CPU can execute the kernels `variable=value` picks (an unknown value or CPU: only
    what needs nothing)."""
    needs = NEEDS.get(variable, {}).get(value)
    if needs is None:
        return False
    flags = cpu_flags() if flags is None else flags
    return not needs if flags is None else needs <= flags


def imitable(setup: dict[str, str], flags: set[str] | None = None) -> tuple[dict[str, str], list[str]]:
    """The part of an imitated set-up this CPU can execute, and what was left out (one phrase each)."""
    keep, left = {}, []
    for variable, value in setup.items():
        if variable not in NEEDS or runnable(variable, value, flags):
            keep[variable] = value
        else:
            needs = NEEDS.get(variable, {}).get(value)
            why = f"needs {', '.join(sorted(needs))}" if needs else "unknown kernel"
            left.append(f"{variable}={value} ({why}, which this CPU lacks)")
    return keep, left


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


@contextmanager
def evaluator_threads(emb=None) -> Iterator[None]:
    """A context in which numpy's, scipy's and scikit-learn's BLAS run EVALUATOR_BLAS_THREADS
    threads; the embedder's model work inside it (emb.model_threads) runs at the counts the process
    had before, as a Ray worker embedding the same clips does, so vectors do not depend on whether
    they were computed before or during an evaluation."""
    from threadpoolctl import ThreadpoolController

    controller = ThreadpoolController()
    before = {lib["prefix"]: lib["num_threads"] for lib in controller.info() if lib["user_api"] == "blas"}
    previous = emb.model_threads if emb is not None else None
    with controller.limit(limits=EVALUATOR_BLAS_THREADS, user_api="blas"):
        if emb is not None:
            emb.model_threads = lambda: controller.limit(limits=before)
        try:
            yield
        finally:
            if emb is not None:
                emb.model_threads = previous


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
        "evaluator_blas_threads": EVALUATOR_BLAS_THREADS,  # what the evaluator's fits ran (evaluator_threads)
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
    imitated = {k: v for k, v in (env.get("environment") or {}).items() if k in NEEDS}
    shown = kernels + (f" ({', '.join(f'{k}={v}' for k, v in sorted(imitated.items()))})" if imitated else "")
    shown += f"; {env.get('cpu')}"
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
