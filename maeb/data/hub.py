"""The hub's download path as a run sees it: whether the hub can be reached (probed once per run),
and the hub clients' exceptions as one line naming the repository, its revision and what to do.

Why the probe: offline, huggingface_hub retries each file with back-off (about 25 s before it gives
up), so every hub task of a benchmark spent half a minute learning the same fact. A run (runner.run
and distributed.run_on_ray hold a `session`) asks the endpoint once, on its first hub download,
with a short timeout. When it cannot be reached (or HF_HUB_OFFLINE=1 is set) the hub libraries are
put in offline mode until the run ends: repositories already in their caches still load, at once,
and one that is not fails at once with a line saying there is no network and what to do.
Downloading and caching stay the libraries' own (huggingface_hub's cache under HF_HOME, keyed by
repository and commit; datasets' prepared tables beside it). The session is per process, not in
RunContext, because the switch it throws (the libraries' offline flag) is per process too."""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import logging
import os
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..core.download import parse_retry_after
from ..core.identity import redact

PROBE_TIMEOUT = 3.0  # seconds: a hub that answers at all answers well within this
_lock = threading.Lock()
_active: Session | None = None


def endpoint() -> str:
    """The hub address huggingface_hub is configured with, without a trailing slash."""
    from huggingface_hub import constants

    return constants.ENDPOINT.rstrip("/")


def from_hub(revision: str | None, path: str | None = None) -> bool:
    """Whether a model entry downloads from the hub: no local `path`, a pinned commit (or main)."""
    return not path and bool(re.fullmatch(r"[0-9a-f]{40}|main", revision or ""))


def probe(url: str, timeout: float = PROBE_TIMEOUT) -> str | None:
    """None when `url` answers at all (any status); otherwise why not, in a few words, redacted
    (HF_ENDPOINT may hold user:password@ or a token). One request, no retries, through
    huggingface_hub's session (its proxy settings apply)."""
    why = _unreachable(url, timeout)
    return None if why is None else redact(why)


def _unreachable(url: str, timeout: float) -> str | None:
    from huggingface_hub import constants
    from huggingface_hub.utils import get_session

    if constants.is_offline_mode():
        return "HF_HUB_OFFLINE=1 is set"
    if not re.match(r"https?://[^/\s]", url):  # a mistyped HF_ENDPOINT is no network problem: say which it is
        return f"HF_ENDPOINT {url!r} is not an http:// or https:// address; set it to the hub's URL or unset it"
    try:
        get_session().head(url, timeout=timeout, follow_redirects=False)
    except Exception as exc:  # httpx2's ConnectError, timeouts, proxy errors: all mean "not reachable"
        text = str(exc).lower()
        if "name or service not known" in text or "nodename nor servname" in text or "getaddrinfo" in text:
            return f"cannot resolve the host of {url}"
        if "refused" in text:
            return f"{url} refused the connection"
        if "timed out" in text or "timeout" in type(exc).__name__.lower():
            return f"{url} did not answer within {timeout:g} s"
        return f"cannot reach {url} ({type(exc).__name__}: {first_line(exc)})"
    return None


@dataclass
class Session:
    """What one run knows about the hub: probed once, on first use."""

    url: str
    offline: str | None = None  # why the hub cannot be reached; None: reachable (or not probed yet)
    probed: bool = False
    _saved: tuple | None = None

    def check(self) -> str | None:
        """Probe once; when offline, switch the hub libraries to offline mode for the run."""
        with _lock:
            if not self.probed:
                self.probed = True
                self.offline = probe(self.url)
                if self.offline and not self.offline.startswith("HF_HUB_OFFLINE"):  # (that one is already offline)
                    self._go_offline()
                    logging.getLogger("maeb").info(
                        f"no network: {self.offline}; hub downloads are off for this run (repositories in the cache "
                        "load from it, others fail at once): go online, or point data.path at local copies"
                    )
            return self.offline

    def _go_offline(self) -> None:
        import datasets.config
        from huggingface_hub import constants

        self._saved = (constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE, os.environ.get("HF_HUB_OFFLINE"))
        constants.HF_HUB_OFFLINE = True
        datasets.config.HF_HUB_OFFLINE = True
        os.environ["HF_HUB_OFFLINE"] = "1"  # for libraries imported later in the run

    def close(self) -> None:
        """Restore the offline flags and environment the session changed; a second call does nothing."""
        if self._saved is None:
            return
        import datasets.config
        from huggingface_hub import constants

        hub_flag, datasets_flag, env = self._saved
        constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE = hub_flag, datasets_flag
        if env is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = env
        self._saved = None


