"""Performance options (Family.performance): options a family declares do not change its vectors.
They stay out of the cache key, the result identity and the experiment settings, check-model asks
them to leave config() and the vectors alone instead of asking config() to follow them, and a
record that calls a setting (or an option its constructor lacks) a performance option is refused."""

from __future__ import annotations

import numpy as np
import pytest

from maeb.cli.check_model import check_model
from maeb.core.errors import ModelError
from maeb.core.identity import declared_identity, experiment_settings
from maeb.encoders.family import FAMILY_REGISTRY, Family, register_family
from maeb.encoders.load import load_encoder
from maeb.encoders.meta import ModelMeta

HERE = "tests.test_performance_options"


class FrameBatched:
    """A band-energy encoder with a performance knob (frame_batch: how many frames it sums at once)
    and a setting (bands)."""

    sample_rate, max_seconds, min_samples, batching = 16000, None, 0, "padded"

    def __init__(self, meta, device="cpu", bands=4, frame_batch=64):
        self.bands, self.frame_batch = bands, frame_batch

    def config(self):
        return {"bands": self.bands}

    def embed_audio(self, clips):
        out = []
        for clip in clips:
            spectrum = np.abs(np.fft.rfft(clip))
            out.append([float(part.sum()) for part in np.array_split(spectrum, self.bands)])
        return np.asarray(out, dtype=np.float32)


class Sneaky(FrameBatched):
    """Its `frame_batch` changes the vectors: declared a performance option, check-model must refuse it."""

    def embed_audio(self, clips):
        return super().embed_audio(clips) * float(self.frame_batch)


@pytest.fixture
def families():
    names = []

    def register(name, factory, **fields):
        names.append(name)
        return register_family(Family(name, f"{HERE}:{factory}", **fields))

    yield register
    for name in names:
        FAMILY_REGISTRY.pop(name, None)


def meta(family: str, **options) -> ModelMeta:
    return ModelMeta(name="me/frames", family=family, revision="1", embed_dim=4, options=options)


def test_a_performance_option_leaves_every_identity(families):
    families("test-knob", "FrameBatched", performance=("frame_batch",))
    entry = meta("test-knob")
    plain = declared_identity(entry, {}, "mteb-2.26")
    assert declared_identity(entry, {"frame_batch": 8}, "mteb-2.26") == plain
    assert declared_identity(entry, {"bands": 8}, "mteb-2.26") != plain  # a setting still keys the cache
    assert experiment_settings(entry, {"frame_batch": 8, "bands": 8}, "mteb-2.26", "mteb-2.26") == {"bands": 8}
    # the family without the declaration: the knob keys the cache, as before this rule
    families("test-noknob", "FrameBatched")
    undeclared = meta("test-noknob")
    assert declared_identity(undeclared, {"frame_batch": 8}, "mteb-2.26")["options"] == {"frame_batch": 8}


def test_check_model_checks_a_performance_option_instead_of_asking_config_to_follow_it(families):
    lines: list[str] = []
    families("test-noknob", "FrameBatched")
    report = check_model(meta("test-noknob"), tasks=False, out=lines.append)
    assert ("FAIL", "config covers frame_batch") in [line[:2] for line in report.lines]  # the trap of issue 36
    families("test-knob", "FrameBatched", performance=("frame_batch",))
    report = check_model(meta("test-knob"), tasks=False, out=lines.append)
    assert not report.failed, report.lines
    passed = {check: detail for status, check, detail in report.lines if status == "PASS"}
    assert "leaves config() as it was" in passed["performance option frame_batch"]
    assert "changes config()" in passed["config covers bands"]
    families("test-sneaky", "Sneaky", performance=("frame_batch",))
    report = check_model(meta("test-sneaky"), tasks=False, out=lines.append)
    assert [check for _, check, _ in report.failed] == ["performance option frame_batch"]
    assert "it changes vectors" in report.failed[0][2]


def test_a_setting_or_a_missing_option_is_refused_as_a_performance_option(families):
    with pytest.raises(ModelError, match=r"family 'test-bad': performance option 'max_seconds' changes vectors"):
        register_family(Family("test-bad", f"{HERE}:FrameBatched", performance=("max_seconds",)))
    with pytest.raises(ModelError, match="performance must be a tuple of option names"):
        register_family(Family("test-bad", f"{HERE}:FrameBatched", performance="frame_batch"))  # type: ignore[arg-type]
    assert "test-bad" not in FAMILY_REGISTRY
    families("test-typo", "FrameBatched", performance=("frame_bach",))
    with pytest.raises(ModelError) as caught:
        load_encoder(meta("test-typo"))
    assert str(caught.value) == (
        "family 'test-typo' declares performance option 'frame_bach', which FrameBatched does not take; "
        "its options: bands, frame_batch"
    )
