"""Identities computed from everything that can change a vector or a score, so that a cache entry
or a result file is never reused for a run it does not describe.

- encoder identity (keys the embedding cache): model name, revision and family, the entry's options
  merged with --option overrides (a local weights path also by its content), the wrapper's
  config(), the audio pipeline (decoder, resampler, cut rule), the protocol, the versions of the
  packages the family runs on, and the device type.
- run identity (keys a result file): the declared part of the encoder identity (everything known
  without loading the model), the task's data, transforms, derivation and protocol parameters, and
  the evaluator version. A result whose run identity differs is not skipped: the run stops and
  names what changed."""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Mapping
from dataclasses import asdict, is_dataclass
from importlib import metadata
from pathlib import Path

# bump when decoding, resampling or cutting changes the arrays an encoder receives
PIPELINE_VERSION = 2
# bump when an evaluator changes a score for the same vectors
EVALUATOR_VERSION = 2

# options that are local paths to weights; their content joins the identity
PATH_OPTIONS = ("path", "weights_path", "checkpoint", "text_path")


# query parameters that carry credentials (?api_key=..., ?token=..., ?sig=...): a URL is written
# into cache identities, result files and error lines, so their values are replaced
_SECRET_PARAM = re.compile(r"(key|token|secret|passw|pwd|auth|sig|credential|session)", re.I)
REDACTED = "REDACTED"


# a URL inside any text (an error, a log line), and what ends a sentence after it rather than the URL
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")
_TRAILING = ".,;:)]}"
# a credential header as a message or a repr may quote it (Authorization: Bearer ..., 'x-api-key': '...')
_HEADER = re.compile(
    r"(?i)\b((?:proxy-)?authorization|x-api-key|api-key)(['\"]?\s*[:=]\s*['\"]?)((?:bearer|basic|token)\s+)?[^\s'\",}]+"
)
_BEARER = re.compile(r"\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}")  # (case kept: "bearer" is also an English word)


def redact(text: str) -> str:
    """`text` (a URL, an endpoint, a header, an error or a log line) without credentials: in every URL
    user:password@ dropped and secret-looking query values replaced by REDACTED (redact_url), and
    the values of credential headers and Bearer tokens replaced. The one function every endpoint,
    URL or header goes through before it reaches a result, a cache identity, a log or an error line;
    text without credentials comes back unchanged (so existing cache keys stay valid)."""
    text = _URL_IN_TEXT.sub(_redact_match, str(text))
    text = _HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3) or ''}{REDACTED}", text)
    return _BEARER.sub(lambda m: f"{m.group(1)}{REDACTED}", text)


def _redact_match(match: re.Match) -> str:
    found = match.group(0)
    url = found.rstrip(_TRAILING)
    return redact_url(url) + found[len(url) :]


def redact_url(url: str) -> str:
    """One URL without credentials: user:password@ dropped, secret-looking query values replaced by
    REDACTED; unchanged without them. redact() applies it to every URL of a text: call that."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc.rsplit("@", 1)[-1] if "@" in parts.netloc else parts.netloc
    query = parts.query
    pairs = parse_qsl(query, keep_blank_values=True)
    if any(_SECRET_PARAM.search(k) for k, _ in pairs):
        query = urlencode([(k, REDACTED if _SECRET_PARAM.search(k) else v) for k, v in pairs])
    if (netloc, query) == (parts.netloc, parts.query):
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def http_url(value) -> str | None:
    """`value` when it is an http:// or https:// URL, else None: what a `reference` field may be
    where a page links it or a result records it (javascript:, data: or file: would be a live link)."""
    text = value.strip() if isinstance(value, str) else ""
    return text if re.fullmatch(r"(?i)https?://[^\s<>\"'`]+", text) else None


def public_option(value):
    """An option's value as identities, folder names and results may hold it: credentials redacted."""
    return redact(value) if isinstance(value, str) else value


# an environment variable's name: what `api_key_env` and friends must hold (never the key itself)
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEY_PREFIXES = ("sk-", "sk_", "ghp_", "gho_", "github_pat_", "hf_", "xox", "AKIA", "AIza", "glpat-", "Bearer ")


def looks_like_key(value: str) -> bool:
    """True when a value given as an environment variable's name looks like a key pasted in its place:
    not a variable name, a known key prefix, or long and mixed-case with digits (names are UPPER_CASE)."""
    text = str(value)
    if not _ENV_NAME.fullmatch(text) or text.startswith(_KEY_PREFIXES):
        return True
    return len(text) >= 24 and any(c.islower() for c in text) and any(c.isdigit() for c in text)


def check_env_options(options: Mapping, where: str = "--option") -> None:
    """Refuse, in one line that does not repeat it, a key pasted where an option names the
    environment variable holding it (api_key_env=sk-...): the value would land in folder names,
    results and the cache."""
    from .errors import MaebError

    for key, value in options.items():
        if str(key).endswith("_env") and value is not None and looks_like_key(str(value)):
            raise MaebError(
                f"{where} {key}= holds what looks like a secret key itself (not shown here); give the NAME of the environment "
                f"variable that holds the key (for example {key}=OPENAI_API_KEY) and export the key in that variable"
            )


