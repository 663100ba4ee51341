"""The report renderers (leaderboard, MAEB-robust, correlate) give, on fixed inputs, the bytes they
gave before their tables were written once in maeb.analysis.tables: tests/golden/renderers holds each output
of the renderers as they were at commit 3512b99 (before the change; NAME.expected, data rather than
code), so a rendering change shows as a diff against them. Regenerate them only for an intended change of the output:
`python -m tests.test_renderers --write`."""

from __future__ import annotations

import datetime as _dt
import sys
from pathlib import Path

import pytest

from maeb.analysis import boardjson, correlate, page, report
from maeb.analysis.leaderboard import Board, Row
from maeb.analysis.uncertainty import CellInterval, Uncertainty
from maeb.benchmarks import robust
from maeb.results.read import TaskInfo

GOLDEN = Path(__file__).resolve().parent / "golden" / "renderers"
SUFFIX = ".expected"
NOW = _dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=_dt.UTC)


def board(uncertain: bool = False) -> Board:
    """Three models (one an experiment, one with a leak, one missing a task) on four tasks of three
    types, two of them with domains; a name that needs escaping in HTML."""
    tasks = [
        TaskInfo("Digits", "AudioClassification", domains=("Speech",)),
        TaskInfo("Birds<&>", "AudioClassification", domains=("Bioacoustics", "Speech")),
        TaskInfo("Clusters", "AudioClustering", domains=("Music",)),
        TaskInfo("Pairs", "AudioPairClassification"),
    ]
    rows = [
        Row("org/alpha", ["r1"], 1, 5.0, 0.8125, 0.79, 4, {"AudioClassification": 0.9, "AudioClustering": 0.7}),
        Row("org/beta [noise:snr=5]", ["r2"], 2, 3.5, None, None, 3, {"AudioClassification": 0.55, "AudioClustering": None}),
        Row("other/alpha", ["r3"], 3, 1.0, 0.25, 0.3333333333, 4, {"AudioClassification": 0.2, "AudioClustering": 0.4}),
    ]
    scores = [
        {"Digits": 0.95, "Birds<&>": 0.85, "Clusters": 0.7, "Pairs": 0.75},
        {"Digits": 0.6, "Birds<&>": 0.5, "Clusters": None, "Pairs": 0.61},
        {"Digits": 0.1, "Birds<&>": 0.3, "Clusters": 0.4, "Pairs": 0.2},
    ]
    for row, s in zip(rows, scores):
        row.tasks = s
        row.types["AudioPairClassification"] = s["Pairs"]
        row.groups = {"audio-only": row.mean_task}
        row.domains = {"Speech": s["Digits"], "Bioacoustics": s["Birds<&>"], "Music": s["Clusters"]}
    rows[1].leaks = {"Digits": 3}
    result = Board("MiniBench", tasks, rows, missing_tasks=["Absent"], task_filter=["Digits", "Birds<&>", "Clusters", "Pairs"])
    if uncertain:
        result.uncertainty = Uncertainty(
            draws=200,
            level=0.95,
            sources=("tasks", "bands"),
            seed=0,
            models=[r.model for r in rows],
            rank_low={"org/alpha": 1, "org/beta [noise:snr=5]": 1, "other/alpha": 3},
            rank_high={"org/alpha": 2, "org/beta [noise:snr=5]": 2, "other/alpha": 3},
            above_next=[0.6, 0.99],
            groups=[["org/alpha", "org/beta [noise:snr=5]"], ["other/alpha"]],
            cells={("org/alpha", "Digits"): CellInterval(0.95, 0.9, 0.97, experiments=10, band=0.012)},
        )
    return result


def curves() -> list[robust.Curve]:
    return [
        robust.Curve("org/alpha", "noise", ["clean", "noise:snr=20", "noise:snr=0"], [0.9, 0.8, 0.5], {"A": [0.9, 0.8, 0.5]}),
        robust.Curve("org/b<eta>", "noise", ["clean", "noise:snr=20", "noise:snr=0"], [0.0, 0.0, 0.0], {"A": [0.0, 0.0, 0.0]}),
        robust.Curve("org/alpha", "telephone", ["clean", "telephone"], [0.9, 0.7], {"A": [0.9, 0.7]}),
    ]


