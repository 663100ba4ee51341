"""The environment variables maeb honours, read in this one module and only by the fronts (the
command line, `maeb.evaluate()`, `maeb lite`, `maeb robust`): they turn each into a RunOptions field
or an explicit argument, so nothing below them reads the environment (tests/test_options.py scans
for it).

    MAEB_CACHE_DIR   the cache folder (default: maeb under $XDG_CACHE_HOME, else ~/.cache/maeb)
    MAEB_LITE_DIR    MAEB-lite's data folder (RunOptions.lite_dir)
    MMAG_LITE_DIR    MMAG-lite's data folder (RunOptions.mmag_lite_dir)
    MAEB_DEBUG       set (non-empty): unexpected errors raise with their traceback (RunOptions.debug)
    MAEB_API_URL, MAEB_API_MODEL, MAEB_TTA_URL
                     endpoints of API-backed models where the entry's options name none
                     (RunOptions.endpoints; a model class declares which of its options they fill)
    MAEB_JUDGE_URL, MAEB_JUDGE_MODEL
                     the LLM judge of the command line (--judge-url, --judge-model)
    MAEB_ALLOW_CODE  1: specs and entries may name modules outside maeb (--allow-code; maeb.core.trust)

An API key is not among them: a class names the variable that holds its key and reads it when it
sends a request, so the secret is never part of the options, a result or a log."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

ENDPOINT_VARIABLES = ("MAEB_API_URL", "MAEB_API_MODEL", "MAEB_TTA_URL")


def _env(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """$MAEB_CACHE_DIR, else maeb under $XDG_CACHE_HOME (default ~/.cache)."""
    env = _env(environ)
    if env.get("MAEB_CACHE_DIR"):
        return Path(env["MAEB_CACHE_DIR"])
    return Path(env.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "maeb"


def folder(variable: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """The folder a variable names ($MAEB_LITE_DIR, $MMAG_LITE_DIR), None when unset or empty."""
    value = _env(environ).get(variable)
    return Path(value) if value else None


def debug(environ: Mapping[str, str] | None = None) -> bool:
    """$MAEB_DEBUG set to anything non-empty."""
    return bool(_env(environ).get("MAEB_DEBUG"))


def endpoints(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The endpoint variables that are set: {name: value}."""
    env = _env(environ)
    return {name: env[name] for name in ENDPOINT_VARIABLES if env.get(name)}


def judge(environ: Mapping[str, str] | None = None) -> tuple[str | None, str | None]:
    """$MAEB_JUDGE_URL and $MAEB_JUDGE_MODEL (None where unset)."""
    env = _env(environ)
    return env.get("MAEB_JUDGE_URL") or None, env.get("MAEB_JUDGE_MODEL") or None


def allow_code(environ: Mapping[str, str] | None = None) -> bool:
    """$MAEB_ALLOW_CODE set to 1, true or yes: specs and entries may name modules outside maeb
    (maeb.core.trust)."""
    return _env(environ).get("MAEB_ALLOW_CODE", "").strip().lower() in ("1", "true", "yes")
