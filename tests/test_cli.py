"""The command line as a user meets it: listing, unknown names, runs, result files, resuming."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from maeb.cli.commands import main

# their specs and entries name modules of their own (module:Class), which maeb imports only when allowed
pytestmark = pytest.mark.usefixtures("allow_code")

MOCK_MODEL = """
[[model]]
name = "test/spectral"
family = "{family}"
revision = "r1"
embed_dim = 16
modalities = ["audio", "text"]
license = "mit"
"""


def write_model(tmp_path: Path, family: str = "mock-spectral") -> Path:
    path = tmp_path / "model.toml"
    path.write_text(MOCK_MODEL.format(family=family))
    return path


def write_task(tmp_path: Path, folder: Path, name: str, kind: str = "clustering") -> Path:
    """A task over the 9 test clips of the tone folder."""
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\ntype = "{kind}"\nlanguages = ["zxx-Zxxx"]\n'
        f'[data]\nsource = "audiofolder"\npath = "{folder}"\neval_splits = ["test"]\n'
        '[data.split_by]\ncolumn = "split"\n'
    )
    return path


def run_args(tmp_path: Path, model: Path, *tasks: Path, extra: tuple[str, ...] = ()) -> list[str]:
    """`maeb run` of these tasks into tmp_path/res with the cache in tmp_path/cache."""
    paths = [str(t) for t in tasks]
    return [
        "run",
        "--model",
        str(model),
        "--tasks",
        *paths,
        "--output-dir",
        str(tmp_path / "res"),
        "--cache-dir",
        str(tmp_path / "cache"),
        *extra,
        "--quiet",
    ]


def maeb(*args, env=None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "maeb", *args], capture_output=True, text=True, env=env, **kwargs)


def test_list_commands():
    out = maeb("list", "models")
    assert out.returncode == 0 and "maeb/mfcc-stats" in out.stdout and "openai/whisper-tiny.en" in out.stdout
    rows = json.loads(maeb("list", "models", "--json").stdout)
    assert {"name", "family", "revision", "embed_dim", "modalities", "license"} <= set(rows[0])
    assert maeb("list", "benchmarks").returncode == 0
    assert maeb("list", "tasks").returncode == 0


def test_unknown_names_exit_2_with_suggestions(tmp_path, capsys):
    assert main(["run", "--model", "whisper-tiny.enn", "--tasks", "x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "did you mean whisper-tiny.en" in err[0]
    model = write_model(tmp_path)
    assert main(["run", "--model", str(model), "--tasks", "NoSuchTask"]) == 2
    assert "unknown task 'NoSuchTask'" in capsys.readouterr().err
    assert main(["run", "--model", str(model), "--tasks", str(tmp_path / "missing.toml")]) == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.slow
def test_run_writes_mteb_layout_and_resumes(tmp_path, tone_folder, capsys):
    model = write_model(tmp_path)
    task = write_task(tmp_path, tone_folder, "ToneClusters")
    args = run_args(tmp_path, model, task)
    assert main(args) == 0
    folder = tmp_path / "res" / "test__spectral" / "r1"
    result = json.loads((folder / "ToneClusters.json").read_text())
    assert result["task_name"] == "ToneClusters" and result["dataset_revision"] == "local"
    entry = result["scores"]["test"][0]
    assert entry["main_score"] == entry["v_measure"] and entry["hf_subset"] == "default" and entry["languages"] == ["zxx-Zxxx"]
    assert result["maeb"]["length_policy"]["sample_rate"] == 16000 and result["maeb"]["length_policy"]["max_seconds"] == 30.0
    assert json.loads((folder / "model_meta.json").read_text())["name"] == "test/spectral"
    capsys.readouterr()
    assert main(args) == 0
    assert "already done" in capsys.readouterr().err
    assert main(args + ["--overwrite"]) == 0
    assert "0 clips embedded, 9 from cache" in capsys.readouterr().err


def test_results_load_in_mteb(tmp_path, tone_folder):
    mteb = pytest.importorskip("mteb")
    model = write_model(tmp_path)
    task = write_task(tmp_path, tone_folder, "ToneClusters")
    assert main(run_args(tmp_path, model, task)) == 0
    loaded = mteb.TaskResult.from_disk(tmp_path / "res" / "test__spectral" / "r1" / "ToneClusters.json")
    assert loaded.task_name == "ToneClusters"
    assert loaded.scores["test"][0]["main_score"] == pytest.approx(loaded.scores["test"][0]["v_measure"])


SLOW_FAMILY = """
import time
from maeb.mock import SpectralEncoder


class Slow(SpectralEncoder):
    def embed_audio(self, clips):
        time.sleep(0.25)
        return super().embed_audio(clips)
