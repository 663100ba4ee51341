"""A fault probe over what issue 33's release adds: tied scores (maeb.metrics.ties and the
tie-aware protocol), `maeb submit`, `maeb plot` and the leaderboard page, and the generated docs
(`make regen`, `regen_docs.py --check`).

Each case returns one verdict: OK, WRONG (silently wrong), TRACEBACK, CONFUSING (an unclear or
missing line) or SECURITY (a path or markup where it must not be). Prints one line per case and
the counts; exits 1 when any case is not OK.

    .venv/bin/python scripts/fault_probe_outputs.py [-k SUBSTRING]
"""

from __future__ import annotations

import json
import math
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

from _probe_harness import ROOT, cli, expect, no_traceback, one_line_error, registry
from _probe_harness import main as run_cases

CASES, case = registry()
LITE = ROOT / "results" / "maeb-lite"
MFCC = LITE / "maeb__mfcc-stats" / "1"
MODEL = "openai/whisper-medium"  # a model of mteb's registry (tests/test_submit.py's)
maeb_cli = cli("maeb-probe5-")


def finite(values: dict) -> bool:
    return all(isinstance(v, float) and math.isfinite(v) for v in values.values())


# -- ties -----------------------------------------------------------------------------------------


@case
def ties_all_identical_vectors():
    import numpy as np

    from maeb.metrics import ties

    rec = ties.identical_vectors(np.ones((5, 3)))
    expect(rec == {"identical_vector_clips": 5, "distinct_vectors": 1, "largest_shared": 5}, "WRONG", str(rec))


@case
def ties_all_identical_scores_expected_map():
    from maeb.metrics import ties

    groups = ties.ranked_groups({"a": 0.5, "b": 0.5, "c": 0.5, "d": 0.5}, {"a": 1})
    got = ties.expected_metrics(groups, [1], [4])
    # one relevant among 4 tied: expected MRR = (1 + 1/2 + 1/3 + 1/4) / 4
    expect(abs(got["MRR@4"] - (1 + 1 / 2 + 1 / 3 + 1 / 4) / 4) < 1e-12, "WRONG", f"MRR@4 {got['MRR@4']}")
    expect(abs(got["HitRate@4"] - 1.0) < 1e-12, "WRONG", f"HitRate@4 {got['HitRate@4']}")


@case
def ties_nan_score_in_a_list():
    from maeb.metrics import ties

    groups = ties.ranked_groups({"a": float("nan"), "b": 0.9, "c": 0.1}, {"b": 1})
    got = ties.expected_metrics(groups, [1], [3])
    expect(finite(got), "WRONG", f"non-finite metrics {got}")
    expect(got["MRR@3"] in (1.0, 0.5), "WRONG", f"MRR@3 {got['MRR@3']} with one NaN score")


@case
def ties_inf_score_makes_every_score_tie():
    from maeb.metrics import ties

    # an infinite score makes the tolerance infinite: every finite score would tie with every other
    groups = ties.ranked_groups({"x": float("inf"), "b": 0.9, "c": 0.1}, {"b": 1})
    expect([len(g) for g in groups] == [1, 1, 1], "WRONG", f"groups {[len(g) for g in groups]} with one inf score")


@case
def ties_argmax_nan_row():
    import numpy as np

    from maeb.metrics import ties

    got = ties.argmax_ties(np.array([[float("nan"), 0.2], [0.9, 0.1]]), np.array([0, 0]))
    expect(all(math.isfinite(v) for v in got.values()), "WRONG", str(got))


@case
def ties_single_candidate_list():
    from maeb.metrics import ties

    groups = ties.ranked_groups({"a": 0.3}, {"a": 1})
    got = ties.expected_metrics(groups, [1], [1, 10])
    expect(got["MRR@10"] == 1.0 and got["NDCG@1"] == 1.0, "WRONG", str(got))


