"""Progress on stderr, whether or not stderr is a terminal.

On a terminal: tqdm bars. Elsewhere (a batch job's log): a bar that takes longer than `interval`
seconds prints one line every `interval` seconds and one when it ends (short ones print nothing),
so a long run is visible in a log without flooding it. Disabled: nothing."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable


class _Lines:
    """A bar for logs: "desc: 1200/5000 (24%), 3.1/s, ~20 min left" at most every `interval` s."""

    def __init__(self, total: int, desc: str, unit: str, interval: float, stream):
        self.total, self.desc, self.unit, self.interval, self.stream = total, desc, unit, interval, stream
        self.done, self.spoken = 0, False
        self.started = self.last = time.monotonic()

    def _say(self, last: bool = False) -> None:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = self.done / elapsed
        share = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        left = ""
        if not last and rate > 0 and self.total:
            left = f", ~{(self.total - self.done) / rate / 60:.1f} min left"
        text = f"{self.desc}: {self.done}/{self.total} {self.unit}s{share}, {rate:.1f}/s{left}" + (", done" if last else "")
        print(text, file=self.stream, flush=True)
        self.spoken = True

    def update(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if now - self.last >= self.interval:
            self.last = now
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
    """How a run reports progress: mode "bar" (tqdm), "lines" (a log), "off"."""

    def __init__(self, mode: str | None = None, interval: float = 30.0, stream=None):
        self.stream = stream or sys.stderr
        if mode is None:
            mode = "bar" if getattr(self.stream, "isatty", lambda: False)() else "lines"
        if mode not in ("bar", "lines", "off"):
            raise ValueError(f"progress mode {mode!r} is not bar, lines or off")
        self.mode, self.interval = mode, interval

    @classmethod
    def of(cls, value) -> Progress:
        """True (the stream decides), False (off), a mode name, or a Progress."""
        if isinstance(value, Progress):
            return value
        if value is False or value is None:
            return cls("off")
        return cls(None if value is True else value)

    def bar(self, total: int, desc: str, unit: str = "clip", minimum: int = 1):
        if self.mode == "off" or total < minimum:
            return _Silent()
        if self.mode == "lines":
            return _Lines(total, desc, unit, self.interval, self.stream)
        from tqdm.auto import tqdm

        return tqdm(total=total, desc=desc, unit=unit, file=self.stream, dynamic_ncols=True, leave=False)

    def iterate(self, items: Iterable, desc: str, total: int | None = None, minimum: int = 2):
        items = list(items) if total is None else items
        bar = self.bar(len(items) if total is None else total, desc, unit="step", minimum=minimum)
        try:
            for item in items:
                yield item
                bar.update(1)
        finally:
            bar.close()
