"""Released files fetched once and verified: a checkpoint (the FENSE error checkers, PANNs CNN14)
is downloaded through a temporary file and renamed into place only when its sha256 is the pinned
one, so an interrupted or corrupted download never sits where a later run would load it."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.request
from pathlib import Path

from .errors import DataError


def sha256_file(path: Path) -> str:
    """The sha256 hex digest of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download_verified(url: str, path: Path, sha256: str, what: str, offline: str = "") -> Path:
    """url to path through a temporary file beside it, renamed into place only once its sha256 is
    the pinned one. `offline` is the caller's advice when the host cannot be reached (the FENSE
    checker can be switched off; CNN14 can be given as a local file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=60) as response:
            shutil.copyfileobj(response, out, 1 << 20)
        got = sha256_file(Path(tmp))
        if got != sha256:
            raise DataError(f"{what}: the download from {url} has sha256 {got}, expected {sha256}; not used (try again)")
        os.replace(tmp, path)
    except OSError as exc:
        raise DataError(f"cannot download {what} from {url} ({exc})" + (f"; {offline}" if offline else "")) from exc
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path
