"""MAEB-lite: a small real benchmark built offline from Debian's synthesizers and numpy."""

from __future__ import annotations

import os
from pathlib import Path


def default_dir() -> Path:
    """Where MAEB-lite lives: $MAEB_LITE_DIR, else the cache folder."""
    if os.environ.get("MAEB_LITE_DIR"):
        return Path(os.environ["MAEB_LITE_DIR"])
    from ..cache import default_cache_dir

    return default_cache_dir() / "maeb-lite"
