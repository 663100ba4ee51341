"""MAEB-lite: a small real benchmark built offline from Debian's synthesizers and numpy."""

from __future__ import annotations

import subprocess
from pathlib import Path


def default_dir(cache_dir: Path | None = None) -> Path:
    """Where MAEB-lite lives unless a run is told another folder ($MAEB_LITE_DIR, read by the fronts:
    maeb.core.environment): under the cache folder."""
    if cache_dir is None:
        from ...engine.cache import default_cache_dir

        cache_dir = default_cache_dir()
    return under_cache(cache_dir)


def under_cache(cache_dir: Path) -> Path:
    """MAEB-lite's folder under a cache folder (where a run builds it unless told another)."""
    from ...core.context import BUILT_BENCHMARK_FOLDERS

    return Path(cache_dir) / BUILT_BENCHMARK_FOLDERS["MAEB_LITE_DIR"]


def run_tool(cmd: list[str], what: str) -> None:
    """Run one of the Debian synthesizers; a missing or failing tool is named in the error."""
    from ...core.errors import MaebError

    try:
        subprocess.run(cmd, check=True, capture_output=True, timeout=600)
    except FileNotFoundError as exc:
        raise MaebError(f"{cmd[0]} is not installed; MAEB-lite needs Debian's {what} (run `make lite`)") from exc
    except subprocess.CalledProcessError as exc:
        raise MaebError(f"{cmd[0]} failed on {cmd[-1]!r}: {exc.stderr.decode(errors='replace')[-300:]}") from exc
