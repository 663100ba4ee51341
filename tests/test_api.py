"""The Python API as the README shows it: a model object the user built, a few tasks, typed
results; files only when asked; contracts checked when the model loads; progress in a log."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

import maeb
from maeb.core.errors import MaebError, ModelError
from maeb.core.progress import Progress
from maeb.mock import SpectralEncoder

from .test_cli import write_model, write_task


class BandEnergy:
    """What a user writes in a notebook: the protocol members and nothing of maeb's."""

    name = "me/band-energy"
    sample_rate = 16000
    max_seconds = 10.0
    min_samples = 0
    batching = "padded"

    def config(self):
        return {"bands": 16}

    def embed_audio(self, clips):
        return SpectralEncoder().embed_audio(clips)


def _files(root):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_evaluate_an_encoder_object_writes_nothing_unless_asked(tmp_path, tone_folder):
    tasks = [
        write_task(tmp_path, tone_folder, "ToneClusters"),
        write_task(tmp_path, tone_folder, "ToneClasses", "classification"),
    ]
    before = _files(tmp_path)
    results = maeb.evaluate(BandEnergy(), tasks, cache_dir=tmp_path / "cache", progress=False)
    assert [r.task for r in results] == ["ToneClusters", "ToneClasses"]
    assert [r.model for r in results] == ["me/band-energy"] * 2
    assert results[0].main_score == results[0].scores["test"][0]["v_measure"] > 0.9
    assert results[1].main_score == results[1].scores["test"][0]["accuracy"] == 1.0
    assert results[0].info["protocol"]["name"] == "mteb-2.26" and results[0].path is None
    assert results[0].payload["task_name"] == "ToneClusters"
    written = [f for f in _files(tmp_path) if f not in before]
    assert written and all(f.startswith("cache/") for f in written)  # only the embedding cache


def test_evaluate_writes_mteb_layout_and_reads_it_back(tmp_path, tone_folder):
    task = write_task(tmp_path, tone_folder, "ToneClusters")
    out = tmp_path / "res"
    first = maeb.evaluate(BandEnergy(), task, output_dir=out, cache_dir=tmp_path / "cache", progress=False)
    path = first[0].path
    assert path == out / "me__band-energy" / "local" / "ToneClusters.json"
    assert json.loads(path.read_text())["scores"] == first[0].scores
    again = maeb.evaluate(BandEnergy(), task, output_dir=out, cache_dir=tmp_path / "cache", progress=False)
    assert again[0].scores == first[0].scores and again[0].path == path  # read, not rerun


@pytest.mark.slow
def test_models_and_tasks_by_name_file_and_object(tmp_path, tone_folder):
    entry = write_model(tmp_path)
    meta = maeb.get_model(entry)
    assert meta.name and meta.family == "mock-spectral"
    task = write_task(tmp_path, tone_folder, "ToneClusters")
    spec = maeb.get_tasks(task)[0]
    by_meta = maeb.evaluate(meta, [spec], cache_dir=tmp_path / "cache", progress=False)
    by_file = maeb.evaluate(str(entry), str(task), cache_dir=tmp_path / "cache", progress=False)
    assert by_meta[0].scores == by_file[0].scores


def test_benchmarks_and_filters():
    bench = maeb.get_benchmark("MAEB")
    assert len(maeb.get_tasks(bench)) == 30 == len(maeb.get_tasks("MAEB"))
    clustering = maeb.get_tasks("MAEB", types=["AudioClustering"])
    assert clustering and {t.type for t in clustering} == {"clustering"}
    assert {t.name for t in maeb.get_tasks("MAEB", types=["clustering"])} == {t.name for t in clustering}
    english = maeb.get_tasks("MAEB(extended)", languages=["eng"])
    assert english and len(english) < 89
    assert all(t.data.eval_splits == ["validation"] for t in maeb.get_tasks("MAEB", eval_splits=["validation"]))
    with pytest.raises(MaebError, match="unknown task"):
        maeb.get_tasks("NoSuchTask")


def test_a_model_without_a_protocol_member_fails_on_load(tmp_path, tone_folder):
    class Forgetful(BandEnergy):
        batching = property(lambda self: (_ for _ in ()).throw(AttributeError("batching")))

    task = write_task(tmp_path, tone_folder, "ToneClusters")
    with pytest.raises(ModelError, match=r"Forgetful has embed_audio\(\) \(AudioEncoder\) but no 'batching'"):
        maeb.evaluate(Forgetful(), task, cache_dir=tmp_path / "cache", progress=False)

    class Nothing:
        def config(self):
            return {}

    with pytest.raises(ModelError, match="implements none of the protocols AudioEncoder"):
        maeb.evaluate(Nothing(), task, cache_dir=tmp_path / "cache", progress=False)


def test_a_task_the_model_cannot_run_is_an_error_before_any_work(tmp_path, tone_folder):
    clusters = write_task(tmp_path, tone_folder, "ToneClusters")
    zeroshot = tmp_path / "Zs.toml"
    zeroshot.write_text(
        f'name = "ToneZeroshot"\ntype = "zeroshot"\n[data]\nsource = "audiofolder"\npath = "{tone_folder}"\n'
        'eval_splits = ["test"]\n[data.split_by]\ncolumn = "split"\n[protocol]\ntemplate = "tone {label}"\n'
    )
    calls = []

    class Counting(BandEnergy):
        def embed_audio(self, clips):
            calls.append(len(clips))
            return super().embed_audio(clips)

    with pytest.raises(ModelError, match=r"cannot run ToneZeroshot \(needs text\); nothing was evaluated"):
        maeb.evaluate(Counting(), [clusters, zeroshot], cache_dir=tmp_path / "cache", progress=False)
    assert calls == []
    loose = maeb.evaluate(BandEnergy(), [clusters, zeroshot], cache_dir=tmp_path / "cache", progress=False, strict=False)
    assert [r.task for r in loose] == ["ToneClusters"]


