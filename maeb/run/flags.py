"""The `run` subcommand's flags beyond what argparse knows: the value parsers of RunOptions' flags
(argparse reports their errors in one line), the --help sections a flag names (CLI_GROUPS), and the
judge's flags, one per part of its Endpoint, with the Endpoint they make (judge_from_flags). The
fields that use them are declared in maeb.run.options."""

from __future__ import annotations

import argparse
import json

from .stability import AUTO


def parse_option(text: str) -> tuple[str, object]:
    """--option key=value: the value as JSON when it parses, else the string."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"--option takes key=value, got {text!r}")
    key, value = text.split("=", 1)
    if not key.strip():
        raise argparse.ArgumentTypeError(f"--option takes key=value with a key, got {text!r}")
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    return key, parsed


def positive_float(text: str) -> float:
    """A positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"takes a positive number of seconds, got {text!r}")
    return value


def replays(text: str) -> int | str:
    """--stability-replays: auto (each type's default count), or a whole number, 0 or more."""
    if text == AUTO:
        return AUTO
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"must be auto or a whole number of replays (0 for none), not {text!r}")
    return int(text)


# the `run` subcommand's --help sections, by what a reader came to do: each flag names its section
CLI_GROUPS = {
    "select": "what to run",
    "output": "where results go",
    "speed": "speed and hardware",
    "protocol": "protocol: how clips are embedded and scored",
    "stability": "stability and extra reports",
    "judge": "LLM judge (judge-scored task types)",
    "behaviour": "progress, errors and the dry run",
    "ray": "Ray",
}

# the judge's flags, one per part of its maeb.encoders.chat.Endpoint: (flag, Endpoint field, argparse keywords);
# the defaults are Endpoint's own (tests/test_options.py checks they agree)
JUDGE_PARTS: tuple[tuple[str, str, dict], ...] = (
    ("--judge-url", "base_url", {"help": "OpenAI-compatible base URL of the LLM judge (judge-scored tasks)"}),
    ("--judge-model", "model", {"help": "the judge's model name, recorded in results"}),
    ("--judge-key-env", "api_key_env", {"default": "OPENAI_API_KEY", "help": "environment variable holding the judge's API key"}),
    (
        "--judge-timeout",
        "timeout",
        {
            "type": float,
            "default": 120.0,
            "metavar": "SECONDS",
            "help": "seconds to wait for one judge reply before the try counts as failed (default 120)",
        },
    ),
    (
        "--judge-retries",
        "retries",
        {
            "type": int,
            "default": 6,
            "metavar": "N",
            "help": "retries of one judge item after 429, 5xx, timeouts or connection errors (default 6)",
        },
    ),
    (
        "--judge-budget",
        "budget",
        {
            "type": float,
            "default": 600.0,
            "metavar": "SECONDS",
            "help": "most seconds one judge item may take over all its tries and waits, Retry-After included; "
            "then it fails alone, is recorded in judge_failed and asked again on a rerun (default 600)",
        },
    ),
)


def part_dest(flag: str) -> str:
    """The parsed value's name of a part's flag (--judge-url: judge_url)."""
    return flag.lstrip("-").replace("-", "_")


def judge_from_flags(args: argparse.Namespace, fallback: tuple[str | None, str | None] = (None, None), needed: bool = True):
    """The judge's Endpoint from its flags (JUDGE_PARTS), its URL and model else from `fallback` (the
    command line passes $MAEB_JUDGE_URL and $MAEB_JUDGE_MODEL); None without a URL. needed: whether
    a task of the run asks a judge; the variables alone do not stop a run that asks none (they are
    often exported once for every run), while flags typed on this command are checked all the same."""
    from ..core.errors import MaebError

    given = {name: getattr(args, part_dest(flag)) for flag, name, _ in JUDGE_PARTS}
    if not needed and not given["base_url"] and not given["model"]:
        return None
    url, model = given["base_url"] or fallback[0], given["model"] or fallback[1]
    if not url:
        return None
    if not model:
        named = "--judge-url" if given["base_url"] else "MAEB_JUDGE_URL"
        wanted = "--judge-model" if given["base_url"] else "--judge-model (or MAEB_JUDGE_MODEL)"
        raise MaebError(f"{named} needs {wanted}: the judge's name is recorded in every result")
    if not url.startswith(("http://", "https://")):
        raise MaebError(
            f"--judge-url {url!r}: give the judge's base URL with http:// or https:// (e.g. https://api.openai.com/v1)"
        )
    for flag, value in (("--judge-timeout", given["timeout"]), ("--judge-budget", given["budget"])):
        if not value > 0:
            raise MaebError(f"{flag} must be a positive number of seconds, got {value}")
    if given["retries"] < 0:
        raise MaebError(f"--judge-retries must be 0 or more, got {given['retries']}")
    from ..encoders.chat import Endpoint

    return Endpoint(**{**given, "base_url": url, "model": model})
