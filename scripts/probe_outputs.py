"""A fault probe over what issue 46's wave adds to maeb's outputs (the vector reference has its own,
tests/test_lite_vectors_file.py): `leaderboard --format tex` (maeb.analysis.latex), the metric records
(maeb.metrics.registry, maeb.metrics.chance, maeb.analysis.baselines) and the explorer page
(maeb.analysis.page, run in headless Chromium), used as a hostile or careless user would.

Each case returns one verdict: OK, WRONG (silently wrong), TRACEBACK, CONFUSING (an unclear or missing
line) or SECURITY (markup or a formula that runs where it must not). Prints one line per case and the
counts; exits 1 when any case is not OK. The chance levels' closed forms are checked by brute force.

    .venv/bin/python scripts/probe_outputs.py [-k SUBSTRING]
"""

from __future__ import annotations

import csv
import errno
import io
import itertools
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

from _probe_harness import ROOT, Verdict, cli, expect, no_traceback, one_line_error, registry
from _probe_harness import main as run_cases

CASES, case = registry()
maeb_cli = cli("maeb-probe-outputs-")
TMP = Path(tempfile.mkdtemp(prefix="maeb-probe-outputs-"))
HEADER = "model,revision,task,split,subset,main_score\n"


def score(model: str, task: str, value: float):
    from maeb.results.read import Score

    return Score(model, "r1", task, "test", "default", value)


def board(pairs, benchmark: str = "B", infos=None):
    from maeb.analysis.leaderboard import aggregate

    return aggregate([score(m, t, v) for m, t, v in pairs], infos=infos, benchmark=benchmark)


def compile_tex(tables: str, shell_escape: bool = False) -> tuple[int, str, Path]:
    """pdflatex on a document holding `tables`: (exit code, log, folder); a Verdict when pdflatex is absent."""
    if shutil.which("pdflatex") is None:
        raise Verdict("CONFUSING", "pdflatex absent: cannot compile (scripts/install_debian.sh installs it)")
    folder = Path(tempfile.mkdtemp(dir=TMP))
    doc = "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n\\begin{document}\n"
    (folder / "p.tex").write_text(doc + tables + "\\end{document}\n", encoding="utf-8")
    flag = "-shell-escape" if shell_escape else "-no-shell-escape"
    run = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", flag, "p.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=180,
    )
    log = (folder / "p.log").read_text(errors="replace") if (folder / "p.log").exists() else run.stdout
    return run.returncode, log, folder


def compiles(tables: str) -> None:
    code, log, _ = compile_tex(tables)
    errors = [line for line in log.splitlines() if line.startswith("!")]
    expect(code == 0, "CONFUSING", f"pdflatex fails: {' | '.join(errors[:2])}")
    for trouble in ("Missing character", "Undefined control sequence"):
        expect(trouble not in log, "WRONG", trouble)


def tex_rows(text: str, first: str) -> list[str]:
    """The cells of the first row of `text` whose first cell is `first`."""
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)&", line.removesuffix(r" \\"))]
        if cells[0] == first:
            return cells
    raise Verdict("WRONG", f"no row {first!r}")


# -- LaTeX output -----------------------------------------------------------------------------------------------------
SPECIALS = "\\{}$&#^_~%<>|"


@case
def tex_every_special_in_model_task_and_benchmark_names():
    from maeb.analysis.latex import to_latex

    name = "o/" + SPECIALS
    text = to_latex(board([(name, "T" + SPECIALS, 0.5), ("o/b", "T" + SPECIALS, 0.4)], benchmark="B" + SPECIALS))
    expect(SPECIALS not in text, "SECURITY", "a special character reached the output raw")
    compiles(text)


@case
def tex_unicode_names_compile_or_are_named():
    from maeb.analysis.latex import to_latex

    text = to_latex(board([("o/Ωmega-日本", "T", 0.5), ("o/é-ü-ł-Č", "T", 0.4)]))
    code, log, _ = compile_tex(text)
    expect(code == 0 or ("Ω" in text.splitlines()[0] and "xelatex" in text.splitlines()[0]), "CONFUSING",
           "pdflatex stops on a name's character and nothing said which or what to do")  # fmt: skip


