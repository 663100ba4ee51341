"""OpenAI-compatible chat clients: the LLM judge and the transport for API-served audio models.

Requests run in a bounded thread pool, each retried with exponential backoff on timeouts,
connection errors, 429 and 5xx. Judge replies are cached on disk (SQLite) under a key made of the
judge model and the full prompt, so a rerun asks nothing twice. API keys come from the environment
and are never written anywhere."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .errors import MaebError

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


class ChatError(MaebError):
    """An endpoint failed after all retries, or answered with something that is not a chat reply."""


@dataclass
class Endpoint:
    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 60.0
    retries: int = 4
    backoff: float = 1.0  # seconds before the first retry; doubles each time

    @property
    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env)

    def public(self) -> dict:
        """What may be written into results: never the key, nor its variable's value."""
        return {"base_url": self.base_url, "model": self.model}


def chat(endpoint: Endpoint, messages: list[dict], **options) -> str:
    """One chat completion; returns the reply text."""
    url = endpoint.base_url.rstrip("/") + "/chat/completions"
    payload = json.dumps({"model": endpoint.model, "messages": messages, **options}).encode()
    headers = {"Content-Type": "application/json"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    delay, last = endpoint.backoff, "no attempt"
    for attempt in range(endpoint.retries + 1):
        request = urllib.request.Request(url, data=payload, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=endpoint.timeout) as response:
                body = json.loads(response.read().decode())
            return str(body["choices"][0]["message"]["content"] or "")
        except urllib.error.HTTPError as exc:
            last = f"HTTP {exc.code}"
            if exc.code not in RETRY_STATUS:
                raise ChatError(f"{endpoint.model} at {endpoint.base_url}: {last}: {exc.read()[:300]!r}") from exc
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
            last = f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
        except (KeyError, IndexError, TypeError, json.JSONDecodeError) as exc:
            raise ChatError(f"{endpoint.model} at {endpoint.base_url}: not a chat completion reply ({exc})") from exc
        if attempt < endpoint.retries:
            time.sleep(delay)
            delay *= 2
    raise ChatError(f"{endpoint.model} at {endpoint.base_url}: failed after {endpoint.retries + 1} attempts ({last})")


class ReplyCache:
    """Judge replies on disk, keyed by judge model + full prompt."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS reply (key TEXT PRIMARY KEY, text TEXT NOT NULL)")
        self._db.commit()

    @staticmethod
    def key(model: str, messages: list[dict], options: dict) -> str:
        blob = json.dumps({"model": model, "messages": messages, "options": options}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT text FROM reply WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def put(self, key: str, text: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO reply VALUES (?, ?)", (key, text))
            self._db.commit()


class Judge:
    """Asks an LLM judge many prompts concurrently; cached replies are not asked again."""

    def __init__(self, endpoint: Endpoint, cache_dir: Path, concurrency: int = 8, max_tokens: int = 1024):
        self.endpoint = endpoint
        self.cache = ReplyCache(Path(cache_dir) / "judge" / "replies.sqlite")
        self.concurrency = concurrency
        self.options = {"temperature": 0, "max_tokens": max_tokens}
        self.asked = 0
        self.cached = 0

    def ask(self, prompts: Sequence[str], progress=None) -> list[str]:
        messages = [[{"role": "user", "content": p}] for p in prompts]
        keys = [ReplyCache.key(self.endpoint.model, m, self.options) for m in messages]
        first = {k: i for i, k in reversed(list(enumerate(keys)))}  # one request per distinct prompt
        found = {k: self.cache.get(k) for k in first}
        todo = [first[k] for k, reply in found.items() if reply is None]
        self.cached += len(found) - len(todo)

        def one(i: int) -> tuple[int, str]:
            text = chat(self.endpoint, messages[i], **self.options)
            self.cache.put(keys[i], text)  # at once, so an interrupted run keeps what it was told
            return i, text

        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            iterator = pool.map(one, todo)
            for i, text in progress(iterator, len(todo)) if progress else iterator:
                found[keys[i]] = text
        self.asked += len(todo)
        return [found[k] or "" for k in keys]

    def describe(self, prompt_version: str) -> dict:
        return {
            **self.endpoint.public(),
            "prompt_version": prompt_version,
            "temperature": 0,
            "max_tokens": self.options["max_tokens"],
        }
