"""What a user reads in results and boards: clustering's bootstrap count under its documented name
(older files read the same), counts in the singular where there is one, and experiment rows that are said to be experiments (or left out with --plain)."""

from __future__ import annotations

import json
import shutil

import maeb
from maeb.analysis.leaderboard import load_board
from maeb.analysis.report import render
from maeb.cli.commands import main
from maeb.run.summary import TaskResult

from .test_api import BandEnergy
from .test_cli import write_task


def _fast_clustering(tmp_path, folder, name="ToneClusters"):
    path = write_task(tmp_path, folder, name)
    path.write_text(path.read_text() + "[protocol]\nn_bootstrap = 2\nmax_documents_per_cluster = 32\n")
    return path


def test_results_name_the_bootstrap_count_n_bootstrap_and_old_files_read_the_same(tmp_path, tone_folder):
    out = tmp_path / "res"
    [result] = maeb.evaluate(
        BandEnergy(), _fast_clustering(tmp_path, tone_folder), output_dir=out, cache_dir=tmp_path / "c", progress=False
    )
    written = json.loads(result.path.read_text())["maeb"]["parameters"]
    assert written["n_bootstrap"] == 2 and "n_clusters" not in written
    assert result.parameters["n_bootstrap"] == 2
    # a file written before the rename (parameters under mteb's n_clusters) reads the same
    old = json.loads(result.path.read_text())
    old["maeb"]["parameters"] = {("n_clusters" if k == "n_bootstrap" else k): v for k, v in written.items()}
    result.path.write_text(json.dumps(old))
    assert TaskResult.from_file(result.path, "me/band-energy").parameters == result.parameters
    # the run identity still hashes the protocol under mteb's key: the old file is this run's result
    again = maeb.evaluate(
        BandEnergy(), _fast_clustering(tmp_path, tone_folder), output_dir=out, cache_dir=tmp_path / "c", progress=False
    )
    assert again[0].payload["maeb"]["parameters"] == old["maeb"]["parameters"]  # read back, not rerun


def test_one_task_is_one_task(tmp_path, tone_folder, capsys):
    model = tmp_path / "m.toml"
    model.write_text('[[model]]\nname = "test/spectral"\nfamily = "mock-spectral"\nrevision = "r1"\n')
    task = _fast_clustering(tmp_path, tone_folder)
    out = tmp_path / "res"
    assert (
        main(["run", "-m", str(model), "-t", str(task), "--output-dir", str(out), "--cache-dir", str(tmp_path / "c"), "--quiet"])
        == 0
    )
    summary = capsys.readouterr().err.splitlines()[-1]
    assert summary.startswith("test/spectral: 1 task evaluated; 0 already done; 9 clips embedded"), summary
    assert main(["leaderboard", "--results", str(out)]) == 0
    assert "1 model, 1 task;" in capsys.readouterr().out


def test_experiment_rows_are_named_as_such_or_left_out(tmp_path, tone_folder, capsys):
    out = tmp_path / "res"
    tasks = [_fast_clustering(tmp_path, tone_folder, "TaskA"), _fast_clustering(tmp_path, tone_folder, "TaskB")]
    results = maeb.evaluate(BandEnergy(), tasks, output_dir=out, cache_dir=tmp_path / "c", progress=False)
    folder = results[0].path.parent / "experiments" / "perturb_noise_snr=5"
    folder.mkdir(parents=True)
    shutil.copy(results[0].path, folder / "TaskA.json")  # an experiment that ran one of the two tasks
    shutil.copy(results[0].path.parent / "model_meta.json", folder / "model_meta.json")  # as a run writes it
    board, _ = load_board([out])
    assert [r.model for r in board.rows] == ["me/band-energy", "me/band-energy [perturb_noise_snr=5]"]
    assert board.rows[1].mean_task is None  # it lacks TaskB
    [note] = [n for n in board.notes if "experiment" in n]
    assert (
        note.startswith("1 row is an experiment (runs under non-default settings")
        and "me/band-energy [perturb_noise_snr=5]" in note
        and "--plain" in note
    )
    md = render(board, "md")
    assert "1 row named model [setting] is an experiment" in md and "--plain" in md
    assert main(["leaderboard", "--results", str(out), "--plain"]) == 0
    plain = capsys.readouterr()
    assert "[perturb_noise_snr=5]" not in plain.out and "1 model, 2 tasks" in plain.out
    assert "--plain: 1 experiment row left out" in plain.err