@case
def tex_control_and_invisible_characters():
    from maeb.analysis.latex import to_latex

    compiles(to_latex(board([("o/nul\x00ctl\x01bell\x07\u00adsoft\u200b", "T", 0.5)])))


@case
def tex_dashes_and_quotes_print_as_themselves():
    from maeb.analysis.latex import escape

    text = escape('x--y---z `q\' "r" !` ?`')
    expect("--" not in text and "`" not in text and "'" not in text and '"' not in text, "WRONG",
           f"LaTeX makes ligatures of {text!r} (dashes, curly or inverted marks)")  # fmt: skip


@case
def tex_nan_and_inf_scores():
    from maeb.analysis.latex import to_latex

    text = to_latex(board([("o/a", "T", float("inf")), ("o/b", "T", 0.5), ("o/c", "T", -float("inf"))]), ["tasks"])
    expect("inf" not in text and r"\textbf{50.0}" in text, "WRONG", "a non-finite score printed (or bold) as a number")
    table = TMP / "nan.csv"
    table.write_text(HEADER + "o/a,r,T,test,default,nan\no/b,r,T,test,default,0.5\no/c,r,T,test,default,inf\n")
    done = maeb_cli("leaderboard", "--results", table, "--format", "tex")
    no_traceback(done)
    expect(done.returncode == 0 and "main score is NaN" in done.stderr and "inf" not in done.stdout, "CONFUSING", done.stderr)


@case
def tex_empty_board():
    from maeb.analysis.latex import to_latex

    compiles(to_latex(board([])))
    table = TMP / "empty.csv"
    table.write_text(HEADER)
    done = maeb_cli("leaderboard", "--results", table, "--format", "tex")
    no_traceback(done)
    lines = done.stderr.strip().splitlines()
    expect(done.returncode == 2 and len(lines) == 1 and "no results" in lines[0], "CONFUSING", done.stderr)


@case
def tex_one_model():
    from maeb.analysis.latex import to_latex

    text = to_latex(board([("o/a", "T", 0.5)]))
    expect(tex_rows(text, r"\textbf{1}")[1] == "o/a" and "1 model," in text, "WRONG", "the one model's row")
    compiles(text)


@case
def tex_all_missing_column():
    from maeb.analysis.latex import MISSING, to_latex

    b = board([("o/a", "T1", 0.5), ("o/b", "T1", 0.4), ("o/c", "T2", 0.3)])
    for row in b.rows:
        row.tasks["T2"] = None  # every model lacks it
    text = to_latex(b, ["tasks"])
    cells = [tex_rows(text, m)[2] for m in ("o/a", "o/b", "o/c")]
    expect(cells == [MISSING] * 3, "WRONG", f"an all-missing column reads {cells}")
    compiles(text)


@case
def tex_ties_for_best_are_all_bold():
    from maeb.analysis.latex import to_latex

    text = to_latex(board([("o/a", "T", 0.9), ("o/b", "T", 0.9), ("o/c", "T", 0.2)]), ["tasks"])
    got = [tex_rows(text, m)[1] for m in ("o/a", "o/b", "o/c")]
    expect(got == [r"\textbf{90.0}", r"\textbf{90.0}", "20.0"], "WRONG", str(got))


@case
def tex_lower_is_better_columns():
    from maeb.analysis.latex import to_latex
    from maeb.results.read import TaskInfo

    infos = {"Gen": TaskInfo("Gen", "audio_generation", main_score="fd")}
    b = board([("o/a", "Gen", 3.0), ("o/b", "Gen", 1.0)], infos=infos)
    text = to_latex(b, ["tasks", "types"])
    expect(tex_rows(text, "o/b")[1] == r"\textbf{100.0}" and tex_rows(text, "o/a")[1] == "300.0", "WRONG",
           "the smallest FD is not the bold one")  # fmt: skip


@case
def tex_very_long_names():
    from maeb.analysis.latex import to_latex

    compiles(to_latex(board([("o/" + "w" * 400, "T" + "x" * 200, 0.5), ("o/b", "T" + "x" * 200, 0.4)])))


