"""The synth layer: sound made offline, with no data and no weights: Debian's speech synthesizers,
General MIDI rendered by two sound sources, numpy sounds, and scene scripts that mix the three.
The offline benchmarks build their data with it (maeb.benchmarks), the `events` perturbation takes
its noise from it (maeb.audio.perturb) and the offline text-to-audio systems render with it
(maeb.audiogen.systems), so it sits below all three.

It may import its own modules and the floors below it; docs/architecture.md draws them."""

from __future__ import annotations

import subprocess

from ..core.errors import MaebError


def run_tool(cmd: list[str], what: str) -> None:
    """Run one of the Debian synthesizers; a missing or failing tool is named in the error."""
    try:
        subprocess.run(cmd, check=True, capture_output=True, timeout=600)
    except FileNotFoundError as exc:
        raise MaebError(f"{cmd[0]} is not installed; MAEB-lite needs Debian's {what} (run `make lite`)") from exc
    except subprocess.CalledProcessError as exc:
        raise MaebError(f"{cmd[0]} failed on {cmd[-1]!r}: {exc.stderr.decode(errors='replace')[-300:]}") from exc