def test_progress_lines_in_a_log(tmp_path, tone_folder):
    """Not a terminal: a bar prints rate-limited lines, and its end (interval 0 here: every step)."""
    log = io.StringIO()
    task = write_task(tmp_path, tone_folder, "ToneClusters")
    maeb.evaluate(BandEnergy(), task, cache_dir=tmp_path / "cache", progress=Progress(None, interval=0.0, stream=log))
    lines = log.getvalue().splitlines()
    assert any("embed" in line and "/9 clips" in line and line.endswith("done") for line in lines), lines
    assert Progress(None, stream=io.StringIO()).mode == "lines"
    quiet = io.StringIO()
    progress = Progress(None, interval=3600, stream=quiet)
    progress.bar(100, "first").close()
    assert quiet.getvalue().splitlines() == ["first: 0/100 clips (0%)", "first: 0/100 clips (0%), done"]  # said at once
    bar = progress.bar(100, "slow")
    for _ in range(100):
        bar.update()
    bar.close()
    assert len(quiet.getvalue().splitlines()) == 2  # nothing within the interval, and a short bar's end is no news


def test_cache_dir_reaches_the_data_layer(tmp_path, monkeypatch):
    """A caller's cache_dir, not an environment variable, decides where data is unpacked."""
    monkeypatch.delenv("MAEB_CACHE_DIR", raising=False)
    from maeb.core.context import RunContext
    from maeb.spec.loader import source_of

    spec = maeb.get_tasks("LiteSpokenDigits")[0]
    ctx = RunContext(cache_dir=tmp_path / "c", lite_dir=tmp_path / "lite")
    src = source_of(spec, ctx)
    assert src.location.startswith(str(tmp_path / "lite")) and src.cache_dir == tmp_path / "c"
    monkeypatch.delenv("MMAG_LITE_DIR", raising=False)
    assert ctx.variables() == {"MAEB_LITE_DIR": str(tmp_path / "lite"), "MMAG_LITE_DIR": str(tmp_path / "c" / "mmag-lite")}
    default = RunContext(cache_dir=tmp_path / "c").variables()["MAEB_LITE_DIR"]
    assert default.startswith(str(tmp_path / "c"))


@pytest.mark.slow
def test_vectors_match_the_registered_family(tmp_path, tone_folder):
    """An object and the registered entry of the same encoder score alike."""
    task = write_task(tmp_path, tone_folder, "ToneClusters")
    obj = maeb.evaluate(SpectralEncoder(), task, cache_dir=tmp_path / "c1", progress=False, name="x/spectral")
    reg = maeb.evaluate(write_model(tmp_path), task, cache_dir=tmp_path / "c2", progress=False)
    assert np.isclose(obj[0].main_score, reg[0].main_score)


def test_each_protocol_names_its_missing_member(tmp_path, tone_folder):
    from maeb.encoders import ModelMeta, check_encoder

    meta = ModelMeta(name="me/x", family="x", revision="1")

    class Writer:
        def config(self):
            return {}

        def generate(self, clips, prompts, settings):
            return [""] * len(clips)

    with pytest.raises(ModelError, match=r"Writer has generate\(\) \(TextGenerator\) but no 'sample_rate'"):
        check_encoder(meta, Writer())

    class Texts:
        def embed_text(self, texts):
            return np.zeros((len(texts), 4), np.float32)

    with pytest.raises(ModelError, match=r"Texts has embed_text\(\) \(TextEncoder\) but no 'config'"):
        check_encoder(meta, Texts())

    class OddRate(BandEnergy):
        sample_rate = 16000.0

    with pytest.raises(ModelError, match="sample_rate must be a positive integer, got 16000.0"):
        check_encoder(meta, OddRate())
    check_encoder(meta, BandEnergy())  # the README's example satisfies AudioEncoder


def test_evaluate_takes_long_audio_and_duration_buckets(tmp_path, tone_folder):
    task = write_task(tmp_path, tone_folder, "ToneClasses", "classification")
    plain = maeb.evaluate(BandEnergy(), [task], cache_dir=tmp_path / "cache", progress=False)[0]
    windowed = maeb.evaluate(
        BandEnergy(), [task], cache_dir=tmp_path / "cache", progress=False, long_audio="max", duration_buckets=[0.9]
    )[0]
    assert windowed.info["window"] == {"pooling": "max", "seconds": 10.0, "hop": 10.0, "last_window": "ends at the clip's end"}
    assert windowed.main_score == plain.main_score  # every tone is shorter than one window: the same vectors
    rows = windowed.info["evaluation"]["test"]["default"]["duration_buckets"]["rows"]
    assert [r["bucket"] for r in rows] == ["<0.9 s", ">=0.9 s"]
    with pytest.raises(MaebError, match="pooling must be one of"):
        maeb.evaluate(BandEnergy(), [task], cache_dir=tmp_path / "cache", progress=False, long_audio="median")