@case
def tex_intervals_without_uncertainty():
    from maeb.analysis.latex import to_latex

    one_line_error(lambda: to_latex(board([("o/a", "T", 0.5), ("o/b", "T", 0.4)]), intervals=True), "uncertainty",
                   kind="WRONG")  # fmt: skip
    table = TMP / "plain.csv"
    table.write_text(
        HEADER + "".join(f"o/m{i},r,T{j},test,default,{0.3 + 0.05 * i + 0.01 * j}\n" for i in range(3) for j in range(3))
    )
    done = maeb_cli("leaderboard", "--results", table, "--format", "tex", "--intervals")
    no_traceback(done)
    expect(done.returncode == 0 and "Rank interval" in done.stdout, "CONFUSING", done.stderr[-300:])
    compiles(done.stdout)


@case
def tex_per_task_with_many_tasks():
    from maeb.analysis.latex import to_latex

    b = board([(f"o/m{i}", f"Task_{j}", 0.3 + 0.01 * i + 0.001 * j) for i in range(6) for j in range(60)])
    compiles(to_latex(b, ["tasks"]) + to_latex(b, ["tasks"], per_task="rows"))


@case
def tex_names_that_read_files_or_run_commands():
    from maeb.analysis.latex import to_latex

    names = [r"\input{/etc/passwd}", r"\immediate\write18{touch pwned}", r"^^5cinput{/etc/hostname}", r"\catcode`\{=12"]
    text = to_latex(board([(n, "T", 0.5 - 0.1 * i) for i, n in enumerate(names)], benchmark=r"\write18{touch pwned}"))
    code, log, folder = compile_tex(text, shell_escape=True)
    expect(not (folder / "pwned").exists(), "SECURITY", "\\write18 ran a command")
    expect("(/etc/passwd" not in log and "(/etc/hostname" not in log, "SECURITY", "a name made pdflatex read a file")
    expect(code == 0, "CONFUSING", "pdflatex fails on the escaped names")


@case
def tex_out_is_written_atomically():
    from maeb.cli.commands import main

    table = TMP / "ok.csv"
    table.write_text(HEADER + "o/a,r,T,test,default,0.4\no/b,r,T,test,default,0.5\n")
    out = TMP / "atomic" / "board.tex"
    renames = []
    real = os.replace
    os.replace = lambda a, b: (renames.append((Path(a), Path(b))), real(a, b))[1]  # type: ignore[assignment]
    try:
        code = main(["leaderboard", "--results", str(table), "--format", "tex", "--out", str(out)])
    finally:
        os.replace = real  # type: ignore[assignment]
    expect(code == 0 and out.read_text().startswith("% maeb leaderboard"), "WRONG", "no file written")
    expect(
        renames and renames[-1][1] == out and renames[-1][0].parent == out.parent,
        "WRONG",
        "not written through a temporary renamed into place",
    )
    expect(sorted(p.name for p in out.parent.iterdir()) == ["board.tex"], "WRONG", "a temporary left behind")


def _out_fails(target: Path, needle: str) -> None:
    table = TMP / "ok.csv"
    table.write_text(HEADER + "o/a,r,T,test,default,0.4\n")
    done = maeb_cli("leaderboard", "--results", table, "--format", "tex", "--out", target)
    no_traceback(done)
    lines = done.stderr.strip().splitlines()
    expect(done.returncode == 2 and len(lines) == 1, "CONFUSING", done.stderr)
    expect(needle in lines[0] and "--output-dir" not in lines[0], "CONFUSING", f"{lines[0]} (leaderboard has no --output-dir)")


@case
def tex_out_under_a_file():
    blocker = TMP / "a-file"
    blocker.write_text("x")
    _out_fails(blocker / "board.tex", "is a file, not a folder")


@case
def tex_out_is_a_folder():
    _out_fails(TMP, "it is a folder")


@case
def tex_out_on_a_full_disk():
    from maeb.cli.commands import main

    table = TMP / "ok.csv"
    table.write_text(HEADER + "o/a,r,T,test,default,0.4\n")
    folder = TMP / "full"
    folder.mkdir()
    real = os.fsync

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    os.fsync = full
    err = io.StringIO()
    saved, sys.stderr = sys.stderr, err
    try:
        code = main(["leaderboard", "--results", str(table), "--format", "tex", "--out", str(folder / "b.tex")])
    finally:
        os.fsync, sys.stderr = real, saved
    lines = err.getvalue().strip().splitlines()
    expect(code == 2 and len(lines) == 1 and "free some space" in lines[0], "CONFUSING", err.getvalue())
    expect(not list(folder.iterdir()), "WRONG", "a half file or temporary left behind")