@case
def ties_empty_qrels():
    from maeb.metrics import ties

    groups = ties.ranked_groups({"a": 0.3, "b": 0.3}, {})
    got = ties.expected_metrics(groups, ties.ideal_gains({}), [1, 2])
    expect(finite(got) and all(v == 0.0 for v in got.values()), "WRONG", str(got))


@case
def ties_empty_candidate_list():
    from maeb.metrics import ties

    got = ties.expected_metrics(ties.ranked_groups({}, {"a": 1}), [1], [1])
    expect(finite(got) and got["NDCG@1"] == 0.0, "WRONG", str(got))


@case
def ties_tolerance_exact_edge():
    from maeb.metrics import ties

    # scores exactly relative x max apart tie (the rule says "at most"); binary fractions, so exact
    edge, rel = [1.0, 1.0 - 2.0**-20], 2.0**-20
    expect(ties.group_sizes(edge, ties.tolerance(edge, rel)) == [2], "WRONG", "edge not tied")
    apart = [1.0, 1.0 - 2.0**-19]
    expect(ties.group_sizes(apart, ties.tolerance(apart, rel)) == [1, 1], "WRONG", "twice the tolerance tied")


@case
def ties_zero_and_negative_tolerance_and_all_zero_scores():
    from maeb.metrics import ties

    expect(ties.group_sizes([0.0, 0.0, 0.0], ties.tolerance([0.0, 0.0, 0.0])) == [3], "WRONG", "exact zeros not tied")
    expect(ties.group_sizes([-1.0, -1.0], ties.tolerance([-1.0, -1.0])) == [2], "WRONG", "negatives not tied")


@case
def ties_average_precision_empty_and_no_positive():
    import numpy as np

    from maeb.metrics import ties

    got = ties.average_precision_range(np.array([]), np.array([]))
    expect(all(math.isfinite(v) for v in got.values()), "WRONG", str(got))
    got = ties.average_precision_range(np.array([0.5, 0.5]), np.array([0, 0]))
    expect(all(math.isfinite(v) for v in got.values()), "WRONG", str(got))


@case
def ties_record_with_zero_items_does_not_warn_wrongly():
    import numpy as np

    from maeb.metrics import ties

    rec = ties.record(np.zeros((0, 4)), 0, None, 1e-6)
    expect(rec["depends_on_tie_order"] is False and ties.warning(rec, "m", "T") is None, "WRONG", str(rec))


@case
def ties_tie_aware_protocol_on_a_clustering_task():
    from maeb.encoders.protocols import get_protocol
    from maeb.mock import write_tone_folder
    from maeb.run.task import evaluate_task
    from tests.conftest import FREQS, make_embedder
    from tests.test_engine import spec_for

    with tempfile.TemporaryDirectory() as tmp:
        folder = write_tone_folder(Path(tmp) / "t", FREQS, per_label=3)
        emb = make_embedder(Path(tmp))
        emb.protocol = get_protocol("mteb-2.26-tie-aware")
        scores, *_ = evaluate_task(spec_for(folder, "clustering", data={"eval_splits": ["all"]}), emb)
    entry = scores["all"][0]
    expect(isinstance(entry.get("main_score"), float), "WRONG", f"no main score: {sorted(entry)}")


@case
def ties_unknown_protocol_name():
    from maeb.encoders.protocols import get_protocol

    one_line_error(lambda: get_protocol("mteb-2.26-tieaware"), "mteb-2.26-tieaware", "mteb-2.26-tie-aware")


# -- submit ---------------------------------------------------------------------------------------


def _result(task: str, subsets: dict[str, float], revision: str = "d1") -> dict:
    entries = [{"hf_subset": s, "main_score": v, "accuracy": v, "languages": ["zxx-Zxxx"]} for s, v in subsets.items()]
    return {"dataset_revision": revision, "task_name": task, "mteb_version": "2.26.24+maeb", "scores": {"test": entries}}


