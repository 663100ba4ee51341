"""`maeb leaderboard --format tex` (maeb.analysis.latex): the ranks, task types and tasks tables a paper
shows, as booktabs tables. A structural parse of the output (balanced braces, one cell per column on
every row, the three rules in order), the best per column in bold following the metric's direction,
names with LaTeX's special characters printed as themselves, missing cells as --, intervals where
asked; and pdflatex compiles it (Debian's texlive-latex-base and -recommended, which
scripts/install_debian.sh installs)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from maeb.analysis.latex import MISSING, escape, to_latex
from maeb.analysis.leaderboard import aggregate
from maeb.analysis.uncertainty import CellInterval, Uncertainty
from maeb.cli.commands import main
from maeb.core.errors import MaebError
from maeb.results.read import Score, TaskInfo

NASTY = r"o/we_ird&50%#$x{y}~^\z<|>"  # every character LaTeX reads as markup
INFOS = {
    "Digits": TaskInfo("Digits", "AudioClassification", main_score="accuracy"),
    "Birds_1": TaskInfo("Birds_1", "AudioClassification", main_score="accuracy"),
    "Gen": TaskInfo("Gen", "audio_generation", main_score="fd"),  # lower is better
}


def s(model: str, task: str, value: float) -> Score:
    return Score(model, "r1", task, "test", "default", value)


def hand_board(borda: str = "mteb"):
    """Three models on three tasks: a tie for the best on Digits, the nasty name missing Birds_1,
    and Gen's best is its smallest FD."""
    scores = [s("o/a", "Digits", 0.9), s("o/b", "Digits", 0.9), s(NASTY, "Digits", 0.2)]
    scores += [s("o/a", "Birds_1", 0.4), s("o/b", "Birds_1", 0.7)]
    scores += [s("o/a", "Gen", 3.0), s("o/b", "Gen", 5.0), s(NASTY, "Gen", 1.0)]
    return aggregate(scores, list(INFOS), infos=INFOS, benchmark="Mini&Bench", borda=borda)


def strip_escapes(text: str) -> str:
    """The text with escaped characters (\\{, \\}, \\&, \\%, ...) and comments removed."""
    text = re.sub(r"\\[{}&%$#_]", "", text)
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("%"))


def tabulars(text: str) -> list[tuple[str, list[str]]]:
    """Each tabular's column spec and its lines between \\begin and \\end."""
    found = re.findall(r"\\begin\{tabular\}\{([lrc]+)\}\n(.*?)\\end\{tabular\}", text, re.S)
    return [(spec, body.splitlines()) for spec, body in found]


def cells(line: str) -> list[str]:
    """A row's cells: split on & that are not escaped."""
    return [c.strip() for c in re.split(r"(?<!\\)&", line.removesuffix(r" \\"))]


def check_structure(text: str) -> None:
    """What a LaTeX parser would reject, checked by hand: braces and environments balanced, each
    tabular's rules in order and every row one cell per column."""
    plain = strip_escapes(text)
    depth = 0
    for ch in plain:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0, "a } closes no {"
    assert depth == 0, "an unclosed {"
    for env in ("table", "tabular"):
        assert plain.count(rf"\begin{{{env}}}") == plain.count(rf"\end{{{env}}}") > 0
    for spec, lines in tabulars(text):
        rules = [i for i, line in enumerate(lines) if line in (r"\toprule", r"\midrule", r"\bottomrule")]
        assert [lines[i] for i in rules] == [r"\toprule", r"\midrule", r"\bottomrule"]
        assert rules[0] == 0 and rules[1] == 2 and rules[2] == len(lines) - 1
        rows = [line for line in lines if line.endswith(r" \\")]
        assert rows and all(len(cells(row)) == len(spec) for row in rows), spec


@pytest.mark.parametrize("per_task", [None, "rows"])
def test_every_view_parses(per_task):
    text = to_latex(hand_board(), per_task=per_task)
    check_structure(text)
    assert len(tabulars(text)) == 3 and text.count(r"\caption{") == 3
    for view in ("ranks", "types", "tasks"):
        assert rf"\label{{tab:maeb-{view}}}" in text


def test_specials_are_escaped():
    assert escape(NASTY) == (
        r"o/we\_ird\&50\%\#\$x\{y\}\textasciitilde{}\textasciicircum{}\textbackslash{}z\textless{}\textbar{}\textgreater{}"
    )
    text = to_latex(hand_board())
    assert escape(NASTY) in text and NASTY not in text
    assert r"Birds\_1" in text and r"Mini\&Bench" in text


def row_of(text: str, view: str, first: str) -> list[str]:
    table = text.split(rf"\label{{tab:maeb-{view}}}")[1]
    spec, lines = tabulars(table)[0]
    return next(cells(line) for line in lines if cells(line)[0] == first)


