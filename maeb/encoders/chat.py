"""OpenAI-compatible chat clients: the LLM judge and the transport for API-served audio models.

What happens to a request that goes wrong, by kind (decided here, once, for both uses):
- retried, with jittered exponential backoff (or after the server's Retry-After, in seconds or as an
  HTTP date) until `retries` retries or the item's time `budget` are spent: HTTP 408, 409, 425, 429,
  every 5xx, timeouts and connection errors;
- the item fails at once (other items go on): every other 4xx (400, 404, 413, 422, ...), a body that
  is not a chat completion, and, for the judge, an empty, refused or content-filtered reply;
- the whole run stops at once: 401, 402 and 403 (a bad key or an exhausted account fails every item,
  so asking the others would only repeat it), and a judge whose first SYSTEMATIC_AFTER items all
  failed with nothing answered (a wrong URL or model name is no item's fault).

The judge records the items that failed with their reasons and does not cache them, so a rerun asks
only those. Replies are cached on disk (SQLite) under a key made of the endpoint's base URL, the
judge model, the full prompt and the request options. API keys come from the environment and are
never written anywhere."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import random
import sqlite3
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from ..core.context import LOGGER
from ..core.download import parse_retry_after  # (also imported from here, as before)
from ..core.errors import MaebError

RETRY_STATUS = {408, 409, 425, 429}  # plus every 5xx
FATAL_STATUS = {401: "the API key was refused", 402: "payment required", 403: "access forbidden"}
MAX_DELAY = 60.0  # longest single backoff wait without a Retry-After (seconds)
SYSTEMATIC_AFTER = 8  # this many failed items and not one answered: the judge is broken, not the items
SHOWN_FAILURES = 5  # failure reasons kept in results and printed, per task


class ChatError(MaebError):
    """One request failed: after its retries and budget, or at once for a status not worth retrying."""

    def __init__(self, message: str, reason: str = ""):
        super().__init__(message)
        self.reason = reason or message


class EndpointRefused(ChatError):
    """401/402/403: every request would fail the same way, so the run stops."""


class _Stopped(Exception):
    """Another request of the same batch stopped the run; this one gives up without a reason of its own."""


@dataclass
class Endpoint:
    """An OpenAI-compatible chat endpoint (a judge, or a model served over HTTP): where it is, its API key variable, and how hard
    the client retries."""

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 120.0  # seconds per request (connecting, and each read of the reply)
    retries: int = 6  # retries after the first attempt
    budget: float = 600.0  # seconds one item may take over all its attempts and waits
    backoff: float = 1.0  # seconds before the first retry without a Retry-After; doubles each time
    role: str = "judge"  # named in error messages: "judge" or "model"

    def __post_init__(self) -> None:
        from ..core.identity import check_env_options

        check_env_options({"api_key_env": self.api_key_env}, f"{self.role} {self.model}:")

    @property
    def api_key(self) -> str | None:
        """The API key from the environment variable the endpoint names, or None."""
        return os.environ.get(self.api_key_env)

    @property
    def label(self) -> str:
        """How error messages name the endpoint: "judge MODEL at URL"."""
        return f"{self.role} {self.model} at {self.public_url}"

    @property
    def public_url(self) -> str:
        """base_url without credentials (user:password@, token query values): what lines and files show."""
        from ..core.identity import redact

        return redact(self.base_url)

    def public(self) -> dict:
        """What may be written into results: never the key, nor its variable's value."""
        return {"base_url": self.public_url, "model": self.model}


@dataclass
class Gate:
    """Shared by the threads of one client: after a 429 with Retry-After nobody sends before the
    server said to, instead of every thread discovering the limit on its own."""

    not_before: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def hold_until(self, moment: float) -> None:
        """Make every worker wait until `moment` (monotonic seconds) before its next request, e.g. after a Retry-After."""
        with self.lock:
            self.not_before = max(self.not_before, moment)

    def wait(self, deadline: float, stop: threading.Event | None) -> None:
        """Sleep until the gate opens or the deadline comes; stops early (raising _Stopped) when `stop` is set."""
        pause = min(self.not_before, deadline) - time.monotonic()
        if pause > 0 and _sleep(pause, stop):
            raise _Stopped


def _sleep(seconds: float, stop: threading.Event | None) -> bool:
    """Sleeps; True when the run was stopped meanwhile."""
    if stop is None:
        time.sleep(seconds)
        return False
    return stop.wait(seconds)


def _detail(exc: urllib.error.HTTPError) -> str:
    try:
        body = exc.read()[:300].decode("utf-8", "replace")
    except Exception:  # the body is only for the message
        body = ""
    return " ".join(body.split())


def _read_reply(body: dict, require_text: bool) -> str:
    """The reply text of a chat completion. For the judge (require_text) an empty, refused or
    content-filtered reply is an error: caching it would record a judgement that was never made."""
    choice = body["choices"][0]
    message = choice["message"]
    text = message.get("content") or ""
    if not isinstance(text, str):
        raise TypeError(f"content is a {type(text).__name__}")
    if require_text:
        refusal = message.get("refusal")
        if refusal:
            raise ValueError(f"refused: {' '.join(str(refusal).split())[:200]}")
        if choice.get("finish_reason") == "content_filter":
            raise ValueError("the reply was cut by the server's content filter")
        if not text.strip():
            raise ValueError(f"empty reply (finish_reason {choice.get('finish_reason')!r})")
    return text