def _lay_out(root: Path, model: str, revision: str, files: dict[str, dict], meta: dict | None | bool = None) -> Path:
    from maeb.results.write import model_meta_json
    from maeb.spec.catalog import find_model

    folder = root / model.replace("/", "__") / revision
    folder.mkdir(parents=True)
    if meta is not False:
        (folder / "model_meta.json").write_text(json.dumps(meta or model_meta_json(find_model(model))))
    for name, data in files.items():
        (folder / f"{name}.json").write_text(json.dumps(data))
    return folder


def _clone(tmp: Path) -> Path:
    from maeb.spec.catalog import mteb_record

    root = tmp / "clone"
    _lay_out(root / "results", MODEL, mteb_record(MODEL)["revision"], {"Kaggle": _result("Kaggle", {"curated": 0.5})})
    return root


def _rev() -> str:
    from maeb.spec.catalog import mteb_record

    return mteb_record(MODEL)["revision"]


@case
def submit_missing_model_meta():
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        _lay_out(tmp / "ours", MODEL, _rev(), {"Kaggle": _result("Kaggle", {"new": 0.4})}, meta=False)
        done = maeb_cli("submit", tmp / "ours", "--to", _clone(tmp))
    text = no_traceback(done)
    expect(done.returncode == 1, "WRONG", f"exit {done.returncode}")
    expect("model_meta.json" in text, "CONFUSING", text[-200:])


@case
def submit_experiments_only():
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        folder = _lay_out(tmp / "ours", MODEL, _rev(), {})
        (folder / "experiments" / "x").mkdir(parents=True)
        (folder / "experiments" / "x" / "Kaggle.json").write_text(json.dumps(_result("Kaggle", {"new": 0.4})))
        done = maeb_cli("submit", tmp / "ours", "--to", _clone(tmp))
    text = no_traceback(done)
    expect(done.returncode == 1 and "experiment" in text, "CONFUSING", f"exit {done.returncode}: {text[-200:]}")


@case
def submit_clone_without_results_folder():
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        _lay_out(tmp / "ours", MODEL, _rev(), {"Kaggle": _result("Kaggle", {"new": 0.4})})
        (tmp / "empty").mkdir()
        done = maeb_cli("submit", tmp / "ours", "--to", tmp / "empty")
        made = (tmp / "empty" / "results").exists()
    text = no_traceback(done)
    expect(done.returncode != 0 and not made, "WRONG", f"exit {done.returncode}, results/ made: {made}")
    expect("results" in text and "\n" not in text.strip(), "CONFUSING", text[-200:])


@case
def submit_task_file_with_wrong_task_name():
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        _lay_out(tmp / "ours", MODEL, _rev(), {"Kaggle": _result("Other", {"new": 0.4})})
        done = maeb_cli("submit", tmp / "ours", "--to", _clone(tmp))
    text = no_traceback(done)
    expect(done.returncode == 1 and "task_name" in text and "Kaggle" in text, "CONFUSING", text[-200:])


@case
def submit_model_name_with_dot_dot():
    from maeb.results.submit import submit

    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        meta = {"name": "../../escape", "revision": "1"}
        folder = tmp / "ours" / "m" / "1"
        folder.mkdir(parents=True)
        (folder / "model_meta.json").write_text(json.dumps(meta))
        (folder / "Kaggle.json").write_text(json.dumps(_result("Kaggle", {"new": 0.4})))
        clone = _clone(tmp)
        out = submit(tmp / "ours", clone, known={"../../escape", MODEL})
        outside = [p for p in out.written if not p.resolve().is_relative_to((clone / "results").resolve())]
        escaped = (tmp / "escape").exists() or (clone / "escape").exists()
    expect(not outside and not escaped, "SECURITY", f"wrote outside results/: {[str(p) for p in outside]}")
    expect(out.refused or out.failures, "WRONG", "accepted")


