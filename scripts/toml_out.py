"""A small TOML writer for the catalog scripts (the standard library only reads TOML)."""

from __future__ import annotations

import json
import re

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(key: str) -> str:
    return key if _BARE.match(key) else json.dumps(key)


def _value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def dumps(doc: dict, comments: dict[str, str] | None = None) -> str:
    """Top-level scalars first, then [tables], then [[arrays of tables]]; `comments` puts a
    `# ...` line above a top-level key or table."""
    comments = comments or {}
    lines: list[str] = []

    def note(key):
        if key in comments:
            lines.extend(f"# {line}" for line in comments[key].splitlines())

    scalars = {k: v for k, v in doc.items() if not isinstance(v, dict) and not _is_table_list(v)}
    tables = {k: v for k, v in doc.items() if isinstance(v, dict)}
    arrays = {k: v for k, v in doc.items() if _is_table_list(v)}
    for key, value in scalars.items():
        note(key)
        lines.append(f"{_key(key)} = {_value(value)}")
    for key, table in tables.items():
        lines.append("")
        note(key)
        lines.append(f"[{_key(key)}]")
        nested = {k: v for k, v in table.items() if isinstance(v, dict) and len(v) > 3}
        for k, v in table.items():
            if k not in nested:
                lines.append(f"{_key(k)} = {_value(v)}")
        for k, v in nested.items():
            lines.append("")
            lines.append(f"[{_key(key)}.{_key(k)}]")
            lines.extend(f"{_key(kk)} = {_value(vv)}" for kk, vv in v.items())
    for key, items in arrays.items():
        note(key)
        for item in items:
            lines.append("")
            lines.append(f"[[{_key(key)}]]")
            lines.extend(f"{_key(k)} = {_value(v)}" for k, v in item.items())
    return "\n".join(lines).lstrip("\n") + "\n"


def _is_table_list(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)