def chat(
    endpoint: Endpoint,
    messages: list[dict],
    *,
    require_text: bool = False,
    gate: Gate | None = None,
    stop: threading.Event | None = None,
    **options,
) -> str:
    """One chat completion; returns the reply text or raises ChatError (EndpointRefused for 401-403)."""
    url = endpoint.base_url.rstrip("/") + "/chat/completions"
    payload = json.dumps({"model": endpoint.model, "messages": messages, **options}).encode()
    headers = {"Content-Type": "application/json"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    started = time.monotonic()
    deadline = started + endpoint.budget
    last, attempts = "no attempt", 0
    while True:
        if stop is not None and stop.is_set():
            raise _Stopped
        if gate is not None:
            gate.wait(deadline, stop)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            if attempts == 0:
                last = "the server's Retry-After outlasted the budget"
            break
        attempts += 1
        retry_after = None
        request = urllib.request.Request(url, data=payload, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=min(endpoint.timeout, remaining)) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            code = exc.code
            last = f"HTTP {code}" + (f": {_detail(exc)}" if code not in RETRY_STATUS else "")
            if code in FATAL_STATUS:
                hint = ""
                if code == 401:
                    unset = "" if endpoint.api_key else ", which is not set"
                    hint = f"; check the key in ${endpoint.api_key_env}{unset}"
                raise EndpointRefused(f"{endpoint.label}: {last} ({FATAL_STATUS[code]}{hint})", last) from exc
            if code not in RETRY_STATUS and code < 500:
                raise ChatError(f"{endpoint.label}: {last}", last) from exc
            retry_after = parse_retry_after(exc.headers)
        except (TimeoutError, urllib.error.URLError, http.client.HTTPException, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError) or isinstance(exc, TimeoutError) or "timed out" in str(reason):
                last = f"no reply within {min(endpoint.timeout, remaining):.3g} s"
            else:
                last = f"{type(exc).__name__}: {reason}"
        else:
            try:
                return _read_reply(json.loads(raw.decode()), require_text)
            except (KeyError, IndexError, TypeError, AttributeError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                reason = f"not a chat completion reply ({type(exc).__name__}: {exc})"
                raise ChatError(f"{endpoint.label}: {reason}", reason) from exc
            except ValueError as exc:  # empty, refused or filtered
                raise ChatError(f"{endpoint.label}: {exc}", str(exc)) from exc
        if attempts > endpoint.retries:
            break
        if retry_after is not None:
            # the server's own wait, plus up to 10% so threads that were told the same do not return in lockstep
            wait = retry_after * (1 + 0.1 * random.random())
            if gate is not None:
                gate.hold_until(time.monotonic() + retry_after)
        else:
            full = min(MAX_DELAY, endpoint.backoff * 2 ** (attempts - 1))
            wait = full / 2 + random.uniform(0, full / 2)
        if time.monotonic() + wait > deadline:
            last += f"; the next try (in {wait:.3g} s) would pass the {endpoint.budget:g} s budget"
            break
        if _sleep(wait, stop):
            raise _Stopped
    spent = time.monotonic() - started
    reason = f"failed after {attempts} attempt{'s' if attempts != 1 else ''} in {spent:.3g} s ({last})"
    raise ChatError(f"{endpoint.label}: {reason}", reason)


class ReplyCache:
    """Judge replies on disk, keyed by endpoint URL + judge model + full prompt + options."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS reply (key TEXT PRIMARY KEY, text TEXT NOT NULL)")
        self._db.commit()

    @staticmethod
    def key(base_url: str, model: str, messages: list[dict], options: dict) -> str:
        # the URL is part of the key: two servers that serve "the same" model name may not be the same model;
        # its credentials are not (a rotated token is the same server)
        """The cache key of one request: a sha256 of the server URL (credentials removed), model, messages and options."""
        from ..core.identity import redact

        blob = json.dumps(
            {"base_url": redact(base_url).rstrip("/"), "model": model, "messages": messages, "options": options},
            sort_keys=True,
            ensure_ascii=False,
        )
        return hashlib.sha256(blob.encode()).hexdigest()

    def get(self, key: str) -> str | None:
        """The cached reply for `key`, or None."""
        with self._lock:
            row = self._db.execute("SELECT text FROM reply WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def put(self, key: str, text: str) -> None:
        """Store a reply under `key`; an empty reply is not stored, so it is asked again next time."""
        if not text.strip():  # an empty judgement is never a judgement
            return
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO reply VALUES (?, ?)", (key, text))
            self._db.commit()


@dataclass
class Replies:
    """What the judge said: texts[i] is None where item i failed; failed maps it to the reason."""

    texts: list[str | None]
    failed: dict[int, str]
    labels: list[str]

    def record(self) -> dict:
        """For the task's scores: the count of failed items and the first few reasons. A task with
        judge_failed > 0 is not finished: rerunning it asks only these items."""
        shown = [f"{self.labels[i]}: {self.failed[i]}" for i in sorted(self.failed)[:SHOWN_FAILURES]]
        return {"judge_failed": len(self.failed), "judge_failures": shown}


class Judge:
    """Asks an LLM judge many prompts concurrently; cached replies are not asked again."""

    def __init__(self, endpoint: Endpoint, cache_dir: Path, concurrency: int = 8, max_tokens: int = 1024, log=None):
        self.endpoint = endpoint
        self.cache = ReplyCache(Path(cache_dir) / "judge" / "replies.sqlite")
        self.concurrency = concurrency
        self.options = {"temperature": 0, "max_tokens": max_tokens}
        self.gate = Gate()
        self.log = log or LOGGER.info
        self.asked = 0
        self.cached = 0
        self.failed = 0

    def ask(self, prompts: Sequence[str], labels: Sequence[str] | None = None, progress=None, context: str = "") -> Replies:
        """labels name each item in failure messages (e.g. "item 104 (model first)"); context names
        the task. Raises EndpointRefused (401-403) or ChatError (a systematically failing judge)."""
        labels = list(labels) if labels is not None else [f"prompt {i}" for i in range(len(prompts))]
        messages = [[{"role": "user", "content": p}] for p in prompts]
        keys = [ReplyCache.key(self.endpoint.base_url, self.endpoint.model, m, self.options) for m in messages]
        first = {k: i for i, k in reversed(list(enumerate(keys)))}  # one request per distinct prompt
        found = {k: self.cache.get(k) for k in first}
        found = {k: reply if reply and reply.strip() else None for k, reply in found.items()}  # "" was never a reply
        todo = [first[k] for k, reply in found.items() if reply is None]
        self.cached += len(found) - len(todo)
        errors: dict[str, str] = {}
        stop = threading.Event()
        where = f"{context}: " if context else ""

        tally = {"failed": 0, "answered": sum(1 for reply in found.values() if reply is not None)}
        lock = threading.Lock()

        def one(i: int) -> str:
            try:
                text = chat(self.endpoint, messages[i], require_text=True, gate=self.gate, stop=stop, **self.options)
            except EndpointRefused:
                stop.set()  # here, in the worker, so that no thread starts another request meanwhile
                raise
            except ChatError:
                with lock:  # a judge failing systematically is stopped here too, not only when the
                    tally["failed"] += 1  # main thread gets to count (it may lag behind a fast worker)
                    if tally["failed"] >= SYSTEMATIC_AFTER and tally["answered"] == 0:
                        stop.set()
                raise
            with lock:
                tally["answered"] += 1
            self.cache.put(keys[i], text)  # at once, so an interrupted run keeps what it was told
            return text

        pool = ThreadPoolExecutor(max_workers=max(1, self.concurrency))
        try:
            futures = {pool.submit(one, i): i for i in todo}
            done = as_completed(futures)
            for future in progress(done, len(todo)) if progress else done:
                i = futures[future]
                try:
                    found[keys[i]] = future.result()
                except _Stopped:
                    continue
                except EndpointRefused as exc:
                    stop.set()
                    raise EndpointRefused(f"{where}{exc}", exc.reason) from None
                except ChatError as exc:
                    errors[keys[i]] = exc.reason
                    if len(errors) <= SHOWN_FAILURES:
                        self.log(f"{where}{self.endpoint.label}: {labels[i]}: {exc.reason} (not cached; a rerun asks it again)")
                    answered = sum(1 for k in first if found.get(k) is not None)
                    if len(errors) >= SYSTEMATIC_AFTER and answered == 0:
                        stop.set()
                        raise ChatError(
                            f"{where}{self.endpoint.label}: the first {len(errors)} items all failed and none was "
                            f"answered (last: {exc.reason}); check --judge-url and --judge-model",
                            exc.reason,
                        ) from None
        finally:
            pool.shutdown(wait=not stop.is_set(), cancel_futures=True)
        self.asked += len(todo)
        failed = {i: errors[k] for i, k in enumerate(keys) if k in errors}
        self.failed += len(failed)
        if len(errors) > SHOWN_FAILURES:
            self.log(f"{where}{self.endpoint.label}: {len(errors)} judge requests failed in all ({len(failed)} items)")
        return Replies([found.get(k) for k in keys], failed, labels)

    def describe(self, prompt_version: str) -> dict:
        """The judge's settings for the result file: endpoint, prompt version, decoding options and retry limits."""
        return {
            **self.endpoint.public(),
            "prompt_version": prompt_version,
            "temperature": 0,
            "max_tokens": self.options["max_tokens"],
            # how hard the client tried: decides which items fail, never the score of an answered one
            "timeout_s": self.endpoint.timeout,
            "retries": self.endpoint.retries,
            "budget_s": self.endpoint.budget,
        }