@contextmanager
def session():
    """The run's hub session (a nested call joins the one already open)."""
    global _active
    with _lock:
        outer = _active
        if outer is None:
            _active = Session(endpoint())
        current = _active
    try:
        yield current
    finally:
        if outer is None:
            with _lock:
                _active = None
            current.close()


def in_session(fn):
    """Run `fn` inside a hub session (for the run entry points)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with session():
            return fn(*args, **kwargs)

    return wrapper


def prepare() -> str | None:
    """Before a hub download: the run's verdict (probing on first use); outside a run, a probe of
    its own, without switching the libraries. None: go ahead."""
    current = _active
    return current.check() if current is not None else probe(endpoint())


def _cached_card(repo: str, revision: str | None):
    """Offline, the `configs:` of a dataset card at `revision` in huggingface_hub's cache (datasets'
    MetadataConfigs, as datasets reads the card online); None when online or not cached."""
    from huggingface_hub import DatasetCard, constants, try_to_load_from_cache

    if not constants.is_offline_mode():
        return None
    path = try_to_load_from_cache(repo, "README.md", revision=revision, repo_type="dataset")
    if not isinstance(path, str):
        return None
    from datasets.utils.metadata import MetadataConfigs

    return MetadataConfigs.from_dataset_card_data(DatasetCard.load(path).data)


def cached_card_configs(repo: str, revision: str | None) -> list[str] | None:
    """Offline, datasets names a cached repository's configs ['default'] (its cache module has no
    card), so a retrieval task finds no corpus config in an offline rerun: the names come from the
    cached card instead. None when online or when that card is not cached."""
    configs = _cached_card(repo, revision)
    return None if configs is None else (list(configs) or ["default"])


def cached_default_config(repo: str, revision: str | None) -> str | None:
    """Offline, datasets cannot pick a repository's default config among several cached ones
    ("multiple configurations in the cache"), which it does online from the card: the card's
    default config (named default, marked default, or the only one), or None."""
    configs = _cached_card(repo, revision)
    return configs.get_default_config_name() if configs else None


COMMIT = re.compile(r"[0-9a-f]{40}")


def resolved_commit(repo: str, revision: str | None, kind: str = "dataset") -> str | None:
    """The commit a branch or tag (None: "main") of a hub repository stands for, so a result records
    what was evaluated rather than a name that moves: a pinned commit as it is; online, the hub's
    answer; offline, the ref huggingface_hub's cache wrote when it downloaded. None for a local
    folder, or when neither can tell."""
    if revision and COMMIT.fullmatch(revision):
        return revision
    if os.path.isdir(repo):
        return None
    ref = revision or "main"
    from huggingface_hub import HfApi, constants

    if not constants.is_offline_mode() and (_active is None or _active.offline is None):
        try:
            info = HfApi().repo_info(repo, revision=ref, repo_type=kind, timeout=PROBE_TIMEOUT * 3)
            if info.sha and COMMIT.fullmatch(info.sha):
                return info.sha
        except Exception:  # unreachable or refused: the cache's ref below is the next best witness
            pass
    cached = os.path.join(constants.HF_HUB_CACHE, f"{kind}s--{repo.replace('/', '--')}", "refs", ref)
    try:
        with open(cached, encoding="utf-8") as handle:
            text = handle.read().strip()
    except OSError:
        return None
    return text if COMMIT.fullmatch(text) else None


# A 5xx is the hub answering, not the network failing: huggingface_hub's own client (http_backoff)
# retries such answers with waits doubling from 1 s, so a passing fault does not fail a task. A 429
# is the hub rate-limiting: retried as often, after the Retry-After it sends (http_backoff waits it
# out too), but never longer than MAX_RETRY_AFTER a try: a longer wait gives up at once, saying so
RETRY_STATUS = (429, 500, 502, 503, 504)
RETRY_WAITS = (1.0, 2.0, 4.0, 8.0)
MAX_RETRY_AFTER = 60.0


def server_error(exc: BaseException) -> int | None:
    """The status the hub answered somewhere in an exception's chain that is worth another try
    (a 5xx, or 429 rate-limiting), or None."""
    for e in _chain(exc):
        code = getattr(getattr(e, "response", None), "status_code", None)
        if isinstance(code, int) and code in RETRY_STATUS:
            return code
        found = re.search(r"\b(50[0234]|429) (?:Server|Client) Error", str(e))  # a wrapper that kept only the text
        if found:
            return int(found.group(1))
    return None


def retry_after(exc: BaseException) -> float | None:
    """The seconds the hub's Retry-After asks for, from the first response in the chain that sends one."""
    for e in _chain(exc):
        wait = parse_retry_after(getattr(getattr(e, "response", None), "headers", None))
        if wait is not None:
            return wait
    return None