# -- metric records ---------------------------------------------------------------------------------------------------


def fresh_registry():
    """A copy of the registry's records, so that a case's declarations end with it."""
    from maeb.metrics import registry as reg

    reg.metric_names()
    return reg, dict(reg._METRICS)


def zero(a, b) -> float:
    return 0.0


def declared(reg, saved):
    reg._METRICS.clear()
    reg._METRICS.update(saved)


@case
def metric_registered_twice():
    reg, saved = fresh_registry()
    try:
        reg.register_metric("probe_twice", zero, "me", higher_is_better=True)
        reg.register_metric("probe_twice", zero, "me", higher_is_better=True)  # the same: a re-import, allowed
        one_line_error(
            lambda: reg.register_metric("probe_twice", lambda a, b: 1.0, "me", higher_is_better=True), "already declared"
        )
        one_line_error(lambda: reg.register_metric("probe_twice", zero, "me", higher_is_better=False), "other facts")
    finally:
        declared(reg, saved)


FRESH = """
from maeb.core.errors import SpecError
from maeb.metrics import registry
try:
    registry.register_metric("accuracy", lambda a, b: 0.0, "me", higher_is_better=True)
    print("taken")
except SpecError as exc:
    print("refused")
try:
    print(registry.record_of("ndcg_at_10").name, registry.get_metric("accuracy").oracle)
except SpecError as exc:
    print("broken:", exc)
"""


@case
def metric_taking_a_builtin_name_before_the_builtins_load():
    done = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    no_traceback(done)
    lines = done.stdout.splitlines()
    expect(lines[:1] == ["refused"], "WRONG", "a user's 'accuracy' replaced the built-in one silently")
    expect(len(lines) > 1 and lines[1].startswith("ndcg_at_k sklearn"), "CONFUSING", " ".join(lines))


@case
def metric_name_differing_only_in_case():
    reg, saved = fresh_registry()
    try:
        one_line_error(lambda: reg.register_metric("ACCURACY", zero, "me", higher_is_better=False), "accuracy", kind="WRONG")
    finally:
        declared(reg, saved)


@case
def metric_name_read_by_another_records_pattern():
    reg, saved = fresh_registry()
    try:
        one_line_error(lambda: reg.register_metric("ndcg_at_10", zero, "me", higher_is_better=True), "ndcg_at_k", kind="WRONG")
    finally:
        declared(reg, saved)


@case
def metric_missing_direction():
    reg, saved = fresh_registry()
    try:
        one_line_error(lambda: reg.register_metric("word_errors", zero, "me"), "higher_is_better", kind="WRONG")
        one_line_error(lambda: reg.register_metric("word_errors2", zero, "me", higher_is_better="no"), "higher_is_better")
    finally:
        declared(reg, saved)


@case
def metric_range_inverted_or_malformed():
    reg, saved = fresh_registry()
    try:
        for bad in ((1, 0), (0, 0), (float("nan"), 1), 5, "01", (0, 1, 2)):
            one_line_error(lambda bad=bad: reg.register_metric("probe_r", zero, "me", higher_is_better=True, range=bad), "range")
    finally:
        declared(reg, saved)


@case
def metric_chance_or_majority_not_a_function():
    reg, saved = fresh_registry()
    try:
        one_line_error(lambda: reg.register_metric("probe_c", zero, "me", higher_is_better=True, chance=0.5), "chance")
        one_line_error(lambda: reg.register_metric("probe_c", zero, "me", higher_is_better=True, majority="x"), "majority")
    finally:
        declared(reg, saved)


@case
def record_of_names_that_do_not_exist():
    from maeb.metrics.registry import record_of

    got = {k: (r.name if (r := record_of(k)) else None) for k in ("ndcg_at_x", "ndcg_at_0", "map@0", "ndcg_at_-1", "bogus")}
    expect(all(v is None for v in got.values()), "WRONG", f"records for keys that name no metric: {got}")
    expect(record_of("ndcg_at_1").name == "ndcg_at_k" and record_of("cosine_ap").name == "ap", "WRONG", "known keys")


