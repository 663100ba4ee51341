"""A local stand-in for the Hugging Face Hub's HTTP API: the part that huggingface_hub 2.x and
datasets 5.x call to download a repository at a revision, served from folders on 127.0.0.1, so the
real download path (HF_ENDPOINT=http://127.0.0.1:PORT) runs in tests.

What it speaks, read from those libraries' code (huggingface_hub: file_download.py, hf_api.py,
hf_file_system.py, utils/_http.py; datasets: load.py, utils/file_utils.py):
- GET /api/{models|datasets}/{org}/{name}[/revision/{rev}]: repository info (id, sha, siblings).
- GET /api/{type}s/{org}/{name}/tree/{rev}[/{path}]?recursive=&expand=: a folder's entries.
- POST /api/{type}s/{org}/{name}/paths-info/{rev} (form: paths=..., expand=): entries by path.
- GET /api/{type}s/{org}/{name}/commits/{rev} and /refs: the one commit and the main branch.
- HEAD/GET /[datasets/]{org}/{name}/resolve/{rev}/{path}: a file. Small files answer 200 with
  ETag (the git blob id) and X-Repo-Commit; large binary files (the hub's LFS files: parquet,
  safetensors, ...) answer 302 to a second listener standing in for the CDN (another origin, as
  on the hub, so the client does not follow the HEAD's redirect and reads X-Linked-Etag,
  X-Linked-Size and X-Repo-Commit from it), which serves the bytes with Range support.
- Errors shaped like the hub's, so the clients raise their real exceptions: an unknown
  repository 401 with X-Error-Code RepoNotFound, a gated one 401 (no token) or 403 (a token
  without access) with GatedRepo (its README.md and .gitattributes stay readable, as on the hub),
  an unknown revision 404 RevisionNotFound, a missing file 404 EntryNotFound with X-Repo-Commit.

Each repository has one commit: its sha is the revision the catalog pins, and `main` points at
it. Every request is logged (method, path, status, body bytes, Range) so tests count what was
downloaded, and faults can be armed: drop a file's connection after N bytes (the client resumes
with a Range request), or stall it (a test kills the client mid-download)."""

from __future__ import annotations

import email.utils
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

# what the hub stores in LFS (and serves through its CDN) among the files these repositories hold
LFS_SUFFIXES = (
    ".parquet",
    ".arrow",
    ".safetensors",
    ".bin",
    ".pt",
    ".pth",
    ".onnx",
    ".tar",
    ".zip",
    ".gz",
    ".wav",
    ".flac",
    ".mp3",
)
OPEN_WHEN_GATED = ("README.md", ".gitattributes")  # the hub shows a gated repository's card to everyone
DATE = "2024-01-01T00:00:00.000Z"


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Repo:
    """One repository: its files (a folder), its one commit and who may read it."""

    kind: str  # "model" or "dataset"
    repo_id: str  # "org/name"
    sha: str  # 40 hex digits: the commit every revision of this repo resolves to
    root: Path
    gated: bool = False
    tokens: frozenset[str] = frozenset()  # tokens with access to a gated repo
    _entries: dict | None = field(default=None, repr=False)

    def files(self) -> dict[str, dict]:
        """path -> {size, oid, sha256 (LFS only), file}; read once."""
        if self._entries is None:
            entries = {}
            for path in sorted(p for p in Path(self.root).rglob("*") if p.is_file()):
                rel = path.relative_to(self.root).as_posix()
                if rel.startswith(".git/"):
                    continue
                data = path.read_bytes()
                entry = {"size": len(data), "oid": git_blob_id(data), "file": path}
                if rel.endswith(LFS_SUFFIXES):
                    entry["sha256"] = hashlib.sha256(data).hexdigest()
                entries[rel] = entry
            self._entries = entries
        return self._entries

    def folders(self) -> set[str]:
        return {"/".join(p.split("/")[:i]) for p in self.files() for i in range(1, p.count("/") + 1)}

    def info_entry(self, path: str) -> dict | None:
        """The tree / paths-info entry of a file or folder, or None."""
        files = self.files()
        if path in files:
            f = files[path]
            out = {"type": "file", "oid": f["oid"], "size": f["size"], "path": path}
            if "sha256" in f:
                out["lfs"] = {"oid": f["sha256"], "size": f["size"], "pointerSize": 134}
            return out
        if path in self.folders():
            return {
                "type": "directory",
                "oid": hashlib.sha1(f"tree {self.repo_id} {path}".encode()).hexdigest(),
                "size": 0,
                "path": path,
            }
        return None