def retrying(call, what: str, waits: tuple[float, ...] = RETRY_WAITS):
    """call() again after each wait while the hub answers 5xx or 429, saying so in one line each
    time; a Retry-After the hub sends replaces the wait (up to MAX_RETRY_AFTER; a longer one gives
    up at once). The last failure propagates (explain() words it). Any other failure propagates at once."""
    for attempt, wait in enumerate((*waits, None), start=1):
        try:
            return call()
        except Exception as exc:
            code = server_error(exc)
            if code is None or wait is None:
                raise
            asked = retry_after(exc)
            if asked is not None and asked > MAX_RETRY_AFTER:
                raise
            wait = wait if asked is None else asked
            logging.getLogger("maeb").warning(
                "%s: the hub answered HTTP %d; retrying in %g s (retry %d of %d)", what, code, wait, attempt, len(waits)
            )
            time.sleep(wait)
    raise AssertionError("unreachable")  # the loop returns or raises


def first_line(exc: BaseException) -> str:
    """The first non-empty line of an exception's message, or its class name when it has none."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    return redact(lines[0]) if lines else type(exc).__name__  # the hub clients' messages quote full URLs


def _chain(exc: BaseException):
    seen = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__


def explain(exc: BaseException, kind: str, repo: str, revision: str | None) -> str | None:
    """One line for a failed download of `kind` ("dataset" or "model") `repo` at `revision`:
    which repository and what to do; None when the failure is not the hub's (a bad file, a
    missing split: the caller's own message says more)."""
    from huggingface_hub.errors import GatedRepoError, OfflineModeIsEnabled, RepositoryNotFoundError, RevisionNotFoundError

    url = redact(endpoint())  # what the lines show; probe() below asks the real one
    name = f"{kind} {repo}"
    at = f"{name}@{revision or 'main'}"
    page = f"{url}/{'datasets/' if kind == 'dataset' else ''}{repo}"
    where = "the spec's data.path" if kind == "dataset" else "the model's name"
    pin = "the spec's data.revision" if kind == "dataset" else "the entry's revision (or --model-revision)"
    local = "point the spec's data.path at a local copy" if kind == "dataset" else "set the model's `path` option to a local copy"
    chain = list(_chain(exc))
    for e in chain:
        if isinstance(e, OSError) and e.errno == errno.ENOSPC:
            target = f" ({e.filename})" if e.filename else ""
            return (
                f"no space left on the device while downloading {at}{target}: free space there, or point HF_HOME "
                "(downloads) and --cache-dir at a disk with room, and run the same command again"
            )
    code = server_error(exc)
    if code == 429:
        asked = retry_after(exc)
        if asked is not None and asked > MAX_RETRY_AFTER:
            return (
                f"the hub at {url} is rate-limiting downloads of {at} (HTTP 429) and asks to wait {asked:g} s, longer than "
                f"maeb waits ({MAX_RETRY_AFTER:g} s): run the same command again later (finished tasks are kept); logged in "
                "(`hf auth login` or HF_TOKEN), the hub's limits are higher"
            )
        return (
            f"the hub at {url} rate-limited downloads of {at} (HTTP 429) on each of {len(RETRY_WAITS) + 1} tries: run the same "
            "command again later (finished tasks are kept); logged in (`hf auth login` or HF_TOKEN), the hub's limits are higher"
        )
    if code is not None:
        tries = len(RETRY_WAITS) + 1
        return (
            f"the hub at {url} answered HTTP {code} for {at} on each of {tries} tries over {sum(RETRY_WAITS):g} s: it is "
            "reachable but failing; run the same command again later (finished tasks are kept)"
        )
    gated = f"{name} is gated: accept its conditions at {page}, then log in (`hf auth login` or HF_TOKEN) and run again"
    refused = f"{name} is gated and your token has no access yet: request access at {page}, then run again"
    moved = f"{name} has no revision {revision} on {url}: check {pin}"
    missing = f"{name} does not exist on {url} (or is private): check {where}; for a private repository log in (`hf auth login` or HF_TOKEN)"
    for e in chain:
        if isinstance(e, GatedRepoError):
            return refused if getattr(getattr(e, "response", None), "status_code", None) == 403 else gated
        if isinstance(e, RevisionNotFoundError):
            return moved
        if isinstance(e, RepositoryNotFoundError):
            return missing
        if type(e).__name__ == "DatasetNotFoundError":  # datasets re-raises it `from None`: its text is all that is left
            text = str(e)
            if "is a gated dataset" in text:
                return refused if "ask for access" in text else gated
            if text.startswith("Revision '"):
                return moved
            if "doesn't exist on the Hub" in text:
                return missing
    offline = _active.offline if _active is not None else None
    unreachable = any(
        isinstance(e, (OfflineModeIsEnabled, ConnectionError, TimeoutError))
        or type(e).__name__ in ("LocalEntryNotFoundError", "ConnectError", "ConnectTimeout", "ReadTimeout")
        for e in chain
    )
    if unreachable:
        why = offline or probe(endpoint())
        if why:
            hint = "unset HF_HUB_OFFLINE to download it" if why.startswith("HF_HUB_OFFLINE") else "go online once to download it"
            return f"{at} is not in the local cache and the hub cannot be reached ({why}): {hint} (later runs use the cache), or {local}"
        return f"cannot download {at} from {url} ({type(exc).__name__}: {first_line(exc)}); check the network and run the same command again"
    return None