def test_best_per_column_is_bold_following_the_metric_direction():
    text = to_latex(hand_board(), ["tasks"])
    head = row_of(text, "tasks", r"\textbf{Model}")
    assert head == [r"\textbf{Model}", r"\textbf{Digits}", r"\textbf{Birds\_1}", r"\textbf{Gen}"]
    a, b, nasty = (row_of(text, "tasks", escape(m)) for m in ("o/a", "o/b", NASTY))
    assert a[1] == b[1] == r"\textbf{90.0}" and nasty[1] == "20.0"  # a tie for the best: both bold
    assert b[2] == r"\textbf{70.0}" and a[2] == "40.0" and nasty[2] == MISSING  # missing: --, never bold
    assert nasty[3] == r"\textbf{100.0}" and a[3] == "300.0"  # FD: the smallest is the best


def test_tasks_in_rows_bold_the_best_model_of_each_task():
    board = hand_board()
    text = to_latex(board, ["tasks"], per_task="rows")
    order = [r.model for r in board.rows]  # the models' columns, in board order
    gen = dict(zip(order, row_of(text, "tasks", "Gen")[2:]))
    assert gen == {"o/a": "300.0", "o/b": "500.0", NASTY: r"\textbf{100.0}"}
    birds = dict(zip(order, row_of(text, "tasks", r"Birds\_1")[2:]))
    assert birds == {"o/a": "40.0", "o/b": r"\textbf{70.0}", NASTY: MISSING}


def test_ranks_and_types_tables():
    board = hand_board()
    text = to_latex(board, ["ranks", "types"])
    spec, lines = tabulars(text)[0]
    ranks = [cells(line) for line in lines[3:-1]]
    assert [c[1] for c in ranks] == [escape(r.model) for r in board.rows]  # board order
    best = max(r.points for r in board.rows)
    for c, r in zip(ranks, board.rows):  # the rank 1 and the most points bold, the others plain
        assert (c[0] == rf"\textbf{{{r.rank}}}") == (r.rank == 1) and (c[2].startswith(r"\textbf{")) == (r.points == best)
        assert c[5] == f"{r.n_tasks}/3"
    types = row_of(text, "types", escape(NASTY))
    assert types[1] == MISSING  # a type mean is missing where one of its tasks is


def test_the_caption_names_the_borda_rule():
    for rule in ("mteb", "paper"):
        text = to_latex(hand_board(rule))
        captions = re.findall(r"\\caption\{(.*)\}\n", text)
        assert len(captions) == 3 and all(rf"\texttt{{--borda {rule}}}" in c for c in captions)


def uncertain_board():
    board = hand_board()
    models = [r.model for r in board.rows]
    board.uncertainty = Uncertainty(
        draws=200,
        level=0.95,
        sources=("tasks", "bands"),
        seed=0,
        models=models,
        rank_low=dict.fromkeys(models, 1),
        rank_high=dict.fromkeys(models, 3),
        above_next=[0.5, 0.5],
        groups=[models],
        cells={("o/a", "Digits"): CellInterval(0.9, 0.85, 0.95, experiments=5, band=0.012)},
    )
    return board


def test_intervals_only_when_asked():
    board = uncertain_board()
    plain = to_latex(board)
    assert r"$\pm$" not in plain and "Rank interval" not in plain
    text = to_latex(board, intervals=True)
    check_structure(text)
    digits = row_of(text, "tasks", "o/a")[1]
    assert digits == r"\textbf{90.0 $\pm$1.2 [85.0--95.0]}"
    assert row_of(text, "ranks", str(board.rows[-1].rank))[1] == "1--3"


def test_an_unknown_view_is_one_line():
    with pytest.raises(MaebError, match="LaTeX view 'figures': choose among ranks, types, tasks"):
        to_latex(hand_board(), ["figures"])


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "main_scores.csv"
    rows = [(NASTY, "T1", 0.9), ("o/b", "T1", 0.5), ("o/b", "T2", 0.7), ("o/c", "T2", 0.8)]
    path.write_text(
        "model,revision,task,split,subset,main_score\n" + "".join(f'"{m}",r,{t},test,default,{v}\n' for m, t, v in rows)
    )
    return path


def test_cli_views_and_flags(tmp_path, table, capsys):
    out = tmp_path / "board.tex"
    assert main(["leaderboard", "--results", str(table), "--format", "tex", "--view", "types", "ranks", "--out", str(out)]) == 0
    text = out.read_text()
    check_structure(text)
    assert text.index("tab:maeb-types") < text.index("tab:maeb-ranks") and "tab:maeb-tasks" not in text
    capsys.readouterr()
    assert main(["leaderboard", "--results", str(table), "--intervals"]) == 2
    assert "--intervals chooses what --format tex writes" in capsys.readouterr().err
    assert main(["leaderboard", "--results", str(table), "--format", "md", "--view", "ranks"]) == 2
    assert "--view chooses what --format tex writes" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex absent (scripts/install_debian.sh installs it)")