@case
def chance_of_one_class():
    from maeb.metrics import chance as ch

    got = [f([7]) for f in (ch.uniform_accuracy, ch.uniform_precision, ch.uniform_f1, ch.uniform_f1_weighted, ch.uniform_recall)]
    expect(all(abs(v - 1.0) < 1e-12 for v in got), "WRONG", f"one class is always guessed right: {got}")


@case
def chance_of_zero_items():
    from maeb.metrics import chance as ch

    for fn in (ch.uniform_accuracy, ch.uniform_precision, ch.uniform_f1):
        one_line_error(lambda fn=fn: fn([]), "empty")
        one_line_error(lambda fn=fn: fn([0, 0]), "empty")
    one_line_error(lambda: ch.random_lrap([]), "LRAP")
    one_line_error(lambda: ch.uniform_precision([-1, 3]), "counts", kind="WRONG")


@case
def chance_more_positives_than_items():
    from maeb.metrics import chance as ch

    one_line_error(lambda: ch.random_ap(3, 5), "positive", kind="WRONG")
    one_line_error(lambda: ch.ranking_key("NDCG")[0](1, [1, 1, 1], [1, 1, 1], 5), "relevant", kind="WRONG")


@case
def chance_cut_off_below_one():
    from maeb.metrics import chance as ch

    one_line_error(lambda: ch.ranking_key("NDCG")[0](3, [1], [1], 0), "k=0")
    one_line_error(lambda: ch.ranking_key("MRR")[0](3, [1], [1], -1), "k=-1", kind="WRONG")


def brute_ranking(n: int, gains: list[int], k: int) -> dict[str, float]:
    ideal = sorted(gains, reverse=True)
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal[:k]))
    orders = list(itertools.permutations(gains + [0] * (n - len(gains))))
    ndcg = [sum(g / math.log2(i + 2) for i, g in enumerate(o[:k])) / idcg for o in orders]
    mrr = [next((1 / (i + 1) for i, g in enumerate(o[:k]) if g), 0.0) for o in orders]
    hit = [float(any(o[:k])) for o in orders]
    return {"NDCG": sum(ndcg) / len(orders), "MRR": sum(mrr) / len(orders), "HitRate": sum(hit) / len(orders)}


@case
def chance_k_larger_than_the_candidates():
    from maeb.metrics import chance as ch

    for n, gains, k in ((3, [1], 10), (4, [2, 1], 9), (2, [1, 1], 5)):
        want = brute_ranking(n, gains, k)
        for key, value in want.items():
            got = ch.ranking_key(key)[0](n, gains, sorted(gains, reverse=True), k)
            expect(abs(got - value) < 1e-12, "WRONG", f"{key}@{k} of {n} documents: {got} against every order's {value}")


@case
def chance_all_tied_labels():
    """A prior that ties every label ranks them in every order: the majority level equals the chance level."""
    import numpy as np

    from maeb.metrics import chance as ch

    y = np.array([[1, 0, 0, 1], [0, 1, 0, 0], [1, 1, 1, 0]])
    brute = []
    for row in y:
        values = []
        for order in itertools.permutations(range(4)):
            hits = [i for i, lab in enumerate(order) if row[lab]]
            values.append(np.mean([(j + 1) / (h + 1) for j, h in enumerate(hits)]))
        brute.append(np.mean(values))
    expect(abs(ch.prior_lrap(y, [0.5] * 4) - np.mean(brute)) < 1e-12, "WRONG", "tied prior against every order")
    expect(abs(ch.random_lrap(y) - np.mean(brute)) < 1e-12, "WRONG", "random LRAP against every order")


@case
def chance_closed_forms_by_brute_force():
    import numpy as np
    from sklearn.metrics import f1_score, precision_score

    from maeb.metrics import chance as ch

    for n, r in ((4, 1), (5, 2), (6, 3)):
        orders = list(itertools.combinations(range(n), r))
        brute = np.mean([np.mean([(i + 1) / (p + 1) for i, p in enumerate(sorted(c))]) for c in orders])
        expect(abs(ch.random_ap(n, r) - brute) < 1e-12, "WRONG", f"random AP({n}, {r})")
    truth = [0, 1, 2, 2]
    guesses = list(itertools.product(range(3), repeat=4))
    for fn, sk in ((ch.uniform_precision, precision_score), (ch.uniform_f1, f1_score)):
        brute = np.mean([sk(truth, g, average="macro", labels=[0, 1, 2], zero_division=0) for g in guesses])
        expect(abs(fn(np.bincount(truth)) - brute) < 1e-12, "WRONG", fn.__name__)


