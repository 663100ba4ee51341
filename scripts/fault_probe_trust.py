"""A fault probe over issue 33 items 8-16 and their neighbours: outside family records, board
escaping, secrets in endpoint URLs and key options, unpinned revisions, hub 5xx answers, the
embedding identity's packages, MAEB-lite's categories and the confusing cases (relative folders,
judge settings, `python -m maeb.lite`, `list models`, the Python API's skipped tasks, `lite --check`
on a broken reference, a QA spec's main score, skipped-clip counts).

Each case returns one verdict: OK, WRONG (silently wrong), TRACEBACK, CONFUSING (an unclear or
missing line) or SECURITY (a secret or markup where it must not be). Prints one line per case and
the counts; exits 1 when any case is not OK.

    .venv/bin/python scripts/fault_probe_trust.py [-k SUBSTRING]
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from _probe_harness import ROOT, Verdict, cli, expect, no_traceback, one_line_error, registry
from _probe_harness import main as run_cases

CASES, case = registry()
SECRET_URL = "http://alice:hunter2pass@127.0.0.1:9/v1?access_token=SEKRET123&sig=S1GN&region=eu"
SECRETS = ("hunter2pass", "SEKRET123", "S1GN", "alice")
maeb_cli = cli("maeb-probe4-")


# item 8: outside family records


def _register(name: str, **kw):
    from maeb.encoders.family import FAMILY_REGISTRY, Family, register_family

    FAMILY_REGISTRY.pop(name, None)
    return register_family(Family(name, kw.pop("factory", "probe_mod:Enc"), **kw))


def _forget(*names: str) -> None:
    from maeb.encoders.family import FAMILY_REGISTRY

    for name in names:
        FAMILY_REGISTRY.pop(name, None)


@case
def family_misspelt_key_in_star_row():
    one_line_error(
        lambda: _register("p-a", rules={"mteb-2.26": {"*": {"max_secnds": 4.0}}}), "'max_secnds'", "valid keys", "max_seconds"
    )


@case
def family_misspelt_key_in_an_architecture_row():
    one_line_error(lambda: _register("p-b", rules={"paper": {"wav2vec2": {"batchng": "padded"}}}), "'batchng'", "'wav2vec2'")


@case
def family_unknown_rule_set():
    one_line_error(lambda: _register("p-c", rules={"mteb-2.27": {"*": {"max_seconds": 1.0}}}), "mteb-2.27", "mteb-2.26")


@case
def family_rules_wrong_shape():
    one_line_error(lambda: _register("p-d", rules={"mteb-2.26": {"*": 30}}), "not a table")
    one_line_error(lambda: _register("p-d", rules=["mteb-2.26"]), "rules must be")


@case
def family_own_rule_key_declared():
    _register("p-e", rule_keys=("hop",), rules={"mteb-2.26": {"*": {"hop": 2}}})
    _forget("p-e")


@case
def family_requires_enforced_before_import():
    from maeb.encoders import resolve_factory

    _register("p-f", factory="probe_never_imported:Enc", requires=("surely-not-installed-probe-pkg",))
    try:
        one_line_error(lambda: resolve_factory("p-f"), "surely-not-installed-probe-pkg", "pip install")
        expect("probe_never_imported" not in sys.modules, "SECURITY", "the module was imported anyway")
    finally:
        _forget("p-f")


@case
def family_users_missing_module_named_as_theirs():
    from maeb.encoders import resolve_factory

    _register("p-g", factory="probe_gone_pkg.enc:Enc")
    try:
        text = one_line_error(lambda: resolve_factory("p-g"), "probe_gone_pkg.enc")
        expect("extras" not in text, "CONFUSING", f"told to install maeb's extras: {text}")
    finally:
        _forget("p-g")


@case
def family_users_module_missing_a_dependency():
    from maeb.encoders import ModelMeta, load_encoder

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "probe_dep_mod.py").write_text("import probe_absent_dependency\n")
        sys.path.insert(0, tmp)
        _register("p-h", factory="probe_dep_mod:Enc")
        try:
            meta = ModelMeta(name="probe/dep", family="p-h", revision="none")
            text = one_line_error(lambda: load_encoder(meta), "probe_absent_dependency")
            expect("extras" not in text, "CONFUSING", text)
        finally:
            sys.path.remove(tmp)
            _forget("p-h")


# item 9: boards


def _board(name: str, task: str = "T0"):
    from maeb.analysis.leaderboard import Board, Row, TaskInfo

    return Board(
        None, [TaskInfo(task, "AudioClassification")], [Row(name, ["r"], rank=1, mean_task=0.5, n_tasks=1, tasks={task: 0.5})]
    )


def _page_json(page: str) -> str:
    found = re.findall(r'<script type="application/json" id="leaderboard-data">(.*?)</script>', page, re.S)
    expect(len(found) == 1, "SECURITY", "the page's JSON element was cut short")
    return found[0]


@case
def board_html_comment_opener_in_name():
    from maeb.analysis.report import render

    name = "x/<!--<script>"
    data = _page_json(render(_board(name), "html"))
    expect("<" not in data, "SECURITY", "a '<' left in the embedded JSON")
    expect(json.loads(data)["models"][0]["model"] == name, "WRONG", "the JSON no longer holds the name")


@case
def board_html_script_close_in_task_name():
    from maeb.analysis.report import render

    page = render(_board("m", task="T</script><img src=x onerror=alert(1)>"), "html")
    expect("<img src=x" not in page, "SECURITY", "raw <img> from a task name in the page")


@case
def board_markdown_raw_html():
    from maeb.analysis.report import render

    text = render(_board("x/<img src=x onerror=alert(1)>"), "markdown")
    expect("<img" not in text, "SECURITY", "raw HTML in leaderboard.md")


@case
def board_markdown_pipe_and_newline():
    from maeb.analysis.report import render

    text = render(_board("a|b\nc"), "markdown")
    rows = [line for line in text.splitlines() if line.startswith("| 1 ")]
    expect(len(rows) == 1 and "a\\|b c" in rows[0], "WRONG", f"the row is split: {rows}")


@case
def board_csv_formula_cells():
    from maeb.analysis.report import render

    for name in ("=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(A1:A2)", "\t=1"):
        rows = list(csv.reader(io.StringIO(render(_board(name), "csv"))))
        expect(rows[1][0] == "'" + name, "SECURITY", f"cell {rows[1][0]!r} a spreadsheet evaluates")
        by_task = list(csv.reader(io.StringIO(render(_board("m", task=name), "csv", per_task="rows"))))
        expect(by_task[1][0] == "'" + name, "SECURITY", f"task cell {by_task[1][0]!r}")


@case
def board_csv_negative_scores_stay_numbers():
    from maeb.analysis.leaderboard import Board, Row, TaskInfo
    from maeb.analysis.report import render

    board = Board(None, [TaskInfo("T", "AudioClassification")], [Row("m", ["r"], rank=1, mean_task=-0.25, n_tasks=1)])
    rows = list(csv.reader(io.StringIO(render(board, "csv"))))
    expect(rows[1][2] == "-0.25", "WRONG", f"a negative score became {rows[1][2]!r}")


@case
def board_json_file_keeps_names_exact():
    from maeb.analysis.report import render

    name = "=x/<b>|y"
    expect(json.loads(render(_board(name), "json"))["models"][0]["model"] == name, "WRONG", "leaderboard.json changed the name")


# item 10: secrets


@case
def secret_url_redaction():
    from maeb.core.identity import redact_url

    shown = redact_url(SECRET_URL)
    expect(not any(s in shown for s in SECRETS), "SECURITY", shown)
    expect("region=eu" in shown and "127.0.0.1:9/v1" in shown, "WRONG", f"more than the secrets went: {shown}")
    expect(redact_url("https://api.example.invalid/v1") == "https://api.example.invalid/v1", "WRONG", "a clean URL changed")


@case
def secret_url_in_identity_folder_and_model_meta():
    from maeb.core.identity import declared_identity, experiment_settings
    from maeb.encoders import ModelMeta
    from maeb.results.write import experiment_name

    meta = ModelMeta(name="probe/api", family="gen-openai-chat", revision="none", modalities=("audio", "text"))
    texts = [
        json.dumps(declared_identity(meta, {"base_url": SECRET_URL}, "mteb-2.26")),
        json.dumps(experiment_settings(meta, {"base_url": SECRET_URL}, "mteb-2.26", "mteb-2.26")),
        str(experiment_name(experiment_settings(meta, {"base_url": SECRET_URL}, "mteb-2.26", "mteb-2.26"))),
        json.dumps(meta.to_mteb({"base_url": SECRET_URL})),
    ]
    for text in texts:
        expect(not any(s in text for s in SECRETS), "SECURITY", text[:200])


@case
def secret_url_in_config_and_error_line():
    from maeb.encoders import ModelMeta, load_encoder
    from maeb.encoders.chat import ChatError, chat

    meta = ModelMeta(name="probe/api", family="gen-openai-chat", revision="none", modalities=("audio", "text"))
    encoder = load_encoder(meta, base_url=SECRET_URL, model="m", retries=0, budget=2.0, timeout=1.0)
    expect(not any(s in json.dumps(encoder.config()) for s in SECRETS), "SECURITY", "config() holds a secret")
    try:
        chat(encoder.endpoint, [{"role": "user", "content": "hi"}])
    except ChatError as exc:
        expect(not any(s in str(exc) for s in SECRETS), "SECURITY", str(exc))
        return
    raise Verdict("WRONG", "a closed port answered")


@case
def secret_tta_url_in_config():
    from maeb.encoders import ModelMeta, load_encoder

    meta = ModelMeta(name="probe/tta", family="tta-http", revision="none", modalities=("text",))
    try:
        encoder = load_encoder(meta, url=SECRET_URL)
    except Exception as exc:  # the family may need options this probe does not give: not this case's finding
        raise Verdict("CONFUSING", f"could not build http-tta: {exc}") from exc
    expect(not any(s in json.dumps(encoder.config()) for s in SECRETS), "SECURITY", "the adapter's config holds a secret")


@case
def secret_pasted_as_api_key_env_cli():
    from maeb.cli.common import option_pairs

    for pasted in (
        "sk-proj-AbC123dEf456GhI789jKl",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ12",
    ):
        text = one_line_error(
            lambda p=pasted: option_pairs([("api_key_env", p)]), "NAME of the environment variable", kind="SECURITY"
        )
        expect(pasted not in text, "SECURITY", "the refusal repeats the key")


@case
def secret_pasted_as_api_key_env_api():
    from maeb.encoders import ModelMeta, load_encoder

    meta = ModelMeta(name="probe/api", family="gen-openai-chat", revision="none", modalities=("audio", "text"))
    one_line_error(
        lambda: load_encoder(meta, base_url="http://127.0.0.1:9/v1", api_key_env="sk-live-0123456789abcdefABCDEF"),
        "looks like a secret",
        kind="SECURITY",
    )


@case
def secret_plain_env_names_accepted():
    from maeb.cli.common import option_pairs

    for name in ("OPENAI_API_KEY", "MY_SERVER_KEY", "my_key"):
        option_pairs([("api_key_env", name)])


@case
def secret_judge_key_env_flag():
    from maeb.encoders.chat import Endpoint

    one_line_error(
        lambda: Endpoint("http://127.0.0.1:9/v1", "judge", "sk-abcdefghijklmnop0123456789"), "secret key", kind="SECURITY"
    )
    label = Endpoint(SECRET_URL, "judge").label
    expect(not any(s in label for s in SECRETS), "SECURITY", label)


# item 11: unpinned revisions


@case
def revision_pinned_and_local():
    from maeb.data import hub

    sha = "0123456789abcdef0123456789abcdef01234567"
    expect(hub.resolved_commit("org/x", sha) == sha, "WRONG", "a pinned commit was not kept")
    expect(hub.resolved_commit(str(ROOT), None) is None, "WRONG", "a local folder was given a commit")


@case
def revision_main_offline_from_cached_ref():
    from huggingface_hub import constants

    from maeb.data import hub

    sha = "fedcba9876543210fedcba9876543210fedcba98"
    with tempfile.TemporaryDirectory() as tmp:
        refs = Path(tmp) / "datasets--org--probe" / "refs"
        refs.mkdir(parents=True)
        (refs / "main").write_text(sha)
        saved = constants.HF_HUB_CACHE, constants.HF_HUB_OFFLINE
        constants.HF_HUB_CACHE, constants.HF_HUB_OFFLINE = tmp, True
        try:
            expect(hub.resolved_commit("org/probe", "main") == sha, "WRONG", "main not resolved from the cache's ref")
            expect(hub.resolved_commit("org/probe", None) == sha, "WRONG", "no revision not resolved")
            expect(hub.resolved_commit("org/other", "main") is None, "WRONG", "a ref invented for an uncached repo")
        finally:
            constants.HF_HUB_CACHE, constants.HF_HUB_OFFLINE = saved


@case
def revision_written_into_result():
    from maeb.results.write import task_result
    from maeb.spec.taskspec import parse_spec

    raw = {"name": "T", "type": "classification", "data": {"source": "hub", "path": "org/data", "revision": "main"}}
    spec = parse_spec(raw, "probe", ROOT)
    sha = "ab" * 20
    expect(task_result(spec, {}, 0.0, {"data": {"resolved_revision": sha}})["dataset_revision"] == sha, "WRONG", "main recorded")


# item 12: hub 5xx


class _Answered(Exception):
    def __init__(self, status: int):
        super().__init__(f"{status} Server Error: for url: https://hub.invalid/api/datasets/org/data")
        self.response = type("R", (), {"status_code": status})()


def _with_flaky_loader(failures: int, status: int):
    import datasets

    from maeb.data import hub

    calls, waits = [], []

    def load_dataset(*args, **kwargs):
        calls.append(1)
        if len(calls) <= failures:
            raise _Answered(status)
        return datasets.Dataset.from_dict({"label": [0]})

    saved = datasets.load_dataset, hub.prepare, hub.cached_default_config, hub.time.sleep
    datasets.load_dataset, hub.prepare = load_dataset, lambda: None
    hub.cached_default_config = lambda repo, revision: None
    hub.time.sleep = waits.append

    def restore():
        datasets.load_dataset, hub.prepare, hub.cached_default_config, hub.time.sleep = saved

    return calls, waits, restore


@case
def hub_503_retried_then_loaded():
    from maeb.data.sources import load_hub_split

    calls, waits, restore = _with_flaky_loader(2, 503)
    try:
        load_hub_split("org/data", "main", None, "test", ())
    except Exception as exc:
        raise Verdict("WRONG", f"a passing 503 failed the task: {exc}") from exc
    finally:
        restore()
    expect(len(calls) == 3 and waits == [1.0, 2.0], "WRONG", f"calls {len(calls)}, waits {waits}")


@case
def hub_502_for_ever_fails_clearly():
    from maeb.data.sources import load_hub_split

    calls, waits, restore = _with_flaky_loader(99, 502)
    try:
        text = one_line_error(lambda: load_hub_split("org/data", "main", None, "test", ()), "HTTP 502", "reachable but failing")
        expect("Without hub access" not in text, "CONFUSING", text)
    finally:
        restore()


@case
def hub_404_not_retried():
    from maeb.data import hub

    waits = []
    saved = hub.time.sleep
    hub.time.sleep = waits.append
    try:
        with contextlib.suppress(_Answered):
            hub.retrying(lambda: (_ for _ in ()).throw(_Answered(404)), "probe")
    finally:
        hub.time.sleep = saved
    expect(waits == [], "WRONG", f"a 404 was retried ({waits})")


# item 13


@case
def readme_says_what_generated_hashes_protect():
    # the README's sections moved to docs/ pages (tests/test_docs_site.py's README_SECTIONS): read the page
    text = (ROOT / "docs" / "generative.md").read_text(encoding="utf-8")
    expect("### What the generated-audio check protects against" in text, "CONFUSING", "no section in docs/generative.md")
    expect("does not protect against" in text, "CONFUSING", "the limit is not said")


# item 14


@case
def identity_keys_on_declared_packages():
    from maeb.core.identity import encoder_identity, requirement_name

    expect(requirement_name("torch>=2.1; python_version>'3.9'") == "torch", "WRONG", "requirement name")
    expect(requirement_name("pkg[extra]>=1") == "pkg", "WRONG", "requirement name with extra")

    class Plain:
        def config(self):
            return {}

    found = encoder_identity({}, Plain(), None, "cpu", ("packaging>=20",))
    expect("packaging" in found["software"], "WRONG", "a declared package is not in the identity")


# item 15


@case
def lite_mixture_tags_is_audio_only():
    from maeb.analysis.leaderboard import spec_info
    from maeb.spec import catalog

    expect(
        spec_info(catalog.find_task("LiteMixtureTags")).group == "audio-only", "WRONG", "LiteMixtureTags counts as cross-modal"
    )


# item 16


@case
def relative_lite_dir_and_cache_dir():
    from maeb.core.context import RunContext
    from maeb.spec import catalog

    spec = catalog.find_task("LiteMixtureTags")
    with tempfile.TemporaryDirectory() as tmp:
        old = os.getcwd()
        os.chdir(tmp)
        try:
            here = Path(tmp).resolve()
            got = Path(spec.data.location(RunContext(cache_dir=Path("c"), lite_dir=Path("lite")).variables())).resolve()
            expect(got == here / "lite" / "mixtures", "CONFUSING", f"--lite-dir lite read as {got}")
            got = Path(spec.data.location(RunContext(cache_dir=Path("c")).variables())).resolve()
            expect(got == here / "c" / "maeb-lite" / "mixtures", "CONFUSING", f"--cache-dir c read as {got}")
        finally:
            os.chdir(old)


@case
def judge_concurrency_zero_and_negative():
    from maeb.run.options import RunOptions, check_options

    for value in (0, -3, True):
        one_line_error(lambda v=value: check_options(RunOptions(cache_dir="c", judge_concurrency=v)), "judge concurrency")


@case
def cli_judge_concurrency_zero():
    done = maeb_cli("run", "-m", "mfcc", "-t", "BeijingOpera", "--judge-concurrency", "0", "--dry-run")
    no_traceback(done)
    expect(done.returncode != 0 and "judge concurrency" in done.stderr, "CONFUSING", (done.stderr or done.stdout)[-200:])


@case
def python_m_maeb_lite():
    # maeb.lite, removed in 0.4.0, is Python's own one line; the package's entry names the command
    for module, says in (("maeb.lite", "No module named maeb.lite"), ("maeb.benchmarks.lite", "python -m maeb lite")):
        done = subprocess.run(
            [sys.executable, "-m", module], capture_output=True, text=True, cwd=tempfile.gettempdir(), timeout=120
        )
        no_traceback(done)
        lines = (done.stdout + done.stderr).strip().splitlines()
        expect(done.returncode != 0 and len(lines) == 1 and says in lines[0], "CONFUSING", f"{module}: {lines}")


@case
def list_models_names_packages():
    done = maeb_cli("list", "models")
    no_traceback(done)
    vague = [line for line in done.stdout.splitlines() if "not runnable here" in line and "not runnable here:" not in line]
    expect(not vague, "CONFUSING", vague[0] if vague else "")


@case
def judge_variable_without_a_judged_task():
    env = {"MAEB_JUDGE_URL": "http://127.0.0.1:9/v1", "MAEB_JUDGE_MODEL": ""}
    done = maeb_cli("run", "-m", "mfcc", "-t", "BeijingOpera", "--dry-run", env=env)
    no_traceback(done)
    expect(done.returncode == 0, "CONFUSING", (done.stderr or done.stdout).strip()[-200:])


@case
def judge_variable_malformed_without_a_judged_task():
    env = {"MAEB_JUDGE_URL": "not a url", "MAEB_JUDGE_MODEL": "x"}
    done = maeb_cli("run", "-m", "mfcc", "-t", "BeijingOpera", "--dry-run", env=env)
    no_traceback(done)
    expect(done.returncode == 0, "CONFUSING", (done.stderr or done.stdout).strip()[-200:])


@case
def api_says_when_it_skips():
    import numpy as np
    import soundfile as sf

    import maeb
    from tests.test_api import BandEnergy

    with warnings.catch_warnings(record=True) as caught, tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "tones"
        (folder / "audio").mkdir(parents=True)
        rows = ["file_name,label,split"]
        for i in range(4):
            sf.write(folder / "audio" / f"c{i}.wav", np.sin(np.arange(4000) * (0.05 + 0.1 * (i % 2))).astype(np.float32), 16000)
            rows.append(f"audio/c{i}.wav,{'low' if i % 2 else 'high'},test")
        (folder / "metadata.csv").write_text("\n".join(rows) + "\n")
        spec = Path(tmp) / "ProbeZeroshot.toml"
        spec.write_text(
            f'name = "ProbeZeroshot"\ntype = "zeroshot"\n[data]\nsource = "audiofolder"\npath = "{folder}"\n'
            'eval_splits = ["test"]\n[data.split_by]\ncolumn = "split"\n[protocol]\ntemplate = "tone {label}"\n'
        )
        warnings.simplefilter("always")
        try:
            found = maeb.evaluate(BandEnergy(), spec, cache_dir=Path(tmp) / "cache", progress=False, strict=False)
        except Exception as exc:
            raise Verdict("TRACEBACK", f"{type(exc).__name__}: {exc}") from exc
    said = [str(w.message) for w in caught if "skipped" in str(w.message)]
    expect(bool(said) and "ProbeZeroshot" in said[0], "CONFUSING", "a task skipped without a word")
    expect(getattr(found, "skipped", None) == ["ProbeZeroshot"], "CONFUSING", "the returned list does not say which were skipped")


@case
def lite_check_truncated_reference_file():
    from maeb.benchmarks.lite.check import compare, report
    from tests.test_lite_check import result, write

    with tempfile.TemporaryDirectory() as tmp:
        ref, run = Path(tmp) / "ref", Path(tmp) / "run"
        for folder in (ref, run):
            write(folder, "m/a", result("Cut", 0.5))
        cut = ref / "m__a" / "1" / "Cut.json"
        cut.write_text(cut.read_text()[:30])
        cells = compare(ref, run)
        text = report(cells, 1e-6)
    expect(len(cells) == 1 and not cells[0].agrees, "WRONG", "a truncated reference cell passed")
    expect("cannot be read" in cells[0].cause, "CONFUSING", cells[0].cause)
    expect(" in ;" not in text, "CONFUSING", text.splitlines()[-1])


@case
def lite_check_bad_band_in_reference():
    from maeb.benchmarks.lite.check import compare
    from tests.test_lite_check import result, write

    for bad in ("wide", -0.1, float("nan"), 1e309):
        with tempfile.TemporaryDirectory() as tmp:
            ref, run = Path(tmp) / "ref", Path(tmp) / "run"
            data = result("Banded", 0.9, band=0.02)
            data["maeb"]["stability"]["band"] = bad
            write(ref, "m/a", data)
            write(run, "m/a", result("Banded", 0.9, band=0.02))
            [cell] = compare(ref, run)
        expect(not cell.agrees and "maeb.stability.band" in cell.cause, "WRONG", f"band {bad!r}: {cell.cause or 'agrees'}")


@case
def qa_main_score_checked_when_parsed():
    from maeb.spec.taskspec import parse_spec

    raw = {"name": "Q", "type": "qa", "main_score": "date_score", "data": {"source": "audiofolder", "path": str(ROOT)}}
    one_line_error(lambda: parse_spec(raw, "probe spec", ROOT), "main_score 'date_score' is not a metric of qa")


@case
def skipped_clips_with_identical_bytes():
    from maeb.run.task import evaluate_task
    from tests.test_engine import bad_folder, make_embedder, spec_for

    with tempfile.TemporaryDirectory() as tmp:
        folder = bad_folder(Path(tmp))
        (folder / "audio" / "low_1.wav").write_bytes(b"")
        emb = make_embedder(Path(tmp), on_bad_audio="skip")
        evaluate_task(spec_for(folder, "clustering", data={"eval_splits": ["all"]}), emb)
        counted = emb.stats.as_dict()["skipped_clips"]
    expect(counted == 3, "WRONG", f"{counted} skipped clips counted for 3 unusable rows")


def main() -> int:
    return run_cases(CASES, __doc__ or "")


if __name__ == "__main__":
    raise SystemExit(main())
