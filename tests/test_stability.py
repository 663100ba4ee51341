"""Stability bands (maeb.run.stability): replays perturb the cached vectors and refit the probe with
the base run's draws; an unconverged probe on unnormalised vectors moves, the stable protocol's
does not; the band is a report that changes no score and no identity."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from maeb.encoders import ModelMeta, identity
from maeb.engine.cache import EmbeddingCache
from maeb.engine.embed import Embedder
from maeb.mock import IdentityEncoder, vector_wav, write_hub_repo
from maeb.run.options import RunOptions
from maeb.run.runner import run
from maeb.run.stability import MIN_EXACT, SHARE, measure, noise, per_experiment, replay
from maeb.run.task import evaluate_task
from maeb.spec.loader import load_task
from maeb.spec.taskspec import parse_spec


@pytest.fixture(autouse=True)
def one_blas_thread():
    """Small probe fits run 5x slower with two BLAS threads on a busy machine; the facts below do
    not depend on the thread count."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


META = ModelMeta(name="test/identity", family="mock-identity", revision="1", modalities=("audio",))


def unnormalised(rng, n: int, k: int = 4, dim: int = 16, spread: float = 3.0):
    """Overlapping classes whose features differ in scale by 10,000x around an offset: a
    LogisticRegression with max_iter=100 stops far from its optimum on them (on these, most
    refits on perturbed vectors move the accuracy)."""
    labels = rng.integers(0, k, n)
    x = rng.normal(size=(k, dim))[labels] + spread * rng.normal(size=(n, dim))
    return (x * np.logspace(0, 4, dim) + 300).astype(np.float32), labels


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    rng = np.random.default_rng(0)
    x, y = unnormalised(rng, 160)
    tags = [[str(a), str(b)] for a, b in zip(y, rng.integers(0, 4, len(y)))]
    return write_hub_repo(
        tmp_path_factory.mktemp("stability") / "repo",
        {
            "default": {
                "train": {"audio": [vector_wav(v) for v in x[:100]], "label": y[:100].tolist(), "tags": tags[:100]},
                "test": {"audio": [vector_wav(v) for v in x[100:]], "label": y[100:].tolist(), "tags": tags[100:]},
            }
        },
    )


def spec_of(repo, kind: str, **protocol):
    data = {"source": "hub", "path": str(repo), "eval_splits": ["test"]}
    if protocol.get("cross_validation"):
        data["eval_splits"] = ["train"]
    if kind == "multilabel":
        data["label_column"] = "tags"
    return parse_spec({"name": f"T{kind}", "type": kind, "data": data, "protocol": protocol}, "test spec")


def embedder(tmp_path, protocol: str = "mteb-2.26") -> Embedder:
    encoder = IdentityEncoder()
    return Embedder(META, encoder, EmbeddingCache(tmp_path / "cache", identity(META, encoder)), protocol=protocol)


def test_noise_is_relative_and_the_same_for_the_same_vector():
    x = np.random.default_rng(1).normal(size=(4, 2000)).astype(np.float32) * 1e3
    x[3] = x[0]
    y = noise(x, 1e-5, seed=7)
    relative = (y.astype(np.float64) - x) / x
    assert 0.8e-5 < relative.std() < 1.2e-5 and abs(relative.mean()) < 1e-6
    assert np.array_equal(y[0], y[3])  # a clip used twice is perturbed alike, as a machine would
    assert not np.array_equal(y[0], noise(x, 1e-5, seed=8)[0])
    assert np.array_equal(noise(x, 0.0, seed=7), x)