def spec(kind: str, main_score: str | None = None):
    from maeb.spec.taskspec import parse_spec

    raw = {"name": "B", "type": kind, "data": {"source": "audiofolder", "path": "/nowhere", "eval_splits": ["test"]}}
    if main_score:
        raw["main_score"] = main_score
    return parse_spec(raw, "probe spec")


@case
def baselines_of_a_task_with_one_class():
    from maeb.analysis.baselines import baselines
    from maeb.data.sources import Table

    one = Table({"label": ["a"] * 8})
    for kind in ("classification", "zeroshot", "clustering"):
        out = baselines(spec(kind), {"test": one, "train": Table({"label": ["a"] * 3})}, "test")
        expect(out is not None and out["chance"] == 1.0 and out["majority"] == 1.0, "WRONG", f"{kind}: {out}")


@case
def baselines_of_zero_items():
    from maeb.analysis.baselines import baselines
    from maeb.data.sources import Table

    empty, some = Table({"label": []}), Table({"label": ["a", "b"]})
    cases = {
        "classification": {"test": empty, "train": some},
        "classification, no training label": {"test": some, "train": empty},
        "zeroshot": {"test": empty},
        "clustering": {"test": empty},
        "pair_classification": {"test": empty},
        "multilabel": {"test": empty, "train": Table({"label": [["a"]]})},
    }
    for name, tables in cases.items():
        try:
            out = baselines(spec(name.split(",")[0]), tables, "test")
        except Exception as exc:
            raise Verdict("TRACEBACK", f"{name}: {type(exc).__name__}: {str(exc)[:100]}") from exc
        expect(out is None, "WRONG", f"{name}: a chance level of no clip: {out}")


# -- the explorer page ------------------------------------------------------------------------------------------------
XSS = '<img src=x onerror="window.__pwn=1">'
FORMULAS = ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)", "\tTab"]
QUOTED = 'a,"b"\nc'
BENCH = "Bad}, author={evil} , x={"
PAGE_PROBE = r"""
var v = window.maebView, $ = function (id) { return document.getElementById(id); };
out.csv = v.csv(); out.cite = $('cite-text').textContent;
v.load('#task=' + encodeURIComponent('<img src=x onerror=window.__pwn=2>') + '&model=' + encodeURIComponent('<svg onload=window.__pwn=3>')
  + '&search=' + encodeURIComponent('<script>window.__pwn=4<\/script>') + '&sort=task:%3Cimg%3E:asc');
out.hostile = {names: v.state().names, note: $('rule').textContent};
v.load('#type=NoSuchType&task=NoSuchTask&rule=evil');
out.unknown = {names: v.state().names, rule: v.state().rule, note: $('rule').textContent};
v.load('#type=AudioClustering&task=Gen');
out.none = {names: v.state().names, nomatch: $('nomatch').textContent, shown: !$('nomatch').hidden, csv: v.csv()};
v.load('#task=Signed');
out.one = {names: v.state().names, rows: v.state().result.rows.map(function (r) { return [r.model, r.rank]; }), csv: v.csv()};
v.load('#search=}x{');
out.citeHash = $('cite-text').textContent;
v.load('');
out.pwn = window.__pwn || 0;
out.injected = document.querySelectorAll('img[onerror], svg[onload], #leaderboard script').length;
"""