@case
def submit_revision_with_dot_dot():
    from maeb.results.submit import submit

    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        folder = tmp / "ours" / "m" / "1"
        folder.mkdir(parents=True)
        (folder / "model_meta.json").write_text(json.dumps({"name": MODEL, "revision": "../../../x"}))
        (folder / "Kaggle.json").write_text(json.dumps(_result("Kaggle", {"new": 0.4})))
        clone = _clone(tmp)
        out = submit(tmp / "ours", clone, known={MODEL})
        outside = [p for p in out.written if not p.resolve().is_relative_to((clone / "results").resolve())]
        leftover = [p for p in tmp.rglob("Kaggle.json") if "ours" not in p.parts and "results" not in p.parts]
    expect(not outside and not leftover, "SECURITY", f"wrote outside results/: {[str(p) for p in outside + leftover]}")


@case
def submit_merge_into_other_dataset_revision():
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        _lay_out(tmp / "ours", MODEL, _rev(), {"Kaggle": _result("Kaggle", {"new": 0.4}, revision="d2")})
        done = maeb_cli("submit", tmp / "ours", "--to", _clone(tmp))
    text = no_traceback(done)
    expect(done.returncode == 1 and "dataset revision" in text, "CONFUSING", text[-200:])


@case
def submit_read_only_clone():
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        _lay_out(tmp / "ours", MODEL, _rev(), {"Kaggle": _result("Kaggle", {"new": 0.4})})
        clone = _clone(tmp)
        folders = [p for p in clone.rglob("*") if p.is_dir()] + [clone]
        for p in folders:
            p.chmod(stat.S_IRUSR | stat.S_IXUSR)
        try:
            done = maeb_cli("submit", tmp / "ours", "--to", clone)
        finally:
            for p in folders:
                p.chmod(stat.S_IRWXU)
    if os.geteuid() == 0:
        return  # root writes anyway
    no_traceback(done)
    expect(done.returncode != 0, "WRONG", f"exit {done.returncode}")


@case
def submit_unknown_model():
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        _lay_out(tmp / "ours", "maeb/mfcc-stats", "1", {"Kaggle": _result("Kaggle", {"new": 0.4})})
        done = maeb_cli("submit", tmp / "ours", "--to", _clone(tmp))
    text = no_traceback(done)
    expect(done.returncode == 1 and "registry" in text, "CONFUSING", text[-200:])


@case
def submit_results_dir_missing():
    with tempfile.TemporaryDirectory() as t:
        done = maeb_cli("submit", Path(t) / "nope", "--to", _clone(Path(t)))
    text = no_traceback(done)
    expect(done.returncode != 0 and "nope" in text, "CONFUSING", text[-200:])


@case
def submit_twice_is_nothing_new():
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        _lay_out(tmp / "ours", MODEL, _rev(), {"Kaggle": _result("Kaggle", {"new": 0.4})})
        clone = _clone(tmp)
        first = maeb_cli("submit", tmp / "ours", "--to", clone)
        second = maeb_cli("submit", tmp / "ours", "--to", clone)
    no_traceback(first)
    no_traceback(second)
    expect(first.returncode == 0, "WRONG", f"first exit {first.returncode}: {first.stderr[-200:]}")
    expect(second.returncode == 0 and "nothing new" in second.stdout + second.stderr, "CONFUSING", second.stderr[-200:])


@case
def submit_task_file_not_json_object():
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        folder = _lay_out(tmp / "ours", MODEL, _rev(), {})
        (folder / "Kaggle.json").write_text("[1, 2]")
        done = maeb_cli("submit", tmp / "ours", "--to", _clone(tmp))
    text = no_traceback(done)
    expect(done.returncode == 1 and "Kaggle.json" in text, "CONFUSING", text[-200:])


# -- plot and page --------------------------------------------------------------------------------


def _board_dir(tmp: Path, names: list[str], tasks: int | None = None) -> Path:
    """Result folders of mfcc-stats' MAEB-lite files under other model names."""
    root = tmp / "res"
    files = sorted(p for p in MFCC.glob("*.json") if p.name != "model_meta.json")[:tasks]
    for name in names:
        meta = json.loads((MFCC / "model_meta.json").read_text())
        meta["name"] = name
        folder = root / name.replace("/", "__")[:100] / "1"  # a file name's length limit; the name is in the meta
        folder.mkdir(parents=True)
        (folder / "model_meta.json").write_text(json.dumps(meta))
        for f in files:
            shutil.copy(f, folder / f.name)
    return root


