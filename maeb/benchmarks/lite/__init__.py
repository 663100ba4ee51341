"""MAEB-lite: a small real benchmark built offline from Debian's synthesizers and numpy."""

from __future__ import annotations

from pathlib import Path

from ...core.context import BUILT_BENCHMARK_FOLDERS, default_cache_dir


def default_dir(cache_dir: Path | None = None) -> Path:
    """Where MAEB-lite lives unless a run is told another folder ($MAEB_LITE_DIR, read by the fronts:
    maeb.core.environment): under the cache folder."""
    if cache_dir is None:
        cache_dir = default_cache_dir()
    return under_cache(cache_dir)


def under_cache(cache_dir: Path) -> Path:
    """MAEB-lite's folder under a cache folder (where a run builds it unless told another)."""
    return Path(cache_dir) / BUILT_BENCHMARK_FOLDERS["MAEB_LITE_DIR"]
