"""FD / KL / IS on CNN14 (maeb.audiogen.distribution, maeb.audiogen.cnn14)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from maeb.audiogen import cnn14
from maeb.audiogen.distribution import (
    CNN14Scores,
    fd_from_features,
    frechet_distance,
    gaussian_stats,
    inception_score,
    kl_divergence,
)
from maeb.audiogen.metric import GeneratedItem, Metric, MetricUnavailable
from maeb.audiogen.request import SynthesisRequest
from maeb.core.errors import ModelError

# --- Frechet distance ---------------------------------------------------------------------------


def test_frechet_distance_diagonal_closed_form():
    rng = np.random.default_rng(0)
    mu1, mu2 = rng.normal(size=5), rng.normal(size=5)
    v1, v2 = rng.uniform(0.1, 3.0, 5), rng.uniform(0.1, 3.0, 5)
    expected = np.sum((mu1 - mu2) ** 2) + np.sum((np.sqrt(v1) - np.sqrt(v2)) ** 2)
    assert frechet_distance(mu1, np.diag(v1), mu2, np.diag(v2)) == pytest.approx(expected, rel=1e-9)


def test_frechet_distance_commuting_covariances():
    rng = np.random.default_rng(1)
    q, _ = np.linalg.qr(rng.normal(size=(6, 6)))  # shared eigenvectors: the covariances commute
    d1, d2 = rng.uniform(0.2, 4.0, 6), rng.uniform(0.2, 4.0, 6)
    s1, s2 = q @ np.diag(d1) @ q.T, q @ np.diag(d2) @ q.T
    mu1, mu2 = rng.normal(size=6), rng.normal(size=6)
    expected = np.sum((mu1 - mu2) ** 2) + np.sum((np.sqrt(d1) - np.sqrt(d2)) ** 2)
    assert frechet_distance(mu1, s1, mu2, s2) == pytest.approx(expected, rel=1e-8)


def test_frechet_distance_self_zero_and_symmetric():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(40, 8)), rng.normal(size=(30, 8)) * 2.0 + 0.5
    sx, sy = gaussian_stats(x), gaussian_stats(y)
    assert abs(frechet_distance(*sx, *sx)) < 1e-9
    assert frechet_distance(*sx, *sy) == pytest.approx(frechet_distance(*sy, *sx), rel=1e-9)
    assert frechet_distance(*sx, *sy) > 1.0


def test_fd_reduced_to_the_feature_span_equals_full():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(7, 40)), rng.normal(size=(9, 40)) * 1.3 + 0.2  # n + m < d
    full = fd_from_features(x, y, reduce=False)
    assert fd_from_features(x, y, reduce=True) == pytest.approx(full, rel=1e-6)
    assert fd_from_features(x, y) == pytest.approx(full, rel=1e-6)  # reduce chosen automatically


def test_gaussian_stats_is_unbiased():
    x = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 2.0]])
    mu, sigma = gaussian_stats(x)
    assert np.allclose(mu, [2.0, 2.0])
    assert sigma[0, 0] == pytest.approx(4.0)  # sum of squares 8 over n - 1 = 2


# --- Inception score and KL ---------------------------------------------------------------------


def test_inception_score_known_values():
    assert inception_score(np.full((6, 10), 0.1), splits=1)[0] == pytest.approx(1.0)
    one_hot = np.eye(8)[:5]  # five clips, each certain of a different class
    assert inception_score(one_hot, splits=1)[0] == pytest.approx(5.0)
    same = np.eye(8)[[3, 3, 3, 3]]  # all certain of the same class: no diversity
    assert inception_score(same, splits=1)[0] == pytest.approx(1.0)
    mean, std = inception_score(np.eye(4), splits=2, seed=None)  # two distinct classes per split
    assert (mean, std) == (pytest.approx(2.0), pytest.approx(0.0))


def test_kl_direction_and_value():
    q, p = np.array([[0.5, 0.5]]), np.array([[0.9, 0.1]])  # reference q, generated p
    kl = kl_divergence(np.log(p), np.log(q), eps=0.0)  # softmax(log p) = p
    assert kl[0] == pytest.approx(0.5 * np.log(0.5 / 0.9) + 0.5 * np.log(0.5 / 0.1), rel=1e-9)
    swapped = 0.9 * np.log(0.9 / 0.5) + 0.1 * np.log(0.1 / 0.5)
    assert abs(kl[0] - swapped) > 0.1  # KL(reference || generated), not the other way
    assert kl_divergence(np.log(p), np.log(q))[0] == pytest.approx(kl[0], abs=1e-5)  # the 1e-6 eps


def test_kl_identical_outputs_is_zero():
    logits = np.random.default_rng(4).normal(size=(3, 527))
    assert np.all(np.abs(kl_divergence(logits, logits, eps=0.0)) < 1e-12)
    assert np.all(np.abs(kl_divergence(logits, logits)) < 1e-3)  # eps shifts it by ~classes * eps
    assert np.all(np.abs(kl_divergence(logits, logits, "sigmoid", eps=0.0)) < 1e-12)


# --- CNN14 --------------------------------------------------------------------------------------

_MODELS: dict = {}


_BUILD = cnn14.build  # the real builder, whatever a fixture patches in later


def _random_model():
    if "model" not in _MODELS:
        _MODELS["model"] = _BUILD(0)
    return _MODELS["model"]


def test_cnn14_shapes_and_released_key_names():
    model = _random_model()
    waves = [cnn14.prepare(np.sin(np.arange(8000) / 5.0).astype(np.float32), 8000)]
    assert waves[0].shape == (cnn14.MIN_SAMPLES,)  # 1 s at 8 kHz -> 16 kHz, padded to 2 s
    emb, logits = cnn14.infer(model, waves)
    assert emb.shape == (1, 2048) and logits.shape == (1, 527)
    keys = set(model.state_dict())
    assert {
        "bn0.running_mean",
        "conv_block1.conv1.weight",
        "conv_block6.bn2.running_var",
        "fc1.weight",
        "fc_audioset.bias",
    } <= keys
    assert not any(k.startswith(("window", "mel")) for k in keys)
    assert sum(v.numel() for k, v in model.state_dict().items() if "num_batches" not in k) == pytest.approx(80.75e6, rel=0.01)


def test_cnn14_checkpoint_round_trip_is_strict(tmp_path):
    import torch

    source = cnn14.build(1)
    state = dict(source.state_dict())
    state["spectrogram_extractor.stft.conv_real.weight"] = torch.zeros(257, 1, 512)  # released front-end buffers
    state["logmel_extractor.melW"] = torch.zeros(257, 64)
    path = tmp_path / "Cnn14_16k.pth"
    torch.save({"model": state, "iteration": 1}, path)
    loaded, identity = cnn14.load(str(path))
    assert identity["stand_in"] is False and len(identity["revision"]) == 64
    wave = [cnn14.prepare(np.random.default_rng(0).normal(size=16000).astype(np.float32) * 0.1, 16000)]
    e_loaded, z_loaded = cnn14.infer(loaded, wave)
    e_source, z_source = cnn14.infer(source, wave)
    e_other, _ = cnn14.infer(_random_model(), wave)
    assert np.array_equal(z_loaded, z_source) and np.array_equal(e_loaded, e_source)
    assert not np.allclose(e_loaded, e_other)
    del state["fc1.bias"]
    torch.save({"model": state}, path)
    with pytest.raises(ModelError, match="fc1.bias"):
        cnn14.load(str(path))


# --- the scorer ---------------------------------------------------------------------------------

RATE = 22050  # not 16 kHz, so the resampling path runs


def _tone(freq: float, seconds: float = 1.0) -> np.ndarray:
    t = np.arange(int(RATE * seconds)) / RATE
    return (0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def _noise(seed: int, seconds: float = 1.0) -> np.ndarray:
    return (0.3 * np.random.default_rng(seed).standard_normal(int(RATE * seconds))).astype(np.float32)


FREQS = (220.0, 330.0, 440.0, 660.0, 880.0)


def _items(generated, references):
    return [
        GeneratedItem(SynthesisRequest(key=f"clip{i}", caption="a tone", duration=1.0), g, RATE, r, None if r is None else RATE)
        for i, (g, r) in enumerate(zip(generated, references))
    ]


@pytest.fixture
def shared_model(monkeypatch):
    # one random CNN14 for all scorers: building 80M parameters takes seconds on two cores
    # (a copy each time: loading the stand-in scales its class head in place)
    monkeypatch.setattr(cnn14, "build", lambda seed=0: copy.deepcopy(_random_model()))


def _score(generated, references, keys=("fd", "kl", "is"), cache_dir=None):
    scorer = CNN14Scores(keys, {"checkpoint": "random"}, "cpu", cache_dir)
    scorer.update(_items(generated, references))
    return scorer, scorer.result()


def test_scorer_identical_sets_and_ordering(shared_model):
    tones = [_tone(f) for f in FREQS]
    scorer, same = _score(tones, tones)
    assert isinstance(scorer, Metric)
    assert abs(same["fd"]) < 1e-6 and abs(same["kl"]) < 1e-3
    assert 1.0 <= same["is"] <= len(FREQS)
    assert scorer.extras["is_splits_used"] == len(FREQS)  # 10 splits capped at 5 clips
    assert set(scorer.per_clip) == {f"clip{i}" for i in range(len(FREQS))}
    assert scorer.provenance()["stand_in"] is True and scorer.provenance()["revision"] == "random-seed0-head-gain100"


def test_scorer_noise_is_farther_than_detuned_tones(shared_model):
    tones = [_tone(f) for f in FREQS]
    _, near = _score(tones, [_tone(f * 1.03) for f in FREQS])
    _, far = _score(tones, [_noise(i) for i in range(len(FREQS))])
    assert far["fd"] > 5 * near["fd"] > 0
    assert far["kl"] > near["kl"]


def test_reference_cache_is_reused(shared_model, tmp_path, monkeypatch):
    tones = [_tone(f) for f in FREQS[:4]]
    refs = [_tone(f * 1.03) for f in FREQS[:4]]
    first, values = _score(tones, refs, ("kl", "fd"), tmp_path)
    assert first.forwards == {"generated": 4, "reference": 4}
    files = sorted((tmp_path / "mmag-features" / first.model_id).glob("*.npy"))
    assert len(files) == 4
    assert np.load(files[0], allow_pickle=False).shape == (2048 + 527,)
    second, again = _score(tones, refs, ("kl", "fd"), tmp_path)
    assert second.forwards == {"generated": 4, "reference": 0}
    assert again == pytest.approx(values, rel=1e-9)
    # another seed is another model: its references are not taken from the first one's cache
    third = CNN14Scores(("kl",), {"checkpoint": "random", "seed": 1}, "cpu", tmp_path)
    assert third.model_id != first.model_id


def test_missing_references_make_kl_and_fd_unavailable(shared_model):
    tones = [_tone(f) for f in FREQS[:3]]
    with pytest.raises(MetricUnavailable, match="reference recording"):
        _score(tones, [tones[0], None, None], ("kl", "is"))
    _, only_is = _score(tones, [None, None, None], ("is",))
    assert set(only_is) == {"is"}
