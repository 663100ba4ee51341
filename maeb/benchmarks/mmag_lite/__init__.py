"""MMAG-lite: an offline text-to-audio benchmark in the shape of MMAG (speech + music + sound
scenes with one English speaker), rendered from scene scripts with MAEB-lite's Debian
synthesizers (maeb.synth.scenes) and written as three subsets (`build`)."""

from __future__ import annotations

from pathlib import Path

from ...core.context import BUILT_BENCHMARK_FOLDERS, default_cache_dir


def default_dir(cache_dir: Path | None = None) -> Path:
    """Where MMAG-lite lives unless a run is told another folder ($MMAG_LITE_DIR, read by the
    command line and evaluate()): under the cache folder."""
    if cache_dir is None:
        cache_dir = default_cache_dir()
    return Path(cache_dir) / BUILT_BENCHMARK_FOLDERS["MMAG_LITE_DIR"]