def correlation(extras: bool = True) -> correlate.Correlation:
    interval = {"low": 0.1, "high": 0.95, "undefined": 2}
    empty = {"low": None, "high": None, "undefined": 40}
    return correlate.Correlation(
        tasks=["Digits", "Birds<&>"],
        models=[
            {"model": "org/m1", "external_name": "m1", "mean": 0.2, "external": 10.0},
            {"model": "org/m2", "external_name": "M2 & co", "mean": 0.5, "external": 31.5},
            {"model": "org/m3", "external_name": "m3", "mean": 0.61, "external": 29.0},
        ],
        stats={"pearson_r": 0.93, "spearman_rho": 0.5, "r_squared": 0.8649},
        intervals={"tasks": dict.fromkeys(correlate.STATS, interval), "models": dict.fromkeys(correlate.STATS, empty)},
        fit={"slope": 48.0, "intercept": 1.5},
        bootstrap=100,
        seed=7,
        external="scores.csv",
        score_column="MOS <x>",
        left_out={"org/m4": ["Digits", "T1", "T2", "T3", "T4", "T5", "T6"]} if extras else {},
        left_out_names={"org/m4": "m4"} if extras else {},
        unmatched={"zz": "no model ends with zz"} if extras else {},
        without_external=["org/m5"] if extras else [],
        preset="maeb-plus" if extras else None,
        note="A note <b>." if extras else None,
    )


def outputs() -> dict[str, str]:
    """Every renderer's output on the fixed inputs, by golden file name."""
    out = {}
    for uncertain in (False, True):
        b = board(uncertain)
        tag = "-uncertain" if uncertain else ""
        for per_task in (None, "columns", "rows"):
            out[f"board{tag}-{per_task}.md"] = report.render(b, "md", per_task)
            if per_task or not uncertain:  # the uncertain page without task columns adds nothing
                out[f"board{tag}-{per_task}.html"] = report.render(b, "html", per_task)
        out[f"board{tag}.json"] = report.render(b, "json")  # every orientation writes the same JSON
    for per_task in (None, "rows"):
        out[f"board-{per_task}.csv"] = report.render(board(), "csv", per_task)
    out["robust.md"] = robust.to_markdown(curves())
    out["robust.html"] = robust.to_html(curves(), ["A", "B<c>"])
    for extras in (True, False):
        c = correlation(extras)
        tag = "" if extras else "-plain"
        out[f"correlate{tag}.txt"] = correlate.to_text(c)
        out[f"correlate{tag}.html"] = correlate.to_html(c)
        out[f"correlate{tag}.json"] = correlate.to_json(c)
    return out


class _FixedClock:
    UTC = _dt.UTC

    class datetime:
        @staticmethod
        def now(tz=None):
            return NOW


def _fixed(patch) -> None:
    """The clock and version the outputs print, fixed (golden files outlive both)."""
    import maeb

    patch.setattr(boardjson, "_dt", _FixedClock)  # the JSON record stamps its time
    patch.setattr(boardjson, "__version__", "0.0.golden")
    patch.setattr(maeb, "__version__", "0.0.golden")
    # the page's figures are matplotlib's bytes (tests/test_figures_page.py checks them); here the page around them
    patch.setattr(page, "_figures", lambda *args: '<p id="figures">figures</p>')


def test_renderers_give_the_bytes_they_gave_before(monkeypatch):
    _fixed(monkeypatch)
    got = outputs()
    assert sorted(p.name for p in GOLDEN.iterdir()) == sorted(name + SUFFIX for name in got)
    for name, text in got.items():
        assert text == (GOLDEN / (name + SUFFIX)).read_text(encoding="utf-8"), name


def test_the_fixed_inputs_reach_every_branch():
    """The golden outputs are worth their bytes only if the inputs take the renderers' branches."""
    texts = {p.name.removesuffix(SUFFIX): p.read_text(encoding="utf-8") for p in GOLDEN.iterdir()}
    assert "†" in texts["board-columns.md"] and "experiment" in texts["board-columns.md"]
    assert "Rank interval" in texts["board-uncertain-columns.md"] and "±1.2 [90.0–97.0]" in texts["board-uncertain-columns.md"]
    assert "Birds&lt;&amp;&gt;" in texts["board-rows.html"] and 'id="tasks"' in texts["board-rows.html"]
    assert 'id="borda"' in texts["board-None.html"] and "retained" in texts["robust.md"]
    assert "| org/b&lt;eta&gt; | 0.0 | 0.0 | 0.0 | 0.0 | – |" in texts["robust.md"]  # raw HTML escaped in markdown
    assert "and 2 more" in texts["correlate.txt"] and "undefined" in texts["correlate.html"]


if __name__ == "__main__" and "--write" in sys.argv:
    with pytest.MonkeyPatch.context() as mp:
        _fixed(mp)
        GOLDEN.mkdir(parents=True, exist_ok=True)
        for name, text in outputs().items():
            (GOLDEN / (name + SUFFIX)).write_text(text, encoding="utf-8")
        print(f"wrote {len(outputs())} files to {GOLDEN}")
