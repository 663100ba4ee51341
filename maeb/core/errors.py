"""One exception family: every message names the clip, task, field or model and says what to do."""

from __future__ import annotations

import difflib


class MaebError(Exception):
    """Base class; the command line prints the message on one line and exits with code 2."""


class SpecError(MaebError):
    """A task spec, model entry or benchmark list is malformed."""


class DataError(MaebError):
    """A data source cannot be read or lacks a required column or split."""


class AudioError(MaebError):
    """A clip cannot be decoded or holds no usable audio."""

    def __init__(self, clip: str, reason: str):
        super().__init__(f"clip {clip!r}: {reason}")
        self.clip = clip
        self.reason = reason


class ModelError(MaebError):
    """A model cannot be loaded or produced unusable output."""


class MissingPackage(ModelError):
    """A model needs a Python package that is not installed; the message names it and the command
    that installs it (`maeb lite` skips such a model and goes on with the others)."""


class CacheError(MaebError):
    """A cache file cannot be opened, read or written; the message names the file."""


class OutputError(MaebError):
    """A result or side file cannot be written (read-only folder, full disk); names the path."""


class UnknownName(MaebError):
    """A model, task or benchmark name is not registered."""

    def __init__(self, kind: str, name: str, known: list[str]):
        close = closest(name, known)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; run `python -m maeb list {kind}s`"
        super().__init__(f"unknown {kind} {name!r}{hint}")


def closest(name: str, known: list[str], n: int = 3) -> list[str]:
    """Up to n names of `known` close to `name` (by spelling, then containing it), for "did you mean" hints."""
    lowered = {k.lower(): k for k in known}
    hits = difflib.get_close_matches(name.lower(), list(lowered), n=n, cutoff=0.5)
    substring = [k for k in known if name.lower() in k.lower() and k.lower() not in hits]
    return [lowered[h] for h in hits] + substring[: max(0, n - len(hits))]


def check_keys(where: str, given: dict, allowed: set[str]) -> None:
    """Reject unknown keys with a suggestion, so a typo never silently falls back to a default."""
    for key in given:
        if key not in allowed:
            close = difflib.get_close_matches(key, sorted(allowed), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else f"; allowed: {', '.join(sorted(allowed))}"
            raise SpecError(f"{where}: unknown field {key!r}{hint}")
