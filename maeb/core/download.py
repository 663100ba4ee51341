"""Released files fetched once and verified: a checkpoint (the FENSE error checkers, PANNs CNN14)
is downloaded through a temporary file and renamed into place only when its sha256 is the pinned
one, so an interrupted or corrupted download never sits where a later run would load it; and the
wait a server that answers 429 or 503 asks for (Retry-After), read once for the hub and the chat
endpoints."""

from __future__ import annotations

import email.utils
import hashlib
import os
import shutil
import tempfile
import time
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


def parse_retry_after(headers, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date) or the
    retry-after-ms some OpenAI-compatible servers send; None when absent or unreadable."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("Retry-After")
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if moment is None:
        return None
    return max(0.0, moment.timestamp() - (time.time() if now is None else now))
