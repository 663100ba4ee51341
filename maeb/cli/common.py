"""What several subcommands share: their `--option KEY=VALUE` pairs as a dict, and counted nouns."""

from __future__ import annotations

from ..core.errors import MaebError
from ..core.identity import check_env_options


def option_pairs(pairs) -> dict:
    """--option pairs as a dict; a key given twice with two values is a mistake, not "the last wins"."""
    out: dict = {}
    for key, value in pairs or ():
        if key in out and out[key] != value:
            raise MaebError(f"--option {key} is given twice ({out[key]!r} and {value!r}); give it once")
        out[key] = value
    check_env_options(out)  # a key pasted as api_key_env= must not reach folder names or results
    return out


def count(n: int, noun: str) -> str:
    """`1 task`, `3 tasks` (maeb.analysis.notes.count, imported when first used)."""
    from ..analysis.notes import count as counted

    return counted(n, noun)