def _page(root: Path) -> tuple[subprocess.CompletedProcess, str]:
    out = root.parent / "page.html"
    done = maeb_cli("leaderboard", "--results", root, "--format", "html", "--out", out)
    return done, out.read_text(encoding="utf-8") if out.exists() else ""


def _has_mpl() -> bool:
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


@case
def page_empty_results_dir():
    with tempfile.TemporaryDirectory() as t:
        (Path(t) / "res").mkdir()
        done, page = _page(Path(t) / "res")
    text = no_traceback(done)
    expect(done.returncode != 0 and not page, "WRONG", f"exit {done.returncode}, page of {len(page)} chars")
    expect("res" in text, "CONFUSING", text[-200:])


@case
def plot_empty_results_dir():
    with tempfile.TemporaryDirectory() as t:
        (Path(t) / "res").mkdir()
        done = maeb_cli("plot", Path(t) / "res", "--out", Path(t) / "figs", "--format", "svg")
    text = no_traceback(done)
    expect(done.returncode != 0, "WRONG", f"exit {done.returncode}")
    expect(len(text.strip().splitlines()) <= 2, "CONFUSING", text[-200:])


@case
def page_one_model():
    with tempfile.TemporaryDirectory() as t:
        done, page = _page(_board_dir(Path(t), ["a/one"]))
    no_traceback(done)
    expect(done.returncode == 0 and "a/one" in page, "WRONG", f"exit {done.returncode}: {done.stderr[-200:]}")


@case
def page_one_task():
    with tempfile.TemporaryDirectory() as t:
        done, page = _page(_board_dir(Path(t), ["a/one", "b/two"], tasks=1))
    no_traceback(done)
    expect(done.returncode == 0 and "b/two" in page, "WRONG", f"exit {done.returncode}: {done.stderr[-200:]}")


@case
def plot_one_model_one_task():
    if not _has_mpl():
        with tempfile.TemporaryDirectory() as t:
            done = maeb_cli("plot", _board_dir(Path(t), ["a/one"], tasks=1), "--out", Path(t) / "f", "--format", "svg")
        text = no_traceback(done)
        expect(done.returncode != 0 and "plots" in text, "CONFUSING", text[-200:])
        return
    with tempfile.TemporaryDirectory() as t:
        done = maeb_cli(
            "plot", _board_dir(Path(t), ["a/one"], tasks=1), "--out", Path(t) / "f", "--format", "svg", "--draws", "200"
        )
    no_traceback(done)
    expect(done.returncode == 0, "WRONG", f"exit {done.returncode}: {done.stderr[-200:]}")


@case
def page_model_name_with_html():
    evil = "x/<img src=x onerror=alert(1)>"
    with tempfile.TemporaryDirectory() as t:
        root = Path(t) / "res"
        _board_dir(Path(t), ["a/one"])
        meta = json.loads((MFCC / "model_meta.json").read_text())
        meta["name"] = evil
        folder = root / "evil" / "1"
        folder.mkdir(parents=True)
        (folder / "model_meta.json").write_text(json.dumps(meta))
        for f in MFCC.glob("Lite*.json"):
            shutil.copy(f, folder / f.name)
        done, page = _page(root)
    no_traceback(done)
    expect("<img src=x" not in page, "SECURITY", "raw markup of a model name in the page")


@case
def page_unicode_and_very_long_name():
    names = ["ü/модель-测试", "long/" + "x" * 400]
    with tempfile.TemporaryDirectory() as t:
        done, page = _page(_board_dir(Path(t), names))
    no_traceback(done)
    expect(done.returncode == 0 and "модель-测试" in page, "WRONG", f"exit {done.returncode}: {done.stderr[-200:]}")


