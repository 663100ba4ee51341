"""Progress on stderr, whether or not stderr is a terminal.

On a terminal: tqdm bars. Elsewhere (a batch job's log): the run's first bar prints a line as it
starts (so a log is never empty while a run works), and after that a line at most every `interval`
seconds across all bars, plus one when a bar that spoke ends; short bars print nothing, so a long
run is visible in a log without flooding it. Disabled: nothing.

The time left is estimated from the clips done after a bar's first step, whose time includes what
a start costs (model warm-up, the decoding threads filling their queue), and only once MIN_TIMED
steps and MIN_TIMED_SHARE of the bar are behind it; before that a line says no time left rather
than one several times off."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable

MIN_TIMED = 3  # steps after the first before a line estimates the time left
MIN_TIMED_SHARE = 0.02  # and this share of the bar's items done after the first step


class _Lines:
    """A bar for logs: "desc: 1200/5000 clips (24%), 3.1/s, ~20 min left"."""

    def __init__(self, total: int, desc: str, unit: str, owner: Progress):
        self.total, self.desc, self.unit, self.owner = total, desc, unit, owner
        self.done, self.steps, self.spoken = 0, 0, False
        self.started = owner.clock()
        self.timed_from: tuple[float, int] | None = None  # (time, items) at the end of the first step
        if owner.last is None:  # the run's first bar: say so at once
            self._say()

    def _left(self, now: float) -> str:
        if self.timed_from is None or not self.total or self.steps <= MIN_TIMED:
            return ""
        since, base = self.timed_from
        timed = self.done - base
        if timed < MIN_TIMED_SHARE * self.total or now <= since:
            return ""
        rate = timed / (now - since)
        return f", ~{(self.total - self.done) / rate / 60:.1f} min left" if rate > 0 else ""

    def _say(self, last: bool = False) -> None:
        now = self.owner.clock()
        elapsed = max(now - self.started, 1e-9)
        share = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        rate = f", {self.done / elapsed:.1f}/s" if self.done else ""
        left = "" if last else self._left(now)
        unit = self.unit + ("" if self.total == 1 else "s")
        text = f"{self.desc}: {self.done}/{self.total} {unit}{share}{rate}{left}" + (", done" if last else "")
        print(text, file=self.owner.stream, flush=True)
        self.spoken = True
        self.owner.last = now

    def update(self, n: int = 1) -> None:
        self.done += n
        self.steps += 1
        now = self.owner.clock()
        if self.timed_from is None:
            self.timed_from = (now, self.done)
        if self.owner.last is None or now - self.owner.last >= self.owner.interval:
            self._say()

    def close(self) -> None:
        if self.spoken:  # a bar that never spoke was short: its end is no news either
            self._say(last=True)


class _Silent:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


class Progress:
    """How a run reports progress: mode "bar" (tqdm), "lines" (a log), "off". `clock` (seconds,
    monotonic) is for tests."""

    def __init__(self, mode: str | None = None, interval: float = 30.0, stream=None, clock: Callable[[], float] = time.monotonic):
        self.stream = stream or sys.stderr
        if mode is None:
            mode = "bar" if getattr(self.stream, "isatty", lambda: False)() else "lines"
        if mode not in ("bar", "lines", "off"):
            raise ValueError(f"progress mode {mode!r} is not bar, lines or off")
        self.mode, self.interval, self.clock = mode, interval, clock
        self.last: float | None = None  # when a line was last printed (lines mode), across bars

    @classmethod
    def of(cls, value) -> Progress:
        """True (the stream decides), False (off), a mode name, or a Progress."""
        if isinstance(value, Progress):
            return value
        if value is False or value is None:
            return cls("off")
        return cls(None if value is True else value)

    def bar(self, total: int, desc: str, unit: str = "clip", minimum: int = 1):
        """A progress bar of `total` units in this mode (tqdm, log lines, or a silent one when off or under `minimum`)."""
        if self.mode == "off" or total < minimum:
            return _Silent()
        if self.mode == "lines":
            return _Lines(total, desc, unit, self)
        from tqdm.auto import tqdm

        return tqdm(total=total, desc=desc, unit=unit, file=self.stream, dynamic_ncols=True, leave=False)

    def iterate(self, items: Iterable, desc: str, total: int | None = None, minimum: int = 2):
        """Yield the items while a bar counts them; `total` when the items are a generator that should not be listed."""
        if total is None:
            items = list(items)
            total = len(items)
        bar = self.bar(total, desc, unit="step", minimum=minimum)
        try:
            for item in items:
                yield item
                bar.update(1)
        finally:
            bar.close()