@pytest.mark.parametrize(
    "kind, protocol",
    [
        ("classification", {"cross_validation": True, "n_splits": 4}),
        ("classification", {"n_experiments": 4}),
        ("multilabel", {"n_experiments": 4}),
    ],
)
def test_an_unperturbed_replay_of_any_block_reproduces_the_base_experiments(repo, tmp_path, kind, protocol):
    """A replay refits a block of the experiments; with eps 0 each refit must equal the base run's
    experiment (the draws, folds and task-wide generators are the base run's)."""
    spec = spec_of(repo, kind, **protocol)
    emb = embedder(tmp_path)
    base = evaluate_task(spec, emb).scores
    data = load_task(spec, emb.ctx)
    split = spec.data.eval_splits[0]
    experiments = per_experiment(base[split][0])
    seen = set()
    for block in range(SHARE):
        scores, picked = replay(spec, data, emb, 0.0, seed=block, block=block)
        index = picked[(split, 0)]
        assert len(index) == max(1, len(experiments) // SHARE)
        assert per_experiment(scores[split][0]) == [experiments[i] for i in index]
        seen.update(index)
    assert len(seen) == SHARE * max(1, len(experiments) // SHARE)  # the blocks rotate


def test_the_unconverged_probe_moves_and_the_stable_protocol_does_not(repo, tmp_path):
    spec = spec_of(repo, "classification", cross_validation=True)
    # 32 replays (the default): 6 once sufficed here, but an unconverged fit moves in only some draws
    mteb = evaluate_task(spec, embedder(tmp_path / "a"), stability_replays=32)
    stable = evaluate_task(spec, embedder(tmp_path / "b", "mteb-2.26-stable"), stability_replays=6)
    assert mteb.stability["refits"] == 32 and stable.stability["refits"] == 6  # 5 folds: one refit per replay
    assert mteb.stability["moved"] > 0 and mteb.stability["band"] > 0.01
    assert mteb.stability["fragile"] is True and stable.stability["fragile"] is False  # beyond one item's share, or not
    assert stable.stability["moved"] == 0 and stable.stability["band"] == 0.0
    # six unmoved samples are no evidence of exactness (two were once taken for it, and another
    # OpenBLAS kernel moved that k-means cell): the band is 0, the cell is not called exact
    assert stable.stability["exact"] is False and "too few to call the score exact" in stable.stability["why"]
    assert stable.scores["train"][0]["accuracy"] != mteb.scores["train"][0]["accuracy"]  # another protocol, other numbers
    assert mteb.stability["main_score"]["min"] <= mteb.scores["train"][0]["accuracy"] <= mteb.stability["main_score"]["max"]


def test_a_cell_is_exact_only_after_min_exact_unmoved_samples(repo, tmp_path):
    spec = spec_of(repo, "classification", cross_validation=True)
    record = evaluate_task(spec, embedder(tmp_path, "mteb-2.26-stable"), stability_replays=MIN_EXACT).stability
    assert record["moved"] == 0 and record["exact"] is True and "why" not in record
    assert record["quantum"] == round(1 / 100, 6)  # one of the 100 training clips the folds evaluate


def test_the_band_is_a_report_not_part_of_the_score_or_identity(repo, tmp_path):
    specs = [spec_of(repo, "classification", n_experiments=4), spec_of(repo, "multilabel", n_experiments=4)]
    files = {}
    for replays in (0, 2):
        cfg = RunOptions(
            output_dir=tmp_path / f"r{replays}", cache_dir=tmp_path / "cache", show_progress=False, stability_replays=replays
        )
        summary = run(META, specs, cfg, encoder=IdentityEncoder())
        files[replays] = {r.task: json.loads(r.path.read_text()) for r in summary.results}
    for task in files[0]:
        a, b = files[0][task], files[2][task]
        assert a["scores"] == b["scores"] and a["maeb"]["identity"] == b["maeb"]["identity"]
        assert a["maeb"]["stability"] == {"method": "not measured", "replays": 0, "why": "--stability-replays 0"}
        record = b["maeb"]["stability"]
        assert record["method"] == "replay" and record["replays"] == 2 and record["refits"] == 2  # 4 experiments / 4, twice
        assert (
            record["eps"] == {"audio": "3e-06", "text": "3e-06"}
            and 0 <= record["seconds"]
            and "test[0].main_score" in record["metrics"]
        )
        env = b["maeb"]["numeric_env"]
        assert env["packages"]["numpy"] == np.__version__ and env["blas"] and env["cpu"]
        assert env["evaluator_blas_threads"] == 1


@pytest.fixture(scope="module")
def tied_repo(tmp_path_factory):
    """36 clips, 3 distinct vectors, labels drawn apart from the vectors: every similarity ties with
    11 others, so a ranking's score depends on the order of tied clips (a transcript model's case)."""
    rng = np.random.default_rng(3)
    protos = rng.normal(size=(3, 8)).astype(np.float32)
    labels = rng.integers(0, 4, 36).tolist()  # 4 clusters over 3 points: k-means splits tied clips
    audio = [vector_wav(protos[i % 3]) for i in range(36)]
    return write_hub_repo(tmp_path_factory.mktemp("ties") / "repo", {"default": {"test": {"audio": audio, "label": labels}}})


def tied_spec(repo, kind: str):
    data = {"source": "hub", "path": str(repo), "eval_splits": ["test"], "label_column": "label"}
    raw = {"name": f"Tied{kind}", "type": kind, "data": data}
    if kind == "retrieval":
        raw.update(category="a2a", derive={"kind": "same_label", "label_column": "label"})
    if kind == "pair_classification":
        raw["derive"] = {"kind": "pairs", "label_column": "label", "n_pairs": 40}
    return parse_spec(raw, "test spec")


def test_clips_sharing_one_vector_get_different_noise_and_one_clip_the_same():
    from maeb.audio.pipeline import AudioRef
    from maeb.run.stability import ReplayEmbedder

    class Cached:  # an embedder whose every clip has the same vector
        def audio(self, refs):
            return np.ones((len(refs), 4), dtype=np.float32), np.ones(len(refs), dtype=bool)

        def text(self, texts):
            return np.ones((len(texts), 4), dtype=np.float32)

        context = "T"

    view = ReplayEmbedder(Cached(), {"audio": 1e-6, "text": 1e-6}, seed=0)
    view.record.context = "T"
    wav = vector_wav(np.ones(4))
    refs = [AudioRef("a", data=wav), AudioRef("b", data=wav), AudioRef("a", data=wav)]
    x, _ = view.audio(refs)
    assert not np.array_equal(x[0], x[1]) and np.array_equal(x[0], x[2])
    t = view.text(["same", "same"])
    assert not np.array_equal(t[0], t[1])


@pytest.mark.parametrize("kind", ["retrieval", "pair_classification", "clustering"])
def test_a_score_that_depends_on_tie_order_gets_a_band(tied_repo, tmp_path, kind):
    """Before the clip identity joined the noise's seed, tied clips moved alike and these were 'exact'."""
    spec = tied_spec(tied_repo, kind)
    outcome = evaluate_task(spec, embedder(tmp_path), stability_replays="auto")
    record = outcome.stability
    assert record["method"] == "replay" and record["replays"] == 32  # auto: 32 for every embedding type
    assert record["moved"] > 0 and record["band"] > 0 and record["exact"] is False
    assert record["eps"] == {"audio": "3e-06", "text": "3e-06"}
    assert record["quantum"] == round(1 / {"pair_classification": 40}.get(kind, 36), 6)  # one query, pair or clip


def test_one_sample_is_not_a_band(tied_repo, tmp_path):
    spec = tied_spec(tied_repo, "clustering")
    emb = embedder(tmp_path)
    one = evaluate_task(spec, emb, stability_replays=1).stability
    assert one["method"] == "not measured" and "band" not in one and "one cannot show a band" in one["why"]
    none = evaluate_task(spec, emb, stability_replays=0).stability
    assert none["method"] == "not measured" and "band" not in none


def test_types_without_vectors_are_not_replayed():
    spec = replace(parse_spec({"name": "Q", "type": "classification", "data": {"source": "hub", "path": "x"}}, "t"), type="qa")
    record = measure(spec, None, None, {}, replays="auto")
    assert record["method"] == "exact" and "not an embedding task type" in record["why"]


def test_the_stable_probe_does_not_blow_rounding_up_to_unit_scale():
    """A feature that is constant but for rounding (1e-7) is set to 0, not standardised into
    unit-scale noise; a real feature is standardised."""
    from maeb.tasktypes.probe import Standardize

    rng = np.random.default_rng(0)
    x = np.column_stack([np.full(50, 300.0) * (1 + 1e-7 * rng.standard_normal(50)), rng.normal(5.0, 2.0, 50)])
    z = Standardize().fit(x).transform(x)
    assert np.all(z[:, 0] == 0.0)
    assert z[:, 1].mean() == pytest.approx(0.0, abs=1e-12) and z[:, 1].std() == pytest.approx(1.0)


def test_one_items_share_is_the_largest_share_one_item_has():
    """Seen under imitated CPUs: one clip of LiteSoundEvents (156 clips, 5 folds) moved the mean by
    1/155 (its fold holds 31), which 1/156 refused; the smallest subset's items weigh the most."""
    from types import SimpleNamespace

    from maeb.run.stability import quantum

    def spec(**protocol):
        return SimpleNamespace(data=SimpleNamespace(eval_splits=["all"]), protocol=protocol)

    assert quantum(spec(cross_validation=True, n_splits=5), {"default": {"all": [0] * 156}}) == math.ceil(1e6 / 155) / 1e6
    assert quantum(spec(), {"default": {"all": [0] * 156}}) == math.ceil(1e6 / 156) / 1e6
    assert quantum(spec(), {"a": {"all": [0] * 10}, "b": {"all": [0] * 40}}) == 0.05  # one of 10 in one of 2 subsets
    assert quantum(spec(), {"default": {"all": []}}) == 0.0