"""


@pytest.mark.slow
def test_killed_run_resumes_without_redoing_work(tmp_path, tone_folder):
    (tmp_path / "slowfamily.py").write_text(SLOW_FAMILY)
    model = write_model(tmp_path, family="slowfamily:Slow")
    first = write_task(tmp_path, tone_folder, "First")
    second = tmp_path / "Second.toml"
    second.write_text(  # all 36 clips, cross-validated
        f'name = "Second"\ntype = "classification"\n[data]\nsource = "audiofolder"\npath = "{tone_folder}"\n'
        'eval_splits = ["all"]\n[protocol]\ncross_validation = true\n'
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    res = tmp_path / "res"
    args = run_args(tmp_path, model, first, second, extra=("--batch-size", "1"))
    proc = subprocess.Popen([sys.executable, "-m", "maeb", *args], env=env, stderr=subprocess.PIPE, text=True)
    done = res / "test__spectral" / "r1" / "First.json"
    deadline = time.time() + 120
    while not done.exists() and time.time() < deadline:
        time.sleep(0.05)
    assert done.exists()
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    assert not (res / "test__spectral" / "r1" / "Second.json").exists()
    assert not list((res / "test__spectral" / "r1").glob(".*.tmp"))
    again = maeb(*args, env=env)
    assert again.returncode == 0, again.stderr
    assert "First: already done" in again.stderr
    # the test clips were embedded for First; the second task (all 36 clips) reuses those 9
    assert "27 clips embedded, 9 from cache" in again.stderr


@pytest.mark.slow
def test_mteb_style_flags(tmp_path, tone_folder, capsys):
    """-m, -t, --output-folder, --model-revision, --task-types, -b and --verbose, as mteb's users type them."""
    model = write_model(tmp_path)
    clusters = write_task(tmp_path, tone_folder, "ToneClusters")
    classes = write_task(tmp_path, tone_folder, "ToneClasses", "classification")
    args = ["run", "-m", str(model), "-t", str(clusters), str(classes), "--output-folder", str(tmp_path / "out")]
    args += ["--cache-dir", str(tmp_path / "cache"), "--task-types", "AudioClustering", "--quiet", "--verbose"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "embedding cache" in err and "ToneClusters: loaded default/test" in err  # --verbose's notices
    assert sorted(p.name for p in (tmp_path / "out" / "test__spectral" / "r1").iterdir()) == [
        "ToneClusters.json",
        "model_meta.json",
        "run_settings.jsonl",
    ]
    assert main(args[:-2] + ["--model-revision", "r2", "--quiet"]) == 0
    assert (tmp_path / "out" / "test__spectral" / "r2" / "ToneClusters.json").exists()
    assert main(["run", "-m", "mfcc", "-b", "MAEB", "--task-types", "clustering", "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    rows = [line for line in lines if not line.startswith(("total", "long clips"))]
    assert rows and all("AudioClustering" in line for line in rows)
    assert main(["run", "-m", "mfcc", "-t", "BirdCLEF", "--long-audio", "max", "--dry-run"]) == 0
    assert "long clips (the catalog's longest): BirdCLEF 491 s; window policy max:window=native" in capsys.readouterr().out


def test_named_task_the_model_cannot_run_is_one_error(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", "-m", "mfcc", "-t", "CREMADPairClassification", "ESC50_Zeroshot", "--output-folder", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        "maeb: error: model 'maeb/mfcc-stats' (audio+frames) cannot run ESC50_Zeroshot (needs text); "
    )
    assert not out.exists()


def test_maeb_lite_is_built_on_first_use_only_where_maeb_owns_the_folder(tmp_path, monkeypatch):
    import maeb.benchmarks.lite.build as lite_build
    from maeb.benchmarks.offline import prepare as prepare_offline_data
    from maeb.core.context import RunContext
    from maeb.spec import catalog

    built = []
    monkeypatch.setattr(lite_build, "build", lambda root, log=None, **_: built.append(Path(root)))
    specs = [catalog.find_task("LiteEvents")]
    monkeypatch.setenv("MAEB_LITE_DIR", str(tmp_path / "ignored"))  # read by the command line and evaluate(), not here
    prepare_offline_data(specs, RunContext(cache_dir=tmp_path / "cache"), print)
    assert built == [tmp_path / "cache" / "maeb-lite"]  # the default place, under the cache
    prepare_offline_data(specs, RunContext(cache_dir=tmp_path / "cache", lite_dir=tmp_path / "new"), print)
    assert built[-1] == tmp_path / "new"  # a named folder that does not exist yet
    (tmp_path / "mine").mkdir()
    prepare_offline_data(specs, RunContext(cache_dir=tmp_path / "cache", lite_dir=tmp_path / "mine"), print)
    prepare_offline_data([catalog.find_task("ESC50Clustering")], RunContext(cache_dir=tmp_path / "c2"), print)
    assert len(built) == 2  # an existing named folder and a hub task build nothing
