"""Cases a user found confusing, each with the line that now says what happens: what the generated-audio
hashes protect against, LiteMixtureTags' category, relative folders, judge settings, `python -m maeb.benchmarks.lite`,
`list models` without a package, the Python API's skipped tasks, `lite --check` on a broken reference,
a QA spec's main score, skipped-clip counts."""

from __future__ import annotations

import json
import sys

import pytest

from maeb.core.errors import ModelError
from maeb.encoders.family import Family, register_family

# item 13: what the generated-audio hashes protect against, said plainly


def test_the_docs_say_what_the_generated_audio_check_does_and_does_not_protect_against():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "generative.md").read_text(encoding="utf-8")
    section = text.split("### What the generated-audio check protects against", 1)[1].split("\n#", 1)[0]
    assert "content_hashes.jsonl" in section and "catches accidents" in section
    assert "does not protect against anyone who can write to the" in section


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


@pytest.mark.parametrize(
    ("module", "command"),
    [
        ("maeb.benchmarks.lite", "python -m maeb lite"),
        ("maeb.benchmarks.robust", "python -m maeb robust"),
        ("maeb.analysis.durations", "python -m maeb durations"),
    ],
)
def test_python_m_of_a_package_says_which_command_in_one_line(tmp_path, module, command):
    """Modules that were commands once (through maeb 0.3.x) name the subcommand that runs them."""
    import subprocess

    done = subprocess.run([sys.executable, "-m", module], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and command in lines[0], lines


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
