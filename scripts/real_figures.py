"""The robustness and duration figures drawn from REAL result files (issue 34): MAEB-lite run under
`maeb robust` and with `--duration-buckets` for two offline models, then `maeb plot` on both folders.

  python scripts/real_figures.py [--out /tmp/maeb-real-figures] [--keep]

Cheap on purpose (one task under the noise ladder, two tasks bucketed by duration; 3.3 minutes on two
shared cores with MAEB-lite built into OUT's cache first: robust 130 s, runs 9 s and 33 s, plot 26 s). Checks what a reader would: every figure written, both models
named in the robustness and duration figures, each duration bucket's clip count printed, and no
perturbed-copy row in the task-type figure (`--plain`: the robust folder's per-level results are
experiment rows). Exits 1 with one line per failed check; the figures stay in OUT to be looked at."""

from __future__ import annotations

import argparse
import html
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

MODELS = ("maeb/mfcc-stats", "google/speech-embedding")
ROBUST_TASK = "LiteSpokenDigits"
DURATION_TASKS = ("LiteSpokenDigits", "LiteLanguageID")
EDGES = "0.6,0.8,1.0"  # MAEB-lite's words are under 1.5 s: the default edges (10 s and up) would make one bucket


def maeb(*args: str) -> None:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "maeb", *args], capture_output=True, text=True)
    print(f"maeb {args[0]}: exit {done.returncode} in {time.perf_counter() - started:.0f} s")
    if done.returncode != 0:
        sys.exit(f"maeb {' '.join(args)} failed: {done.stderr.strip().splitlines()[-1:]}")


def texts(svg: Path) -> str:
    """The text of an SVG written with its text kept as text."""
    return html.unescape(" ".join(re.findall(r"<text[^>]*>(.*?)</text>", svg.read_text(encoding="utf-8"), re.S)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/maeb-real-figures"))
    parser.add_argument("--keep", action="store_true", help="reuse the runs already in OUT (only redraw)")
    args = parser.parse_args()
    out: Path = args.out
    robust, durations, figs = out / "robust", out / "durations", out / "figures"
    cache = ["--cache-dir", str(out / "cache")]
    if not args.keep:
        shutil.rmtree(out, ignore_errors=True)
        maeb("robust", "--models", *MODELS, "--tasks", ROBUST_TASK, "--ladders", "noise", "--output-dir", str(robust), *cache)
        for model in MODELS:
            run = ["run", "-m", model, "-t", *DURATION_TASKS, "--duration-buckets", EDGES, "--quiet"]
            maeb(*run, "--output-dir", str(durations), *cache)
    maeb("plot", str(durations), str(robust), "--plain", "--draws", "200", "--out", str(figs), "--format", "pdf", "svg", "png")

    problems = []
    for name in ("task_types", "borda_ranks", "robustness", "durations"):
        for fmt in ("pdf", "svg", "png"):
            if not (figs / f"{name}.{fmt}").is_file():
                problems.append(f"{name}.{fmt}: not written")
    if not problems:
        for name in ("robustness", "durations", "task_types"):
            text = texts(figs / f"{name}.svg")
            problems += [f"{name}.svg: {m} not named" for m in MODELS if m not in text]
        if "perturb_" in texts(figs / "task_types.svg"):
            problems.append("task_types.svg: a perturbed copy drawn as a model row")
        if not re.search(r"n=\d+", texts(figs / "durations.svg")):
            problems.append("durations.svg: no bucket's clip count printed")
    for line in problems:
        print(f"real_figures: {line}", file=sys.stderr)
    print(f"figures in {figs}" if not problems else f"{len(problems)} problem(s); figures in {figs}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