@cache
def explorer() -> tuple[str, dict]:
    """The hostile board's page and what one Chromium run of PAGE_PROBE saw on it."""
    sys.path.insert(0, str(ROOT / "tests"))
    from test_explorer import in_chromium

    from maeb.analysis import page as page_module
    from maeb.analysis.leaderboard import Row
    from maeb.results.read import TaskInfo

    if shutil.which("chromium") is None:
        raise Verdict("CONFUSING", "chromium absent: the page's script cannot be run")
    page_module._figures = lambda *args: "<p>figures left out</p>"  # this probe reads the page, not its figures
    infos = {
        "Signed": TaskInfo("Signed", "AudioClustering", main_score="ari"),
        "Gen": TaskInfo("Gen", "audio_generation", main_score="fd"),
    }
    names = [*FORMULAS, QUOTED, XSS, "o/plain"]
    pairs = [(m, "Signed", -0.05 + 0.01 * i) for i, m in enumerate(names)] + [(m, "Gen", 1.0 + i) for i, m in enumerate(names)]
    b = board(pairs, benchmark=BENCH, infos=infos)
    b.rows.append(Row("o/no-scores", ["1"], rank=len(b.rows) + 1, tasks={}))  # a model with no score at all
    html_text = page_module.to_html(b)
    return html_text, in_chromium(html_text, PAGE_PROBE, Path(tempfile.mkdtemp(dir=TMP)))


def page_seen() -> dict:
    _, seen = explorer()
    expect(seen["errors"] == [], "TRACEBACK", f"the page's script failed: {seen['errors'][:2]}")
    return seen


@case
def page_hostile_names_in_the_hash_and_the_board():
    page, _ = explorer()
    seen = page_seen()
    expect(seen["pwn"] == 0 and seen["injected"] == 0, "SECURITY", "markup from a name or the hash ran")
    expect(XSS not in page.replace(json.dumps(XSS), ""), "SECURITY", "a name reached the HTML unescaped")


@case
def page_hash_naming_unknown_tasks_and_types():
    seen = page_seen()["unknown"]
    expect(seen["rule"] == "mteb", "WRONG", "an unknown rule was taken")
    expect("NoSuchTask" in seen["note"] and "NoSuchType" in seen["note"], "CONFUSING",
           "a link's unknown task and type are dropped without a word: the whole board shows as if chosen")  # fmt: skip


@case
def page_every_task_deselected():
    seen = page_seen()["none"]
    expect(seen["names"] == [] and seen["shown"] and "No task matches" in seen["nomatch"], "CONFUSING", str(seen))


@case
def page_a_model_with_no_scores_and_a_board_of_one_task():
    seen = page_seen()["one"]
    expect(seen["names"] == ["Signed"] and seen["rows"], "WRONG", str(seen))
    expect("o/no-scores" not in [m for m, _ in seen["rows"]], "WRONG", "a model with no score ranked")


def bibtex_fields(entry: str) -> list[str]:
    """The field names of a BibTeX entry as BibTeX reads them: every brace counts, backslash or not."""
    depth, fields, token = 0, [], ""
    for ch in entry:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 1 and ch == "=":
            fields.append(token.strip().split(",")[-1].strip())
            token = ""
            continue
        if depth == 1 and ch not in "{}":
            token += ch
    return fields


@case
def page_cite_box_with_braces_in_the_benchmark_name():
    seen = page_seen()
    for entry in (seen["cite"], seen["citeHash"]):
        fields = bibtex_fields(entry)
        expect(fields == ["title", "note", "howpublished"], "SECURITY", f"the cite box's BibTeX reads fields {fields}")


def csv_rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


@case
def page_csv_formula_injection():
    seen = page_seen()
    models = [r[1] for r in csv_rows(seen["csv"])[1:]]
    for name in FORMULAS:
        expect("'" + name in models, "SECURITY", f"{name!r} reaches a spreadsheet as a formula: {models}")


@case
def page_csv_signed_scores_stay_numbers():
    rows = csv_rows(page_seen()["one"]["csv"])
    numbers = [c for r in rows[1:] for c in r[2:4] if c]
    text = [c for c in numbers if not re.fullmatch(r"-?\d+\.\d", c)]
    expect(not text, "WRONG", f"negative scores written as text, not numbers: {text[:4]}")


@case
def page_csv_commas_quotes_and_newlines():
    rows = csv_rows(page_seen()["csv"])
    expect(all(len(r) == len(rows[0]) for r in rows), "WRONG", "a row split or merged")
    expect(QUOTED in [r[1] for r in rows], "WRONG", "a name with a comma, quotes and a newline does not read back")


if __name__ == "__main__":
    sys.exit(run_cases(CASES, __doc__ or ""))