# -- what the hub cache holds of a pinned revision, and whether its bytes are the declared ones ------
def _repo_cache(repo: str, kind: str = "dataset") -> Path:
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE) / f"{kind}s--{repo.replace('/', '--')}"


def cached_commit(repo: str, revision: str, kind: str = "dataset") -> str | None:
    """The commit of `revision` whose files huggingface_hub's cache holds, or None: a commit is
    cached when its snapshot folder is there, a branch or tag when its ref names such a commit."""
    folder = _repo_cache(repo, kind)
    commit = revision
    if not re.fullmatch(r"[0-9a-f]{40}", revision):
        try:
            commit = (folder / "refs" / revision).read_text(encoding="utf-8").strip()
        except (OSError, ValueError):
            return None
    return commit if (folder / "snapshots" / commit).is_dir() else None


def require_cached(repo: str, revision: str | None, why: str | None) -> None:
    """Offline (`why` says why), a pinned revision must be in the cache: datasets would otherwise
    load whatever revision it cached last and the result would record the pinned one."""
    from ..core.errors import DataError

    if why is None or revision is None or cached_commit(repo, revision) is not None:
        return
    hint = "unset HF_HUB_OFFLINE to download it" if why.startswith("HF_HUB_OFFLINE") else "go online once to download it"
    raise DataError(
        f"dataset {repo}@{revision} is not in the local cache and the hub cannot be reached ({why}); another cached "
        f"revision is not used in its place: {hint}, or point the spec's data.path at a local copy"
    )


def _declared_digest(blob: Path) -> str | None:
    """The hash of a cached file's bytes in the form the hub declared it: huggingface_hub names
    each blob by its ETag, the sha256 for LFS files and the git blob id for others."""
    name = blob.name
    if re.fullmatch(r"[0-9a-f]{64}", name):
        digest = hashlib.sha256()
    elif re.fullmatch(r"[0-9a-f]{40}", name):
        digest = hashlib.sha1(b"blob %d\0" % blob.stat().st_size)  # noqa: S324 (git's own id, not for security)
    else:
        return None
    with open(blob, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def mismatched_files(repo: str, revision: str | None, verified: Path) -> list[tuple[str, Path, str]]:
    """The files of the cached snapshot of `repo`@`revision` whose bytes are not what the hub
    declared: (path in the repo, blob, the digest found). Blobs checked once are remembered in
    `verified` (a folder of empty files named by the digest), so a rerun does not hash them again."""
    commit = cached_commit(repo, revision or "main")
    if commit is None:
        return []
    snapshot = _repo_cache(repo) / "snapshots" / commit
    bad = []
    for link in sorted(snapshot.rglob("*")):
        if not link.is_symlink() or not link.is_file():
            continue  # (without symlinks, huggingface_hub copies files and their ETag is not kept)
        blob = link.resolve()
        mark = verified / f"{blob.name}-{blob.stat().st_size}"
        if mark.exists():
            continue
        found = _declared_digest(blob)
        if found is None:
            continue
        if found != blob.name:
            bad.append((link.relative_to(snapshot).as_posix(), blob, found))
            continue
        with contextlib.suppress(OSError):
            verified.mkdir(parents=True, exist_ok=True)
            mark.touch()
    return bad


def forget(repo: str, revision: str | None, blob: Path, path: str) -> None:
    """Remove a cached file (its blob and its snapshot link), so the next load downloads it again."""
    commit = cached_commit(repo, revision or "main")
    for target in (blob, _repo_cache(repo) / "snapshots" / (commit or "-") / path):
        with contextlib.suppress(OSError):
            target.unlink()
