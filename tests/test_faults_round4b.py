"""Issue 33 items 8-16 (reliability and security round 4): each case as the probe found it."""

from __future__ import annotations

import json
import sys

import pytest

from maeb.core.errors import MaebError, ModelError
from maeb.encoders import ModelMeta, load_encoder, resolve_factory
from maeb.encoders.family import FAMILY_REGISTRY, Family, register_family


@pytest.fixture
def forget_family():
    names: list[str] = []
    yield names.append
    for name in names:
        FAMILY_REGISTRY.pop(name, None)


# item 8: register_family


def test_a_misspelt_rule_key_is_refused_naming_it_and_the_valid_ones(forget_family):
    forget_family("x-misspelt")
    with pytest.raises(ModelError, match=r"unknown key 'max_secnds'.*valid keys: .*max_seconds"):
        register_family(Family("x-misspelt", "x_mod:Enc", rules={"mteb-2.26": {"*": {"max_secnds": 4.0}}}))
    assert "x-misspelt" not in FAMILY_REGISTRY
    # a family's own key is accepted once declared
    register_family(Family("x-misspelt", "x_mod:Enc", rule_keys=("hop",), rules={"mteb-2.26": {"*": {"hop": 4}}}))


def test_rules_for_an_unknown_protocol_are_refused(forget_family):
    forget_family("x-proto")
    with pytest.raises(ModelError, match=r"unknown protocol rule set 'mteb-2.25'; known: mteb-2.26, paper"):
        register_family(Family("x-proto", "x_mod:Enc", rules={"mteb-2.25": {"*": {"max_seconds": 4.0}}}))