def digest(value, size: int = 16) -> str:
    """A short sha256 hex digest of a JSON-able value (keys sorted), for cache and experiment identities."""
    blob = json.dumps(value, sort_keys=True, default=_plain, ensure_ascii=False).encode()
    return hashlib.sha256(blob).hexdigest()[:size]


def _plain(value):
    if is_dataclass(value):
        return asdict(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if isinstance(value, Path):
        return str(value)
    return str(value)


def versions(packages) -> dict[str, str]:
    """The installed version of each named package ("not installed" when absent), for the result file."""
    out = {}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


_fingerprint_lock = threading.Lock()
_fingerprints: dict[str, str] = {}  # "path\0size\0mtime" -> blake2b of the file


def path_fingerprint(path: str, memo_dir: Path | None = None) -> dict:
    """A local file or folder of weights by content: a fine-tuned checkpoint at another path, or
    new weights written over the same path, gets another identity. Each file's hash is remembered
    per (path, size, mtime) for the life of the process, and in memo_dir (the run's cache folder)
    across runs, so a job per task does not reread a 15 GB checkpoint to name it."""
    target = Path(os.path.expanduser(str(path)))
    if not target.exists():
        return {"path": str(path), "content": "missing"}
    files = [target] if target.is_file() else sorted(p for p in target.rglob("*") if p.is_file())
    h = hashlib.blake2b(digest_size=16)
    for file in files:
        rel = file.name if target.is_file() else str(file.relative_to(target))
        h.update(f"{rel}\0{_file_hash(file, memo_dir)}\0".encode())
    return {"path": str(target.resolve()), "content": h.hexdigest()}


def _file_hash(file: Path, memo_dir: Path | None) -> str:
    stat = file.stat()
    key = f"{file.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}"
    with _fingerprint_lock:
        known = _fingerprints.get(key)
    if known is None and memo_dir is not None:
        known = _memo_get(memo_dir, key)
    if known is None:
        digest = hashlib.blake2b(digest_size=16)
        with open(file, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 22), b""):
                digest.update(block)
        known = digest.hexdigest()
        if memo_dir is not None:
            _memo_put(memo_dir, key, known)
    with _fingerprint_lock:
        _fingerprints[key] = known
    return known


def _memo_db(memo_dir: Path):
    import sqlite3

    Path(memo_dir).mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(Path(memo_dir) / "file-hashes.sqlite", timeout=30)
    db.execute("CREATE TABLE IF NOT EXISTS hashes (key TEXT PRIMARY KEY, hash TEXT NOT NULL)")
    return db


def _memo_get(memo_dir: Path, key: str) -> str | None:
    """A remembered hash, or None (also when the memo cannot be read: the file is then hashed)."""
    import sqlite3

    try:
        db = _memo_db(memo_dir)
        try:
            row = db.execute("SELECT hash FROM hashes WHERE key = ?", (key,)).fetchone()
        finally:
            db.close()
    except (sqlite3.Error, OSError):
        return None
    return row[0] if row and len(row[0]) == 32 else None


def _memo_put(memo_dir: Path, key: str, value: str) -> None:
    import sqlite3

    try:
        db = _memo_db(memo_dir)
        try:
            with db:
                db.execute("INSERT OR REPLACE INTO hashes VALUES (?, ?)", (key, value))
        finally:
            db.close()
    except (sqlite3.Error, OSError):
        pass  # a read-only or full cache folder: the hash is only not remembered


METADATA_SUFFIXES = {".csv", ".tsv", ".json", ".jsonl", ".txt", ".toml", ".yaml", ".yml"}


def folder_content(folder: str | Path, small: int = 64 << 20) -> str:
    """A local dataset folder by its relative file names and sizes, and the full content of its
    metadata files: moving or copying the folder keeps the signature, editing its metadata or
    replacing a clip by one of another size changes it (the result's input fingerprint, computed
    from every clip's bytes, tells the rest)."""
    root = Path(folder)
    h = hashlib.blake2b(digest_size=16)
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = file.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        size = file.stat().st_size
        h.update(f"{rel}\0{size}\0".encode())
        if file.suffix.lower() in METADATA_SUFFIXES and size <= small:
            h.update(file.read_bytes())
    return h.hexdigest()


def performance_options(meta) -> frozenset[str]:
    """The options a model's family declares do not change its vectors (maeb.encoders.family.Family
    .performance, read through the entry): left out of the declared identity and the experiment
    settings, so a batch size never splits the cache or moves results to the experiments folder.
    No family declared one before this rule, so every existing cache key and result identity holds."""
    return frozenset(getattr(meta, "performance_options", ()))


def merged_options(meta, overrides: Mapping) -> dict:
    """The model's registered options with the run's overrides on top."""
    return {**meta.options, **dict(overrides)}