@dataclass
class Logged:
    method: str
    path: str
    status: int
    sent: int  # body bytes written
    range: str | None
    port: int  # which listener: the hub's or the CDN's


@dataclass
class Fault:
    """Armed on the next GETs of file bodies whose path ends with `suffix`."""

    suffix: str
    after: int  # body bytes sent before the fault
    kind: str  # "drop": close the connection; "stall": wait until released
    times: int = 1
    hit: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


class HubServer:
    """The hub on 127.0.0.1 (and its CDN on a second port). Use as a context manager, or
    start()/stop(); `endpoint` is what HF_ENDPOINT takes."""

    def __init__(self):
        self.repos: dict[tuple[str, str], Repo] = {}
        self.log: list[Logged] = []
        self.faults: list[Fault] = []
        self.tampered: dict[str, bytes] = {}  # path suffix -> bytes served in place of the file's own
        self.lock = threading.Lock()
        self._servers: list[ThreadingHTTPServer] = []

    # set-up
    def add(self, kind: str, repo_id: str, sha: str, root: Path, gated: bool = False, tokens=()) -> Repo:
        if kind not in ("model", "dataset"):
            raise ValueError(f"kind is model or dataset, not {kind!r}")
        if len(sha) != 40 or any(c not in "0123456789abcdef" for c in sha):
            raise ValueError(f"{repo_id}: a commit sha has 40 hex digits, not {sha!r}")
        repo = Repo(kind, repo_id, sha, Path(root), gated, frozenset(tokens))
        self.repos[(kind, repo_id)] = repo
        return repo

    def arm(self, suffix: str, after: int, kind: str = "drop", times: int = 1) -> Fault:
        fault = Fault(suffix, after, kind, times)
        with self.lock:
            self.faults.append(fault)
        return fault

    def tamper(self, suffix: str, data: bytes) -> None:
        """Serve `data` as the body of files whose path ends with `suffix`, while the listings and
        headers still declare the file's own size, sha256 and ETag (a corrupting proxy or CDN)."""
        with self.lock:
            self.tampered[suffix] = data

    def start(self) -> HubServer:
        for role in ("hub", "cdn"):
            server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self, role))
            server.daemon_threads = True
            threading.Thread(target=server.serve_forever, name=f"hub-{role}", daemon=True).start()
            self._servers.append(server)
        return self

    def stop(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()
        self._servers = []
        for fault in self.faults:
            fault.release.set()

    def __enter__(self) -> HubServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._servers[0].server_address[1]}"

    @property
    def cdn(self) -> str:
        return f"http://127.0.0.1:{self._servers[1].server_address[1]}"

    # what happened
    def requests(self) -> list[Logged]:
        with self.lock:
            return list(self.log)

    def clear_log(self) -> None:
        with self.lock:
            self.log.clear()

    def downloads(self) -> list[Logged]:
        """GETs that sent file bytes (a small file from the hub, or a large one from the CDN)."""
        return [
            r for r in self.requests() if r.method == "GET" and r.sent and ("/resolve/" in r.path or r.path.startswith("/cdn/"))
        ]

    def unhandled(self) -> list[Logged]:
        """Requests for an endpoint this server does not speak (a gap to fill, not a hub answer)."""
        return [r for r in self.requests() if r.status == 501]

    def _take_fault(self, path: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.times > 0 and path.endswith(fault.suffix):
                    fault.times -= 1
                    return fault
        return None


def _handler(hub: HubServer, role: str):
    class Handler(_HubHandler):
        pass

    Handler.hub = hub
    Handler.role = role
    return Handler


class _HubHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the clients expect; every answer has a length
    hub: HubServer
    role: str

    def log_message(self, *args) -> None:  # the request log is hub.log
        pass

    # plumbing
    def _record(self, status: int, sent: int) -> None:
        with self.hub.lock:
            self.hub.log.append(
                Logged(self.command, self.path, status, sent, self.headers.get("Range"), self.server.server_address[1])
            )

    def _send(self, status: int, body: bytes = b"", headers: dict | None = None, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        # recorded before the body goes out: a client that has read the whole answer finds it in the log
        # (recorded after, a test that looked at once lost the race on a loaded machine)
        self._record(status, 0 if self.command == "HEAD" else len(body))
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, payload, status: int = 200, headers: dict | None = None) -> None:
        self._send(status, json.dumps(payload).encode(), headers)

    def _error(self, status: int, code: str | None, message: str, headers: dict | None = None) -> None:
        extra = {"X-Error-Message": message, **(headers or {})}
        if code:
            extra["X-Error-Code"] = code
        self._json({"error": message}, status, extra)

    def _repo(self, kind: str, repo_id: str) -> Repo | None:
        repo = self.hub.repos.get((kind, repo_id))
        if repo is None:
            # the hub answers 401 for a repository it does not show an anonymous caller
            self._error(401, "RepoNotFound", "Repository not found")
        return repo

    def _revision(self, repo: Repo, rev: str) -> bool:
        if unquote(rev) in (repo.sha, "main"):
            return True
        self._error(404, "RevisionNotFound", f"Invalid rev id: {unquote(rev)}")
        return False

    def _may_read(self, repo: Repo, path: str) -> bool:
        if not repo.gated or path in OPEN_WHEN_GATED:
            return True
        auth = self.headers.get("Authorization", "")
        token = auth[len("Bearer ") :] if auth.startswith("Bearer ") else None
        if token in repo.tokens:
            return True
        what = f"{repo.kind} {repo.repo_id}"
        if token is None:
            self._error(
                401,
                "GatedRepo",
                f"Access to {what} is restricted. You must have access to it and be authenticated to access it. Please log in.",
            )
        else:
            self._error(
                403,
                "GatedRepo",
                f"Access to {what} is restricted and you are not in the authorized list. Visit its page to ask for access.",
            )
        return False

    # routes
    def do_HEAD(self) -> None:
        self._route()

    def do_GET(self) -> None:
        self._route()

    def do_POST(self) -> None:
        self._route()

    def _route(self) -> None:
        url = urlsplit(self.path)
        parts = [p for p in url.path.split("/") if p]
        try:
            if self.role == "cdn":
                return self._cdn(parts)
            if not parts:  # the home page: what maeb's reachability probe asks for
                return self._send(200, b"<!doctype html><title>test hub</title>", content_type="text/html")
            if parts == ["api", "agent-harnesses"]:  # huggingface_hub's user-agent registry: an empty one
                return self._json({"standardEnvVars": [], "harnesses": {}})
            if parts[:1] == ["api"] and len(parts) >= 4 and parts[1] in ("models", "datasets"):
                return self._api(parts[1][:-1], f"{parts[2]}/{parts[3]}", parts[4:], parse_qs(url.query))
            kind = "model"
            if parts[:1] == ["datasets"]:
                kind, parts = "dataset", parts[1:]
            if len(parts) >= 5 and parts[2] == "resolve":
                return self._resolve(kind, f"{parts[0]}/{parts[1]}", parts[3], "/".join(unquote(p) for p in parts[4:]))
        except (BrokenPipeError, ConnectionResetError):
            return
        self._send(501, b"not spoken by this test hub", content_type="text/plain")

    def _api(self, kind: str, repo_id: str, rest: list[str], query: dict) -> None:
        if self.command == "POST":
            length = int(self.headers.get("Content-Length") or 0)
            form = parse_qs(self.rfile.read(length).decode()) if length else {}
        repo = self._repo(kind, repo_id)
        if repo is None:
            return
        if not rest or rest[0] == "revision":
            if rest and not self._revision(repo, "/".join(rest[1:])):
                return
            return self._json(self._info(repo))
        what, rev, sub = rest[0], (rest[1] if len(rest) > 1 else "main"), "/".join(unquote(p) for p in rest[2:])
        if what == "refs":
            return self._json(
                {"branches": [{"name": "main", "ref": "refs/heads/main", "targetCommit": repo.sha}], "converts": [], "tags": []}
            )
        if not self._revision(repo, rev):
            return
        if what == "tree":
            if sub and sub not in repo.folders():
                return self._error(404, "EntryNotFound", f'{sub} does not exist on "{rev}"', {"X-Repo-Commit": repo.sha})
            recursive = query.get("recursive", ["false"])[0].lower() == "true"
            prefix = f"{sub}/" if sub else ""
            paths = sorted(repo.folders()) + list(repo.files())
            chosen = [p for p in paths if p.startswith(prefix) and (recursive or "/" not in p[len(prefix) :])]
            return self._json([repo.info_entry(p) for p in chosen])
        if what == "paths-info" and self.command == "POST":
            entries = [repo.info_entry(p) for p in form.get("paths", [])]
            return self._json([e for e in entries if e is not None])
        if what == "commits":
            return self._json([{"id": repo.sha, "title": "tiny test copy", "message": "", "authors": [], "date": DATE}])
        self._send(501, b"not spoken by this test hub", content_type="text/plain")

    def _info(self, repo: Repo) -> dict:
        siblings = [{"rfilename": p} for p in repo.files()]
        return {
            "_id": hashlib.sha1(repo.repo_id.encode()).hexdigest()[:24],
            "id": repo.repo_id,
            "sha": repo.sha,
            "private": False,
            "gated": "manual" if repo.gated else False,
            "disabled": False,
            "downloads": 0,
            "likes": 0,
            "tags": [],
            "lastModified": DATE,
            "createdAt": DATE,
            "siblings": siblings,
        }

    def _resolve(self, kind: str, repo_id: str, rev: str, path: str) -> None:
        repo = self._repo(kind, repo_id)
        if repo is None or not self._revision(repo, rev) or not self._may_read(repo, path):
            return
        entry = repo.files().get(path)
        commit = {"X-Repo-Commit": repo.sha}
        if entry is None:
            return self._error(404, "EntryNotFound", "Entry not found", commit)
        if "sha256" in entry:  # an LFS file: its bytes come from the CDN
            location = f"{self.hub.cdn}/cdn/{entry['sha256']}?repo={quote(repo.repo_id)}&file={quote(path)}"
            headers = {
                **commit,
                "Location": location,
                "X-Linked-Etag": f'"{entry["sha256"]}"',
                "X-Linked-Size": str(entry["size"]),
                "ETag": f'"{entry["oid"]}"',
            }
            return self._send(302, b"", headers, content_type="text/plain")
        self._file(entry, path, {**commit, "ETag": f'"{entry["oid"]}"'})

    def _cdn(self, parts: list[str]) -> None:
        if len(parts) != 2 or parts[0] != "cdn":
            return self._send(404, b"NoSuchKey", content_type="text/plain")
        for repo in self.hub.repos.values():
            for path, entry in repo.files().items():
                if entry.get("sha256") == parts[1]:
                    return self._file(entry, path, {"ETag": f'"{entry["sha256"]}"'})
        self._send(404, b"NoSuchKey", content_type="text/plain")

    def _file(self, entry: dict, path: str, headers: dict) -> None:
        """A file's bytes, or the Range asked for (206), with any fault armed for it."""
        data = Path(entry["file"]).read_bytes()
        with self.hub.lock:
            data = next((v for k, v in self.hub.tampered.items() if path.endswith(k)), data)
        size = len(data)
        start, status = 0, 200
        # one byte range, as the clients ask; a malformed or multi-range header, or one whose last
        # byte comes before its first, is ignored and the whole file sent (RFC 9110 14.2)
        wanted = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range") or "")
        first, last = wanted.groups() if wanted else ("", "")
        if (first or last) and not (first and last and int(last) < int(first)):
            start = int(first) if first else max(0, size - int(last))
            end = min(int(last), size - 1) if first and last else size - 1
            if start >= size or (not first and int(last) == 0):
                return self._send(416, b"", {"Content-Range": f"bytes */{size}"}, content_type="text/plain")
            data, status = data[start : end + 1], 206
            headers = {**headers, "Content-Range": f"bytes {start}-{start + len(data) - 1}/{size}"}
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Last-Modified", email.utils.formatdate(usegmt=True))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command == "HEAD":
            return self._record(status, 0)
        fault = self.hub._take_fault(path)
        if fault is not None and fault.after < len(data):
            self._record(status, fault.after)
            self.wfile.write(data[: fault.after])
            self.wfile.flush()
            fault.hit.set()
            if fault.kind == "stall":
                fault.release.wait(120)
            self.close_connection = True
            self.connection.shutdown(2)  # the client sees the body end early
            return
        self._record(status, len(data))
        self.wfile.write(data)
