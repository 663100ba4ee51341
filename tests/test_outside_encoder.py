"""A run that spends most of its embedding time outside the encoder says why, once, in its log
and in the result: the decoding threads' time per step, the costliest resampling pair, and what
to do about it."""

from __future__ import annotations

import logging
import time

import maeb
from maeb.audio import resample as resample_module
from maeb.engine import taskrecord
from maeb.mock import write_tone_folder

from .test_api import BandEnergy
from .test_cli import write_task


def test_a_slow_resampling_pair_is_named_once(tmp_path, monkeypatch, caplog):
    folder = write_tone_folder(tmp_path / "tess", {"low": 220.0, "high": 1760.0}, per_label=6, rate=24414)
    real = resample_module.resample

    def slow(samples, orig_rate, new_rate, **kwargs):  # as slow as the dense kernel was at this pair
        time.sleep(0.2)
        return real(samples, orig_rate, new_rate, **kwargs)

    monkeypatch.setattr(resample_module, "resample", slow)
    monkeypatch.setattr(taskrecord, "MIN_EMBED_SECONDS", 0.2)
    tasks = [write_task(tmp_path, folder, "Clusters"), write_task(tmp_path, folder, "Classes", "classification")]
    with caplog.at_level(logging.INFO, logger="maeb"):
        first, second = maeb.evaluate(BandEnergy(), tasks, cache_dir=tmp_path / "cache", progress=False, workers=1)
    said = [r.getMessage() for r in caplog.records if "outside the encoder" in r.getMessage()]
    assert len(said) == 1, said  # once per run, though the second task resampled slowly too
    note = first.info["embedding"]["outside_encoder"]
    assert said == [f"Clusters: {note}"] and "outside_encoder" not in second.info["embedding"]
    assert "24414 -> 16000 Hz with torchaudio-sinc-hann" in note and "--resampler soxr-hq" in note
    pipeline = first.info["embedding"]["pipeline"]  # the clustering task's 4 test clips
    assert pipeline["decoded_clips"] == 4 and pipeline["resample"][0]["clips"] == 4
    assert pipeline["resample"][0]["seconds"] >= 4 * 0.2
    assert second.info["embedding"]["pipeline"]["resample"][0]["clips"] == 8  # its training clips; the test ones were cached
