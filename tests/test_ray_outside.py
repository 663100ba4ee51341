"""Outside modules under Ray (`--ray`): a task type and a model family from the user's own module
(`type = "module:Class"`, `family = "module:Class"`), importable on the driver from a folder of
its own, run on a local Ray instance as in a plain run: the driver sends the folder to the
workers, which build the encoder from it (task types evaluate on the driver)."""

from __future__ import annotations

import textwrap

import pytest

from maeb import tasktypes
from maeb.encoders import ModelMeta
from maeb.run.distributed import outside_paths
from maeb.run.options import RunOptions
from maeb.run.runner import run
from maeb.spec.taskspec import load_spec

from .conftest import one_ray_cluster
from .test_tasktypes_outside import OUTSIDE, nearest_mean_accuracy, write_spec

# their specs and entries name modules of their own (module:Class), which maeb imports only when allowed
pytestmark = pytest.mark.usefixtures("allow_code")

ENCODER = '''
from maeb.mock import SpectralEncoder


class OutsideSpectral(SpectralEncoder):
    """The spectral mock, built from a module outside the package."""

    def __init__(self, meta, device="cpu"):
        super().__init__()
'''


@pytest.fixture
def modules(tmp_path, monkeypatch):
    """A folder on the driver's sys.path only (not the workers' current folder) with the user's
    task type module and, in a package, their encoder."""
    folder = tmp_path / "user code"
    (folder / "userpkg").mkdir(parents=True)
    (folder / "ray_outside_types.py").write_text(textwrap.dedent(OUTSIDE))
    (folder / "userpkg" / "__init__.py").write_text("")
    (folder / "userpkg" / "encoders.py").write_text(textwrap.dedent(ENCODER))
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setattr(tasktypes, "_LOADED", dict(tasktypes._LOADED))
    return folder


def test_the_folders_of_outside_modules_are_found(modules, tone_folder, tmp_path):
    spec = load_spec(write_spec(tmp_path, tone_folder, "ray_outside_types:NearestCentroid"))
    meta = ModelMeta(name="me/outside", family="userpkg.encoders:OutsideSpectral", revision="1", modalities=("audio",))
    assert outside_paths(meta, [spec]) == (str(modules.resolve()),)  # one folder holds both
    inside = ModelMeta(name="test/spectral", family="mock-spectral", revision="1", modalities=("audio",))
    assert outside_paths(inside, []) == ()  # a registered family needs nothing sent
    package_type = ModelMeta(name="x", family="maeb.mock:SpectralEncoder", revision="1", modalities=("audio",))
    assert outside_paths(package_type, []) == ()


@pytest.mark.slow  # a local Ray instance: about 15 s to start, 10 s to run
def test_an_outside_task_type_and_family_run_on_ray_as_in_a_plain_run(
    modules, tone_folder, tmp_path, tmp_path_factory, worker_id
):
    pytest.importorskip("ray")
    from maeb.run.distributed import run_on_ray

    spec = load_spec(write_spec(tmp_path, tone_folder, "ray_outside_types:NearestCentroid", label="speaker"))
    meta = ModelMeta(name="me/outside", family="userpkg.encoders:OutsideSpectral", revision="1", modalities=("audio",))

    def options(name):
        return RunOptions(output_dir=tmp_path / name / "res", cache_dir=tmp_path / name / "cache", show_progress=False)

    plain = run(meta, [spec], options("plain"), log=lambda m: None)
    with one_ray_cluster(tmp_path_factory, worker_id):
        on_ray = run_on_ray(meta, [spec], options("ray"), workers=1, log=lambda m: None)
    assert on_ray.failed == {} and [r.task for r in on_ray.results] == ["ToneCentroids"]
    expected, _ = nearest_mean_accuracy(tone_folder, "speaker")  # from the files alone
    assert on_ray.results[0].main_score == pytest.approx(expected, abs=1e-6)
    assert on_ray.results[0].scores == plain.results[0].scores
    assert on_ray.stats.clips_embedded == plain.stats.clips_embedded > 0  # the workers embedded them