@case
def page_nan_score():
    with tempfile.TemporaryDirectory() as t:
        root = _board_dir(Path(t), ["a/one", "b/two"])
        f = sorted((root / "b__two" / "1").glob("Lite*.json"))[0]
        data = json.loads(f.read_text())
        for entries in data["scores"].values():
            for e in entries:
                e["main_score"] = float("nan")
        f.write_text(json.dumps(data))
        done, page = _page(root)
    text = no_traceback(done)
    expect(">nan<" not in page.lower() and "NaN," not in page, "WRONG", "NaN shown as a score on the page")
    expect(f.stem in text or done.returncode != 0 or "missing" in page, "CONFUSING", "a NaN main score not said")


@case
def page_missing_n_parameters():
    with tempfile.TemporaryDirectory() as t:
        root = _board_dir(Path(t), ["a/one", "b/two"])
        meta_path = root / "b__two" / "1" / "model_meta.json"
        meta = json.loads(meta_path.read_text())
        del meta["n_parameters"]
        meta_path.write_text(json.dumps(meta))
        done, page = _page(root)
    no_traceback(done)
    expect(done.returncode == 0 and "b/two" in page, "WRONG", f"exit {done.returncode}: {done.stderr[-200:]}")


@case
def page_robust_json_malformed():
    with tempfile.TemporaryDirectory() as t:
        root = _board_dir(Path(t), ["a/one"])
        (root / "robust.json").write_text('{"curves": [1, 2')
        done, page = _page(root)
    text = no_traceback(done)
    expect(done.returncode != 0 or "robust.json" in text + page, "CONFUSING", "a malformed robust.json not named")


@case
def plot_robust_json_wrong_shape():
    from maeb.analysis.figures import robustness

    with tempfile.TemporaryDirectory() as t:
        for bad in ('{"curves": [1, 2', "[1, 2]", '{"curves": {"a": 3}}', '{"x": 1}'):
            p = Path(t) / "robust.json"
            p.write_text(bad)
            if not _has_mpl():
                return
            one_line_error(lambda p=p: robustness([p]), "robust.json")


# -- docs -----------------------------------------------------------------------------------------


def _regen(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "scripts/regen_docs.py", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


@case
def docs_regen_check_clean_tree():
    done = _regen("--check", cwd=ROOT)
    no_traceback(done)
    expect(done.returncode == 0, "WRONG", f"a fresh tree is stale: {(done.stdout + done.stderr)[-200:]}")


@case
def docs_regen_check_modified_tree_and_idempotence():
    with tempfile.TemporaryDirectory() as t:
        copy = Path(t) / "tree"
        skip = {".venv", ".venv-parity", ".git", "site", "results", "__pycache__", "maeb.egg-info"}
        shutil.copytree(ROOT, copy, ignore=lambda d, names: [n for n in names if n in skip and Path(d) in (ROOT, ROOT / "docs")])
        page = copy / "docs" / "reference" / "cli.md"
        page.write_text(page.read_text() + "\nstale line\n")
        check = _regen("--check", cwd=copy)
        no_traceback(check)
        expect(check.returncode == 1 and "cli.md" in check.stdout + check.stderr, "WRONG", "a stale page not named")
        first = _regen(cwd=copy)
        after_first = page.read_text()
        second = _regen(cwd=copy)
        expect(first.returncode == 0 and second.returncode == 0, "WRONG", f"regen exits {first.returncode}, {second.returncode}")
        expect(page.read_text() == after_first and "stale line" not in after_first, "WRONG", "regen not idempotent")
        again = _regen("--check", cwd=copy)
        expect(again.returncode == 0, "WRONG", f"--check after regen: {(again.stdout + again.stderr)[-200:]}")


@case
def docs_regen_unknown_flag():
    done = _regen("--chek", cwd=ROOT)
    text = no_traceback(done)
    expect(done.returncode != 0, "WRONG", f"--chek accepted (exit 0), it may have rewritten pages: {text[-120:]}")


def main() -> int:
    return run_cases(CASES, __doc__ or "")


if __name__ == "__main__":
    raise SystemExit(main())