@pytest.mark.parametrize("intervals", [False, True])
def test_pdflatex_compiles_every_view(tmp_path, intervals):
    board = uncertain_board()
    tables = to_latex(board, intervals=intervals) + to_latex(board, ["tasks"], intervals=intervals, per_task="rows")
    wide = aggregate(
        [s(f"o/m{i}", f"Task_{j}", 0.5 + 0.01 * i * j) for i in range(3) for j in range(12)], benchmark="Wide"
    )  # 12 task columns: wider than the line, scaled to it
    tables += to_latex(wide, ["tasks"])
    (tmp_path / "paper.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n\\begin{document}\n"
        + tables
        + "\\end{document}\n"
    )
    run = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "paper.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-2000:]
    assert (tmp_path / "paper.pdf").stat().st_size > 1000
    log = (tmp_path / "paper.log").read_text(errors="replace")
    for trouble in ("Missing character", "Undefined control sequence", "Overfull \\hbox"):
        assert trouble not in log, trouble


# -- what scripts/probe_outputs.py found (issue 46's fault probe); each failed before its fix -----------------------


def test_a_score_that_is_no_number_is_missing_and_never_bold():
    board = aggregate([s("o/a", "T", float("inf")), s("o/b", "T", 0.5)], benchmark="B")  # before: \textbf{inf}
    for per_task in (None, "rows"):
        text = to_latex(board, ["tasks"], per_task=per_task)
        assert "inf" not in text and r"\textbf{50.0}" in text and MISSING in text


def test_quotes_dashes_and_control_characters_print_as_themselves():
    # before: -- printed an en dash, `` and '' curly quotes, " a closing quote, and ^^A stopped pdflatex
    assert escape("a--b") == "a-{}-b" and escape("x-y") == "x-y"
    assert escape("`q'\"") == r"\textasciigrave{}q\textquotesingle{}{\ttfamily\char34}"
    assert escape("nul\x00ctl\x01soft\u00ad") == "nul ctl soft"


def test_intervals_without_uncertainty_is_one_line():
    with pytest.raises(MaebError, match="LaTeX intervals: the board carries no uncertainty"):
        to_latex(hand_board(), intervals=True)  # before: tables without a single interval


def test_characters_beyond_pdflatex_are_said_once(caplog):
    board = aggregate([s("o/Ωmega-日本", "T", 0.5), s("o/é-ü-ł", "T", 0.4)], benchmark="B")
    with caplog.at_level("WARNING", logger="maeb"):
        text = to_latex(board)
    assert text.startswith("% names hold characters pdflatex cannot print without other packages (Ω 日 本)")
    assert "xelatex or lualatex" in caplog.text  # before: nothing, pdflatex stopped on the first
    assert not to_latex(aggregate([s("o/é-ü-ł", "T", 0.4)])).startswith("% names hold")


HOSTILE = [r"\input{/etc/passwd}", r"\immediate\write18{touch pwned}", 'x--y `q\' "z" ^^41 a\x01b', "Ł-ß-€-…", "w" * 300]


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex absent (scripts/install_debian.sh installs it)")
def test_hostile_names_compile_and_run_nothing_even_with_shell_escape(tmp_path):
    """Names that try to read a file or run a command are printed, not executed: compiled here with
    -shell-escape on, nothing is touched and /etc/passwd is never opened; 40 task columns and an empty
    board compile too."""
    scores = [s(m, f"Task_{j}", 0.3 + 0.01 * i + 0.001 * j) for i, m in enumerate(HOSTILE) for j in range(40)]
    tables = to_latex(aggregate(scores, benchmark="B{}&"), per_task="rows") + to_latex(aggregate(scores))
    tables += to_latex(aggregate([], benchmark="Empty"))
    (tmp_path / "paper.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n\\begin{document}\n"
        + tables
        + "\\end{document}\n"
    )
    run = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-shell-escape", "paper.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-2000:]
    log = (tmp_path / "paper.log").read_text(errors="replace")
    assert not (tmp_path / "pwned").exists() and "/etc/passwd" not in log.replace(r"\input{/etc/passwd}", "")
    for trouble in ("Missing character", "Undefined control sequence"):
        assert trouble not in log, trouble


def test_an_unwritable_or_full_target_is_one_line_and_leaves_nothing(tmp_path, table, capsys, monkeypatch):
    import errno
    import os

    blocker = tmp_path / "afile"
    blocker.write_text("x")
    for target, needle in ((blocker / "t.tex", "is a file, not a folder"), (tmp_path, "it is a folder")):
        assert main(["leaderboard", "--results", str(table), "--format", "tex", "--out", str(target)]) == 2
        err = capsys.readouterr().err.strip()
        assert needle in err and "--output-dir" not in err and len(err.splitlines()) == 1, err  # before: --output-dir

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    out = tmp_path / "board.tex"
    assert main(["leaderboard", "--results", str(table), "--format", "tex", "--out", str(out)]) == 2
    assert "No space left on device); free some space" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "main_scores.csv"]  # no half file, no temporary
