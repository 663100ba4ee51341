"""Progress in a batch job's log: a line as the run starts, then at most one per interval; the time
left estimated from the steps after the first (which carries the start-up), on a fake clock; the
probe's training clips labelled with their own split."""

from __future__ import annotations

import io
import re

import maeb
from maeb.core.progress import Progress

from .test_api import BandEnergy
from .test_cli import write_task


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _minutes_left(line: str) -> float | None:
    found = re.search(r"~([0-9.]+) min left", line)
    return float(found.group(1)) if found else None


def test_a_log_has_a_line_at_once_and_an_honest_first_estimate():
    """1000 clips in batches of 16: the first batch takes 20 s (model warm-up, decoders starting),
    each later one 1 s. The time left at 30 s is (1000 - 176) / 16 = 51.5 s; the rate since the
    start (176 clips in 30 s) would say 140 s."""
    clock, log = Clock(), io.StringIO()
    progress = Progress("lines", interval=30.0, stream=log, clock=clock)
    bar = progress.bar(1000, "embed T [test]")
    assert log.getvalue().splitlines() == ["embed T [test]: 0/1000 clips (0%)"]  # a run killed now leaves this
    clock.now += 20.0
    bar.update(16)
    for _ in range(10):
        clock.now += 1.0
        bar.update(16)
    lines = log.getvalue().splitlines()
    assert len(lines) == 2 and lines[1].startswith("embed T [test]: 176/1000 clips (18%)")
    left = _minutes_left(lines[1]) * 60
    assert abs(left - (1000 - 176) / 16) < 0.1 * 51.5, lines[1]


def test_no_estimate_before_enough_clips_are_timed():
    clock, log = Clock(), io.StringIO()
    progress = Progress("lines", interval=5.0, stream=log, clock=clock)
    bar = progress.bar(1000, "embed T [test]")
    clock.now += 20.0
    bar.update(16)  # the start-up batch alone: no rate to trust
    clock.now += 1.0
    bar.update(16)
    assert _minutes_left(log.getvalue().splitlines()[-1]) is None
    other = progress.bar(50, "short")  # not the first bar, within the interval: nothing
    other.update(50)
    other.close()
    assert "short" not in log.getvalue()


def test_training_clips_are_labelled_with_their_split(tmp_path, tone_folder):
    log = io.StringIO()
    task = write_task(tmp_path, tone_folder, "ToneClasses", "classification")
    progress = Progress("lines", interval=0.0, stream=log)
    maeb.evaluate(BandEnergy(), task, cache_dir=tmp_path / "cache", progress=progress)
    embeds = [line for line in log.getvalue().splitlines() if line.startswith("embed") and line.endswith("done")]
    assert any(line.startswith("embed ToneClasses [test]: 9/9 clips") for line in embeds), embeds
    # 9 train clips per label, 8 drawn in each of 10 experiments: all 27 are embedded, as training clips
    assert any(line.startswith("embed ToneClasses [train]: 27/27 clips") for line in embeds), embeds
