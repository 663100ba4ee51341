"""Names that become parts of paths: a task name, a model name or revision, a prediction file's
name. They come from specs, model entries and result files, none of which maeb wrote itself, so
every writer checks them here: one folder level each, and a built path stays inside its root
(a task named "../../x" or a revision ".." would otherwise write outside --output-dir)."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import MaebError, OutputError

_FORBIDDEN = ("/", "\\", "\0")


def unsafe_reason(value: object) -> str | None:
    """Why `value` cannot be one path component, or None when it can."""
    text = str(value)
    if not text.strip():
        return "it is empty"
    if text in (".", ".."):
        return f"{text!r} names a folder above or the folder itself"
    bad = next((c for c in _FORBIDDEN if c in text), None)
    if bad is not None:
        return f"it holds {bad!r}"
    if os.path.isabs(text) or (len(text) > 1 and text[1] == ":"):  # also a Windows drive
        return "it is an absolute path"
    return None


def safe_component(value: object, what: str, error: type[MaebError] = OutputError) -> str:
    """`value` as one path component; `error` naming `what` (e.g. "task name") when it is not one."""
    reason = unsafe_reason(value)
    if reason is not None:
        raise error(f"{what} {str(value)!r} cannot name a file or folder ({reason}); use a plain name")
    return str(value)


def inside(root: str | Path, path: str | Path, what: str, error: type[MaebError] = OutputError) -> Path:
    """`path`, after checking that it stays inside `root` once links and '..' are resolved."""
    base = Path(root).resolve()
    target = Path(path).resolve()
    if target != base and base not in target.parents:
        raise error(f"{what}: {path} would be written outside {root}; refused")
    return Path(path)
