"""Install a model package whose declared dependencies would pull another torch (torchaudio and
torchvision wheels pin the torch they were built with): the package itself with --no-deps, then each
of its declared dependencies except torch, torchaudio and torchvision, with constraints.txt's pins,
so pip keeps the torch already installed. Says what it left out.

    .venv/bin/python scripts/no_deps_install.py torchcrepe==0.0.24
    .venv/bin/python scripts/no_deps_install.py torch-vggish-yamnet==0.2.1 --dry-run

A family whose package imports torchaudio at import time still needs a torchaudio built for your torch
(`pip install --no-deps torchaudio==<the version released with your torch>`); the tests stub it
instead (tests/family_fixtures.py: stub_torchaudio)."""

from __future__ import annotations

import argparse
import email
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
# pip would resolve these against their own torch pin and replace the installed torch
LEFT_OUT = {"torch", "torchaudio", "torchvision"}


def _pip(*args: str, dry_run: bool) -> None:
    command = [sys.executable, "-m", "pip", "install", "-q", *args]
    print("+", " ".join(command[2:]))
    if not dry_run:
        subprocess.run(command, check=True)


def _normal(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def declared(requirement: str) -> list[Requirement]:
    """The package's unconditional requirements (extras and other platforms' markers left out), read
    from its wheel's METADATA: pip downloads the wheel alone, nothing is installed."""
    with tempfile.TemporaryDirectory() as folder:
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary",
            ":all:",
            "-d",
            folder,
            requirement,
        ]
        if subprocess.run(command, capture_output=True, text=True).returncode != 0:
            raise SystemExit(f"no_deps_install: pip found no wheel for {requirement}")
        wheel = next(Path(folder).glob("*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            return requirements_of(archive.read(name).decode("utf-8"))


def requirements_of(metadata: str) -> list[Requirement]:
    """The Requires-Dist lines of a wheel's METADATA that apply here without extras."""
    out = []
    for text in email.message_from_string(metadata).get_all("Requires-Dist") or []:
        requirement = Requirement(text)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            out.append(requirement)
    return out


def split(requirements: list[Requirement]) -> tuple[list[Requirement], list[Requirement]]:
    """(what to install, what to leave out: torch and the packages that pin it)."""
    keep = [r for r in requirements if _normal(r.name) not in LEFT_OUT]
    return keep, [r for r in requirements if _normal(r.name) in LEFT_OUT]


def main(argv: list[str] | None = None) -> int:
    """Install PACKAGE==VERSION with --no-deps, then its dependencies but torch, torchaudio, torchvision."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("requirement", help="the package, pinned: NAME==VERSION")
    parser.add_argument("--dry-run", action="store_true", help="print the pip commands; install nothing")
    args = parser.parse_args(argv)
    wanted = Requirement(args.requirement)
    keep, left = split(declared(args.requirement))
    _pip("--no-deps", args.requirement, dry_run=args.dry_run)
    if keep:
        _pip("-c", str(ROOT / "constraints.txt"), *(str(r).split(";")[0] for r in keep), dry_run=args.dry_run)
    for requirement in left:
        print(f"left out: {requirement} (pip would replace the installed torch; bring a matching build yourself)")
    done = "would be installed (--dry-run)" if args.dry_run else "installed"
    print(f"{wanted.name}: {done} with {len(keep)} of its {len(keep) + len(left)} declared dependencies")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