def experiment_settings(
    meta,
    overrides: Mapping,
    protocol: str,
    default_protocol: str,
    resampler: str | None = None,
    call_batch_size: int | None = None,
    perturbation: str | None = None,
    window: str | None = None,
) -> dict:
    """The settings of a run that differ from the registered entry (results go to mteb's
    experiments folder under them): changed options (--precision arrives as the dtype option), a
    weights path by name and content, a protocol other than the default, a resampler other than
    the protocol's, a batch size other than mteb's for families batched in call order, and a
    perturbation chain (its canonical string), so a perturbed result never sits where the clean
    one does, and a long-audio window policy (maeb.audio.windows) other than the head cut. The
    family's performance options are left out (performance_options)."""
    out: dict[str, object] = {}
    knobs = performance_options(meta)
    for key, value in sorted(dict(overrides).items()):
        if meta.options.get(key) == value or key in knobs:
            continue
        if key in PATH_OPTIONS and value:
            shown = path_fingerprint(value)
            out[key] = f"{Path(shown['path']).name}@{str(shown['content'])[:8]}"
        else:
            out[key] = public_option(value)
    if protocol != default_protocol:
        out["protocol"] = protocol
    if resampler:
        out["resampler"] = resampler
    if call_batch_size:
        out["call_batch_size"] = call_batch_size
    if perturbation:
        out["perturb"] = perturbation
    if window:
        out["long_audio"] = window
    return out


def declared_identity(
    meta,
    options: Mapping,
    protocol: str,
    resampler: str | None = None,
    call_batch_size: int | None = None,
    memo_dir: Path | None = None,
) -> dict:
    """What is known about an encoder without loading it (resampler: None for the protocol's own;
    call_batch_size: None for mteb's batches of the families batched in call order). The family's
    performance options are left out: they do not change a vector (performance_options)."""
    shown = {}
    knobs = performance_options(meta)
    for key, value in sorted(options.items()):
        if key in knobs:
            continue
        shown[key] = path_fingerprint(value, memo_dir) if key in PATH_OPTIONS and value else public_option(value)
    return {
        "name": meta.name,
        "revision": str(meta.revision),
        "family": meta.family,
        "options": shown,
        "protocol": protocol,
        **({"resampler": resampler} if resampler else {}),
        **({"call_batch_size": call_batch_size} if call_batch_size else {}),
        "pipeline": PIPELINE_VERSION,
    }


def requirement_name(text: str) -> str:
    """The distribution a pip requirement string names ("torch>=2.1" -> "torch")."""
    return re.split(r"[<>=!~ ;\[]", text.strip(), maxsplit=1)[0]


def encoder_identity(declared: dict, encoder, policy, device: str, requires: tuple[str, ...] = ()) -> dict:
    """The embedding cache's key: the declared identity plus what the loaded wrapper reports.
    requires: the pip requirements the model's family (and entry) declare; their installed versions
    join the key beside the wrapper's own `software` list, so a wrapper that forgets to list its
    package does not keep serving vectors after that package changes."""
    config = encoder.config() if callable(getattr(encoder, "config", None)) else {}
    declared_packages = (requirement_name(r) for r in requires)
    software = ("numpy", "soundfile", "soxr", *getattr(encoder, "software", ()), *declared_packages)
    return {
        **declared,
        "config": config,
        "audio": None if policy is None else policy.describe(),
        "software": versions(dict.fromkeys(software)),
        "device": str(device).split(":")[0],
    }


def task_identity(spec, variables: dict | None = None) -> dict:
    """Everything in a task spec that decides its data and score (not its descriptions)."""
    data = {k: v for k, v in asdict(spec.data).items() if k != "base"}
    location = spec.data.location(variables)
    if Path(location).is_dir():
        data["path"] = Path(location).name  # where a folder lies does not change a score; its content does
        data["content"] = folder_content(location)
    return {
        "name": spec.name,
        "type": spec.type,
        "main_score": spec.main_score,
        "data": data,
        "transforms": spec.transforms,
        "derive": spec.derive,
        "protocol": spec.protocol,
    }


def run_identity(
    declared: dict, spec, variables: dict | None = None, perturbation: str | None = None, window: str | None = None
) -> dict:
    """perturbation: the canonical string of a maeb.audio.perturb chain (absent for a clean run, whose
    identity is unchanged by the robustness axis); window: a maeb.audio.windows policy other than the
    head cut, likewise."""
    task = task_identity(spec, variables)
    base = {"encoder": declared, "task": task, "evaluator": EVALUATOR_VERSION}
    if perturbation:
        base["perturbation"] = perturbation
    if window:
        base["window"] = window
    return {**base, "hash": digest(base)}


def differences(old: dict | None, new: dict, prefix: str = "") -> list[str]:
    """Readable list of what differs between two recorded identities."""
    if not isinstance(old, dict):
        return [f"{prefix or 'identity'}: not recorded in the existing file"]
    out = []
    for key in sorted(set(old) | set(new)):
        if key == "hash":
            continue
        where = f"{prefix}.{key}" if prefix else key
        a, b = old.get(key, "<absent>"), new.get(key, "<absent>")
        if isinstance(a, dict) and isinstance(b, dict):
            out += differences(a, b, where)
        elif json.dumps(a, sort_keys=True, default=str) != json.dumps(b, sort_keys=True, default=str):
            out.append(f"{where}: {_short(a)} -> {_short(b)}")
    return out


def _short(value) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 80 else text[:77] + "..."
