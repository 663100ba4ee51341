"""What the fault probes share (scripts/fault_probe_trust.py, fault_probe_outputs.py): verdicts, the case
registry, one-line error checks, `maeb` run as a user runs it with a cache folder of the probe's
own, and the loop that runs the cases and prints their counts."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # maeb from this checkout, not an installed copy
KINDS = ("OK", "WRONG", "TRACEBACK", "CONFUSING", "SECURITY")


class Verdict(Exception):
    """A case's finding other than OK."""

    def __init__(self, kind: str, detail: str):
        super().__init__(detail)
        self.kind = kind


def registry() -> tuple[list[Callable], Callable]:
    """A probe's list of cases and the decorator that adds a function to it."""
    cases: list[Callable] = []

    def case(fn):
        cases.append(fn)
        return fn

    return cases, case


def expect(condition: bool, kind: str, detail: str) -> None:
    """A finding of `kind` unless condition holds."""
    if not condition:
        raise Verdict(kind, detail)


def one_line_error(call, *needles: str, kind: str = "CONFUSING") -> str:
    """call() must raise maeb's own error, in one line holding every needle."""
    from maeb.core.errors import MaebError

    try:
        call()
    except MaebError as exc:
        text = str(exc)
        expect("\n" not in text, kind, f"a multi-line error: {text[:120]!r}")
        for needle in needles:
            expect(needle in text, kind, f"{needle!r} not in {text[:200]!r}")
        return text
    except Exception as exc:  # a raw exception is what a user sees as a traceback
        raise Verdict("TRACEBACK", f"{type(exc).__name__}: {str(exc)[:160]}") from exc
    raise Verdict("WRONG", "accepted silently")


def cli(prefix: str) -> Callable[..., subprocess.CompletedProcess]:
    """`maeb ARGS` in a subprocess, with a cache folder of the probe's own (a dry run reads no
    one's cache and builds nothing there); env adds variables, cwd defaults to the checkout."""
    cache = Path(tempfile.mkdtemp(prefix=prefix))

    def maeb_cli(*args, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
        full = {**os.environ, "MAEB_CACHE_DIR": str(cache), **(env or {})}
        return subprocess.run(
            [sys.executable, "-m", "maeb", *map(str, args)],
            capture_output=True,
            text=True,
            env=full,
            cwd=cwd or ROOT,
            timeout=300,
        )

    return maeb_cli


def no_traceback(done: subprocess.CompletedProcess) -> str:
    """The command's stdout and stderr, a TRACEBACK finding if they hold one."""
    text = done.stdout + done.stderr
    expect("Traceback (most recent call last)" not in text, "TRACEBACK", text.strip().splitlines()[-1][:160] if text else "")
    return text


def main(cases: list[Callable], doc: str) -> int:
    """Run the cases (-k SUBSTRING: those whose name holds it), one line each, then the counts;
    1 when any case is not OK."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("-k", default="", help="run only cases whose name holds this")
    args = parser.parse_args()
    counts: dict[str, int] = {}
    for fn in cases:
        if args.k not in fn.__name__:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn()
            kind, detail = "OK", ""
        except Verdict as found:
            kind, detail = found.kind, str(found)
        except Exception as exc:
            kind, detail = "TRACEBACK", f"{type(exc).__name__}: {exc} @ {traceback.extract_tb(exc.__traceback__)[-1].lineno}"
        counts[kind] = counts.get(kind, 0) + 1
        print(f"{kind:10} {fn.__name__}" + (f": {detail}" if detail else ""), flush=True)
    total = sum(counts.values())
    print(f"{total} cases: " + ", ".join(f"{counts.get(k, 0)} {k}" for k in KINDS))
    return 0 if counts.get("OK", 0) == total else 1