def test_an_outside_family_requires_is_enforced_before_its_code_runs(forget_family, tmp_path, monkeypatch):
    forget_family("x-needs")
    (tmp_path / "x_needs_mod.py").write_text("raise SystemExit('must not be imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    register_family(Family("x-needs", "x_needs_mod:Enc", requires=("surely-not-installed-pkg>=1",)))
    with pytest.raises(MaebError, match=r"requires surely-not-installed-pkg>=1.*pip install 'surely-not-installed-pkg>=1'"):
        resolve_factory("x-needs")
    assert "x_needs_mod" not in sys.modules


def test_a_users_missing_module_is_named_as_theirs_not_maebs_extras(forget_family, tmp_path, monkeypatch):
    forget_family("x-gone")
    forget_family("x-dep")
    register_family(Family("x-gone", "my_gone_package.enc:Enc"))
    with pytest.raises(ModelError) as told:
        resolve_factory("x-gone")
    assert "my_gone_package.enc not found on sys.path" in str(told.value) and "extras" not in str(told.value)
    (tmp_path / "x_dep_mod.py").write_text("import surely_not_installed_module\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    register_family(Family("x-dep", "x_dep_mod:Enc"))
    meta = ModelMeta(name="me/dep", family="x-dep", revision="none")
    with pytest.raises(ModelError) as told:
        load_encoder(meta)
    line = str(told.value)
    assert "x_dep_mod imports surely_not_installed_module" in line and "extras" not in line


# item 9: board escaping


def _board_named(name: str):
    from maeb.analysis.leaderboard import Board, Row, TaskInfo

    task = TaskInfo("T0", "AudioClassification")
    return Board(None, [task], [Row(name, ["r"], rank=1, mean_task=0.5, n_tasks=1, tasks={"T0": 0.5})])


def test_the_html_board_embeds_json_with_every_lt_escaped():
    import json
    import re

    from maeb.analysis.report import render

    name = "x/<!--<script>alert(1)</script>"
    page = render(_board_named(name), "html")
    [data] = re.findall(r'<script type="application/json" id="leaderboard-data">(.*?)</script>', page, re.S)
    assert "<" not in data and "\\u003c!--" in data
    assert json.loads(data)["models"][0]["model"] == name  # the same JSON for readers of the file


def test_the_markdown_board_escapes_raw_html_and_pipes_in_names():
    from maeb.analysis.report import render

    text = render(_board_named("x/<img src=1 onerror=alert(1)>|y"), "markdown")
    assert "<img" not in text and "&lt;img src=1 onerror=alert(1)&gt;\\|y" in text


def test_csv_cells_that_a_spreadsheet_would_evaluate_get_a_leading_apostrophe():
    import csv
    import io

    from maeb.analysis.report import render

    for name in ('=HYPERLINK("http://x")', "+1", "-cmd", "@SUM(A1)"):
        rows = list(csv.reader(io.StringIO(render(_board_named(name), "csv"))))
        assert rows[1][0] == "'" + name and float(rows[1][2]) == 0.5
        by_task = list(csv.reader(io.StringIO(render(_board_named(name), "csv", per_task="rows"))))
        assert by_task[0][4] == "'" + name


# item 10: secrets

SECRET_URL = "http://alice:hunter2pass@127.0.0.1:9/v1?api_key=SEKRET123&region=eu"


def test_credentials_in_an_endpoint_url_stay_out_of_identities_results_and_error_lines():
    from maeb.core.identity import declared_identity, experiment_settings, redact_url
    from maeb.encoders.chat import ChatError, chat

    assert redact_url(SECRET_URL) == "http://127.0.0.1:9/v1?api_key=REDACTED&region=eu"
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"  # unchanged: old cache keys stay valid
    meta = ModelMeta(name="me/api", family="gen-openai-chat", revision="none", modalities=("audio", "text"))
    encoder = load_encoder(meta, base_url=SECRET_URL, model="m", retries=0, budget=2.0, timeout=1.0)
    written = [
        str(encoder.config()),
        str(declared_identity(meta, {"base_url": SECRET_URL}, "mteb-2.26")),
        str(experiment_settings(meta, {"base_url": SECRET_URL}, "mteb-2.26", "mteb-2.26")),
        str(meta.to_mteb({"base_url": SECRET_URL})),
    ]
    with pytest.raises(ChatError) as told:
        chat(encoder.endpoint, [{"role": "user", "content": "hi"}])
    written.append(str(told.value))
    for text in written:
        assert "hunter2pass" not in text and "SEKRET123" not in text and "alice" not in text, text
    assert "127.0.0.1:9" in written[-1]


@pytest.mark.parametrize("pasted", ["sk-proj-abcDEF1234567890abcdef", "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3", "abc def"])
def test_a_key_pasted_as_api_key_env_is_refused_without_repeating_it(pasted):
    from maeb.cli.common import option_pairs

    with pytest.raises(MaebError) as told:
        option_pairs([("api_key_env", pasted)])
    assert pasted not in str(told.value) and "NAME of the environment variable" in str(told.value)
    meta = ModelMeta(name="me/api", family="gen-openai-chat", revision="none", modalities=("audio", "text"))
    with pytest.raises(MaebError, match="looks like a secret key"):
        load_encoder(meta, base_url="http://127.0.0.1:9/v1", api_key_env=pasted)
    assert option_pairs([("api_key_env", "MY_SERVER_KEY")]) == {"api_key_env": "MY_SERVER_KEY"}


# item 11: the commit "main" stood for


def test_main_and_no_revision_resolve_to_the_commit_online_and_from_the_cache_offline(tmp_path, monkeypatch):
    from huggingface_hub import constants

    from maeb.data import hub as maeb_hub
    from maeb.results.write import task_result
    from maeb.spec.taskspec import parse_spec

    from .hub.server import HubServer

    sha = "89abcdef0123456789abcdef0123456789abcdef"
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("---\nconfigs:\n- config_name: default\n  data_files: x.parquet\n---\n")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    with HubServer() as server:
        server.add("dataset", "org/data", sha, repo)
        monkeypatch.setattr(constants, "ENDPOINT", server.endpoint)
        assert maeb_hub.resolved_commit("org/data", "main") == sha
        assert maeb_hub.resolved_commit("org/data", None) == sha
    refs = tmp_path / "hub-cache" / "datasets--org--data" / "refs"
    refs.mkdir(parents=True)
    (refs / "main").write_text(sha)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert maeb_hub.resolved_commit("org/data", "main") == sha  # offline: the ref the download wrote
    assert maeb_hub.resolved_commit(str(repo), None) is None  # a local folder has no commit
    raw = {"name": "T", "type": "classification", "data": {"source": "hub", "path": "org/data", "revision": "main"}}
    spec = parse_spec(raw, "test spec", tmp_path)
    from maeb.run.task import resolved_revision

    assert resolved_revision(spec, {}) == sha  # what the runner puts in the result's data notes
    written = task_result(spec, {}, 0.0, {"data": {"resolved_revision": sha}})
    assert written["dataset_revision"] == sha and task_result(spec, {}, 0.0, {"data": {}})["dataset_revision"] == "main"


# item 12: a transient hub 5xx


class _Answered500(Exception):
    class response:  # noqa: N801  (what huggingface_hub's HTTP errors carry)
        status_code = 500


def _flaky_hub(monkeypatch, failures: int):
    import datasets

    from maeb.data import hub as maeb_hub

    calls, waits = [], []

    def load_dataset(*args, **kwargs):
        calls.append(args)
        if len(calls) <= failures:
            raise _Answered500("500 Server Error: Internal Server Error for url: .../api/datasets/org/data")
        return datasets.Dataset.from_dict({"label": [0, 1]})

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    monkeypatch.setattr(maeb_hub, "prepare", lambda: None)
    monkeypatch.setattr(maeb_hub, "cached_default_config", lambda repo, revision: None)
    monkeypatch.setattr(maeb_hub.time, "sleep", waits.append)
    return calls, waits


def test_a_transient_hub_500_is_retried_with_backoff_and_said(monkeypatch, caplog):
    from maeb.data.sources import load_hub_split

    calls, waits = _flaky_hub(monkeypatch, failures=2)
    with caplog.at_level("WARNING", logger="maeb"):
        table = load_hub_split("org/data", "main", None, "test", ())
    assert len(calls) == 3 and waits == [1.0, 2.0] and table.columns["label"] == [0, 1]
    said = [r.getMessage() for r in caplog.records if "HTTP 500" in r.getMessage()]
    assert said[0] == "org/data@main split test: the hub answered HTTP 500; retrying in 1 s (retry 1 of 4)"


def test_a_hub_that_keeps_answering_500_fails_clearly_not_as_no_hub_access(monkeypatch):
    from maeb.core.errors import DataError
    from maeb.data.sources import load_hub_split

    calls, waits = _flaky_hub(monkeypatch, failures=99)
    with pytest.raises(DataError) as told:
        load_hub_split("org/data", "main", None, "test", ())
    assert len(calls) == 5 and waits == [1.0, 2.0, 4.0, 8.0]
    line = str(told.value)
    assert "answered HTTP 500 for dataset org/data@main on each of 5 tries" in line and "Without hub access" not in line


# item 13: what the generated-audio hashes protect against, said plainly


def test_the_docs_say_what_the_generated_audio_check_does_and_does_not_protect_against():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "generative.md").read_text(encoding="utf-8")
    section = text.split("### What the generated-audio check protects against", 1)[1].split("\n#", 1)[0]
    assert "content_hashes.jsonl" in section and "catches accidents" in section
    assert "does not protect against anyone who can write to the" in section


# item 14: the cache identity keys on the family's declared packages

IDENT_MODULE = '''
import numpy as np


class Plain:
    """A wrapper that lists no `software` of its own."""

    sample_rate = 16000
    max_seconds = 10.0
    batching = "padded"

    def __init__(self, meta, device="cpu"):
        pass

    def config(self):
        return {}

    def embed_audio(self, clips):
        return np.zeros((len(clips), 4), dtype=np.float32)
'''


def test_the_embedding_identity_changes_when_a_declared_package_changes(forget_family, tmp_path, monkeypatch):
    from importlib import metadata

    from maeb.core import identity as ident
    from maeb.encoders import identity

    (tmp_path / "x_ident_mod.py").write_text(IDENT_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    forget_family("x-ident")
    register_family(Family("x-ident", "x_ident_mod:Plain", requires=("packaging>=20",)))
    meta = ModelMeta(name="me/plain", family="x-ident", revision="none")
    encoder = load_encoder(meta)
    before = identity(meta, encoder)
    assert before["software"]["packaging"] == metadata.version("packaging")
    real = metadata.version
    monkeypatch.setattr(ident.metadata, "version", lambda name: "999.0" if name == "packaging" else real(name))
    after = identity(meta, encoder)
    assert after["software"]["packaging"] == "999.0" and after != before


# item 15: LiteMixtureTags is audio-only


def test_lite_mixture_tags_counts_as_audio_only_so_cross_modal_means_hold_no_audio_probe():
    from maeb.analysis.leaderboard import spec_info
    from maeb.spec import catalog

    lite = spec_info(catalog.find_task("LiteMixtureTags"))
    assert lite.group == "audio-only"
    # the MAEB catalog keeps mteb's own label for its multilabel tasks (a2t), so its boards match mteb's
    assert spec_info(catalog.find_task("FSD2019Kaggle")).category == "a2t"
    # the audio probes of MAEB-lite (classification, multilabel) are all in the Audio-Only group
    specs = catalog.benchmark_specs(catalog.find_benchmark("MAEB-lite"))
    probes = [s for s in specs if s.type in ("classification", "multilabel")]
    assert "LiteMixtureTags" in [s.name for s in probes]
    assert [s.name for s in probes if spec_info(s).group != "audio-only"] == []


# item 16: the confusing cases


def test_relative_lite_and_cache_folders_mean_the_current_folder_not_the_spec_files(tmp_path, monkeypatch):
    from pathlib import Path

    from maeb.core.context import RunContext
    from maeb.spec import catalog

    monkeypatch.chdir(tmp_path)
    spec = catalog.find_task("LiteMixtureTags")
    told = RunContext(cache_dir=Path("cache"), lite_dir=Path("lite"))
    assert spec.data.location(told.variables()) == str(tmp_path / "lite" / "mixtures")
    under_cache = RunContext(cache_dir=Path("cache"))  # --cache-dir cache, no --lite-dir
    assert spec.data.location(under_cache.variables()) == str(tmp_path / "cache" / "maeb-lite" / "mixtures")


def test_python_m_maeb_lite_says_which_command_in_one_line(tmp_path):
    import subprocess

    done = subprocess.run([sys.executable, "-m", "maeb.lite"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "python -m maeb lite" in lines[0], lines


def test_judge_concurrency_zero_is_refused():
    from maeb.core.errors import SpecError
    from maeb.run.options import RunOptions, check_options

    with pytest.raises(SpecError, match="judge concurrency must be a whole number of requests, at least 1, not 0"):
        check_options(RunOptions(cache_dir="c", judge_concurrency=0))


def test_a_judge_url_variable_does_not_stop_a_run_that_asks_no_judge(tmp_path, tone_folder, monkeypatch, capsys):
    from maeb.cli.commands import main

    from .test_cli import write_task

    task = write_task(tmp_path, tone_folder, "ToneClusters")
    model = tmp_path / "m.toml"
    model.write_text('[[model]]\nname = "test/spectral"\nfamily = "mock-spectral"\nrevision = "r1"\n')
    monkeypatch.setenv("MAEB_JUDGE_URL", "http://127.0.0.1:9/v1")  # exported for other runs; no model named
    monkeypatch.delenv("MAEB_JUDGE_MODEL", raising=False)
    args = ["run", "-m", str(model), "-t", str(task), "--cache-dir", str(tmp_path / "c"), "--dry-run"]
    assert main(args) == 0
    # typed on the command line, the same mistake is still told
    assert main([*args, "--judge-url", "http://127.0.0.1:9/v1"]) != 0
    assert "--judge-url needs --judge-model" in capsys.readouterr().err


def test_list_models_names_the_missing_package(monkeypatch, capsys):
    from maeb import encoders
    from maeb.cli import listing
    from maeb.cli.commands import main

    monkeypatch.setattr(encoders, "runnable_problems", lambda m: ["missing somepkg (pip install 'maeb[x]')"])
    assert main(["list", "models"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "not runnable here: missing somepkg (pip install 'maeb[x]')" in first
    assert listing.cmd_list  # the listing reads runnable_problems when it runs


def test_the_python_api_says_when_it_skips_a_task(tmp_path, tone_folder):
    import maeb

    from .test_api import BandEnergy

    zeroshot = tmp_path / "Zs.toml"
    zeroshot.write_text(
        f'name = "ToneZeroshot"\ntype = "zeroshot"\n[data]\nsource = "audiofolder"\npath = "{tone_folder}"\n'
        'eval_splits = ["test"]\n[data.split_by]\ncolumn = "split"\n[protocol]\ntemplate = "tone {label}"\n'
    )
    with pytest.warns(UserWarning, match=r"lacks a side .* 1 task needs; skipped: ToneZeroshot"):
        loose = maeb.evaluate(BandEnergy(), zeroshot, cache_dir=tmp_path / "cache", progress=False, strict=False)
    assert list(loose) == [] and loose.skipped == ["ToneZeroshot"]


def test_rules_of_the_wrong_shape_are_refused_in_one_line(forget_family):
    forget_family("x-shape")
    for rules in ({"mteb-2.26": {"*": 4.0}}, {"mteb-2.26": ["max_seconds"]}, ["mteb-2.26"]):
        with pytest.raises(ModelError, match="x-shape.*rules"):
            register_family(Family("x-shape", "x_mod:Enc", rules=rules))


def test_lite_check_says_a_broken_reference_is_broken(tmp_path):
    from maeb.benchmarks.lite.check import compare, report

    from .test_lite_check import result, write

    ref, run = tmp_path / "ref", tmp_path / "run"
    for folder in (ref, run):
        write(folder, "m/a", result("Cut", 0.5))
        write(folder, "m/a", result("Banded", 0.9, band=0.02))
    write(run, "m/a", result("Absent", 0.5))
    cut = ref / "m__a" / "1" / "Cut.json"
    cut.write_text(cut.read_text()[:40])  # a truncated reference file
    banded = ref / "m__a" / "1" / "Banded.json"
    data = json.loads(banded.read_text())
    data["maeb"]["stability"]["band"] = "wide"
    banded.write_text(json.dumps(data))
    cells = {c.task: c for c in compare(ref, run)}
    assert not cells["Cut"].agrees and "Cut.json cannot be read" in cells["Cut"].cause and "restore it" in cells["Cut"].cause
    assert not cells["Banded"].agrees and "maeb.stability.band is 'wide'" in cells["Banded"].cause
    text = report(list(cells.values()), 1e-6)
    assert "in ;" not in text and "main - -> 0.5000; not in the reference" in text


def test_a_qa_spec_with_an_unknown_main_score_is_refused_when_parsed_not_after_the_run(tmp_path):
    from maeb.core.errors import SpecError
    from maeb.spec.taskspec import parse_spec

    def qa(main_score: str, **protocol):
        raw = {"name": "Q", "type": "qa", "main_score": main_score, "data": {"source": "audiofolder", "path": str(tmp_path)}}
        return parse_spec({**raw, "protocol": protocol}, "test spec", tmp_path)

    with pytest.raises(SpecError, match=r"main_score 'date_score_qaa' is not a metric of qa; did you mean date_score_qa"):
        qa("date_score_qaa")
    assert qa("fense_score_qa").main_score == "fense_score_qa"
    assert qa("bleu_4_score_qa", metrics=["bleu"]).main_score == "bleu_4_score_qa"
    assert qa("date_direct_perception").main_score == "date_direct_perception"
    assert qa("date_all", answer_column="a").main_score == "date_all"
    assert qa("date_birds", answer_column="a", category_column="c").main_score == "date_birds"


def test_skipped_clip_counts_count_every_row_with_the_same_bad_bytes(tmp_path):
    from maeb.run.task import evaluate_task

    from .test_engine import bad_folder, make_embedder, spec_for

    folder = bad_folder(tmp_path)
    (folder / "audio" / "low_1.wav").write_bytes(b"")  # the same (empty) bytes as low_0.wav
    spec = spec_for(folder, "clustering", data={"eval_splits": ["all"]})
    emb = make_embedder(tmp_path, on_bad_audio="skip")
    evaluate_task(spec, emb)
    assert set(emb.stats.skipped) == {"audio/low_0.wav", "audio/low_1.wav", "audio/mid_1.wav"}
    assert emb.stats.as_dict()["skipped_clips"] == 3
