"""Issue 46 item 5: a hub answering HTTP 429 (rate limit) is retried like a 5xx, with the same
bounded backoff, after the Retry-After it sends (as huggingface_hub's http_backoff waits it out);
a wait longer than maeb's bound gives up at once with a line saying so."""

from __future__ import annotations

import pytest

from maeb.core.errors import DataError

datasets = pytest.importorskip("datasets")


class _Answered429(Exception):
    def __init__(self, message: str, retry_after: str | None):
        super().__init__(message)
        headers = {} if retry_after is None else {"Retry-After": retry_after}
        self.response = type("Response", (), {"status_code": 429, "headers": headers})()


def _limited_hub(monkeypatch, failures: int, retry_after: str | None = None, text_only: bool = False):
    from maeb.data import hub

    calls, waits = [], []

    def load_dataset(*args, **kwargs):
        calls.append(args)
        if len(calls) <= failures:
            message = "429 Client Error: Too Many Requests for url: .../api/datasets/org/data"
            raise RuntimeError(message) if text_only else _Answered429(message, retry_after)
        return datasets.Dataset.from_dict({"label": [0, 1]})

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    monkeypatch.setattr(hub, "prepare", lambda: None)
    monkeypatch.setattr(hub, "cached_default_config", lambda repo, revision: None)
    monkeypatch.setattr(hub.time, "sleep", waits.append)
    return calls, waits


def _load():
    from maeb.data.sources import load_hub_split

    return load_hub_split("org/data", "main", None, "test", ())


def test_a_429_waits_the_retry_after_the_hub_sends(monkeypatch, caplog):
    calls, waits = _limited_hub(monkeypatch, failures=2, retry_after="3")
    with caplog.at_level("WARNING", logger="maeb"):
        table = _load()
    assert len(calls) == 3 and waits == [3.0, 3.0] and table.columns["label"] == [0, 1]
    said = [r.getMessage() for r in caplog.records if "HTTP 429" in r.getMessage()]
    assert said[0] == "org/data@main split test: the hub answered HTTP 429; retrying in 3 s (retry 1 of 4)"


@pytest.mark.parametrize("text_only", [False, True])
def test_a_429_without_retry_after_backs_off_as_a_5xx_does(monkeypatch, text_only):
    calls, waits = _limited_hub(monkeypatch, failures=1, text_only=text_only)
    _load()
    assert len(calls) == 2 and waits == [1.0]


def test_a_hub_that_keeps_rate_limiting_gives_up_after_the_bounded_tries(monkeypatch):
    calls, waits = _limited_hub(monkeypatch, failures=99, retry_after="2")
    with pytest.raises(DataError) as told:
        _load()
    assert len(calls) == 5 and waits == [2.0] * 4
    assert "rate-limited" in str(told.value) and "HTTP 429" in str(told.value)


def test_a_retry_after_beyond_the_bound_is_not_waited_out(monkeypatch):
    from maeb.data import hub

    calls, waits = _limited_hub(monkeypatch, failures=99, retry_after=str(int(hub.MAX_RETRY_AFTER) * 60))
    with pytest.raises(DataError) as told:
        _load()
    assert len(calls) == 1 and waits == []
    assert "asks to wait 3600 s" in str(told.value) and "again later" in str(told.value)
