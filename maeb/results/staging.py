"""A submission's writes, all or nothing: each file staged, then written beside its target, then
renamed into place, with what it replaced set aside until the repository's checks pass (`finish`)
or fail (`undo`). `maeb.results.submit` decides what to write; this module only writes it."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import OutputError
from .write import write_text_atomic


@dataclass
class Submission:
    """What a submission did: files written (path -> what was there before, None for new), lines
    for what it refused or kept, and the CI rules' failures.

    All or nothing: `write` only stages a file's text; `commit` writes every staged file beside its
    target first (a full disk or a read-only folder stops it there, before the repository changed),
    then renames each into place, setting the file it replaces aside until `finish` (the checks
    passed) or `undo` (they failed) -- so an undo needs no free space and touches only this run's files."""

    written: dict[Path, bytes | None] = field(default_factory=dict)
    made: list[Path] = field(default_factory=list)  # folders this submission created, outermost first
    refused: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    models: set[str] = field(default_factory=set)
    staged: dict[Path, str] = field(default_factory=dict)
    set_aside: dict[Path, Path] = field(default_factory=dict)  # target -> the file it held, until finish/undo
    elsewhere: dict[Path, list[str]] = field(default_factory=dict)  # another revision folder -> tasks it has

    def write(self, path: Path, text: str) -> None:
        """Stage `path`'s new text, remembering what it held the first time (for the checks)."""
        if path not in self.written:
            self.written[path] = path.read_bytes() if path.exists() else None
        self.staged[path] = text

    def text(self, path: Path) -> str | None:
        """What `path` holds in this submission: its staged text, else the clone's file."""
        if path in self.staged:
            return self.staged[path]
        return path.read_text(encoding="utf-8") if path.exists() else None

    def commit(self) -> None:
        """Every staged file into place, or (on an OSError) none of them and OutputError naming the file."""
        temps: dict[Path, Path] = {}
        path = next(iter(self.staged), Path())
        try:
            for path, text in self.staged.items():
                missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
                self.made += [p for p in reversed(missing) if p not in self.made]
                path.parent.mkdir(parents=True, exist_ok=True)
                temps[path] = _beside(path, "staged")
                write_text_atomic(temps[path], text)
            for path, tmp in temps.items():
                if path.exists():
                    self.set_aside[path] = _beside(path, "before")
                    os.replace(path, self.set_aside[path])
                os.replace(tmp, path)
        except BaseException as exc:  # an interrupt too: no staged file or half submission is left
            for tmp in temps.values():
                tmp.unlink(missing_ok=True)
            self.undo()
            if not isinstance(exc, (OSError, OutputError)):  # (write_text_atomic raises OutputError from the OSError)
                raise
            cause = exc if isinstance(exc, OSError) else exc.__cause__
            why = cause.strerror if isinstance(cause, OSError) and cause.strerror else str(cause or exc)
            full = isinstance(cause, OSError) and cause.errno == errno.ENOSPC
            hint = "free some space and submit again" if full else "check the clone's permissions and submit again"
            raise OutputError(f"{path}: cannot write ({why}); {hint}; nothing was written") from exc

    def finish(self) -> None:
        """The checks passed: drop the files set aside."""
        for kept in self.set_aside.values():
            kept.unlink(missing_ok=True)
        self.set_aside.clear()

    def undo(self) -> None:
        """Put every written file back as it was; remove the new ones, then the folders this
        submission made (a folder that was there before stays, empty or not)."""
        for path, before in self.written.items():
            if path in self.set_aside:
                os.replace(self.set_aside.pop(path), path)
            elif before is None:
                path.unlink(missing_ok=True)
        for folder in reversed(self.made):
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()


def _beside(path: Path, what: str) -> Path:
    return path.parent / f".{path.name}.maeb-submit-{what}"  # a dot file: no rule or glob of *.json reads it
