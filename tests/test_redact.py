"""Issue 46 item 2: one redaction function (maeb.core.identity.redact) for every endpoint, URL or
header that can reach a result, a cache identity, a log or an error line; HF_ENDPOINT's
user:password@ and query tokens are redacted as MAEB_API_URL's are."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest

from maeb.core.errors import MaebError
from maeb.core.identity import public_option, redact, redact_url
from maeb.data import hub

SECRETS = ("hunter2", "tok123secret", "sk-abcdefghijkl")
HF_ENDPOINT = "https://alice:hunter2@127.0.0.1:9/?token=tok123secret"


def clean(text: str) -> bool:
    return not any(secret in text for secret in SECRETS)


def test_redact_finds_every_url_and_header_in_a_text():
    text = f"cannot reach {HF_ENDPOINT} (Authorization: Bearer sk-abcdefghijkl); 'x-api-key': 'tok123secret'."
    shown = redact(text)
    assert clean(shown) and "127.0.0.1:9" in shown and shown.endswith(".")
    assert redact(HF_ENDPOINT) == redact_url(HF_ENDPOINT)  # a bare URL: the same as before
    for plain in ("https://huggingface.co", "a plain line (no URL)", "bearer of good news and tidings"):
        assert redact(plain) == plain  # unchanged: cache keys and messages without credentials stay as they were
    assert clean(public_option("Bearer sk-abcdefghijkl"))


def test_the_hub_probe_does_not_show_hf_endpoint_credentials():
    why = hub.probe(HF_ENDPOINT, timeout=1.0)
    assert why is not None and "127.0.0.1:9" in why and clean(why)


def test_explain_and_first_line_redact_the_endpoint(monkeypatch):
    monkeypatch.setattr(hub, "endpoint", lambda: HF_ENDPOINT)
    failure = RuntimeError(f"503 Server Error for url: {HF_ENDPOINT}/api/datasets/x")
    failure.response = SimpleNamespace(status_code=503)  # type: ignore[attr-defined]
    told = hub.explain(failure, "dataset", "someone/data", None)
    assert told is not None and "HTTP 503" in told and clean(told)
    assert clean(hub.first_line(failure))


def test_the_error_line_and_log_lines_are_redacted(monkeypatch, capsys):
    from maeb.cli import commands
    from maeb.core.context import LOGGER, StderrHandler

    def fails(args):
        logging.getLogger("maeb").warning("asking %s", HF_ENDPOINT)
        raise MaebError(f"the hub at {HF_ENDPOINT} said no")

    monkeypatch.setitem(commands.COMMANDS, "describe", fails)
    try:
        assert commands.main(["describe"]) == 2
    finally:
        for handler in [h for h in LOGGER.handlers if isinstance(h, StderrHandler)]:
            LOGGER.removeHandler(handler)
    err = capsys.readouterr().err
    assert "maeb: error: the hub at https://127.0.0.1:9/" in err and "asking https://127.0.0.1:9/" in err
    assert clean(err)


def test_a_failed_task_is_recorded_redacted():
    from maeb.run.summary import RunSummary, fail_task

    summary, lines = RunSummary(), []
    fail_task(summary, "T", MaebError(f"cannot load from {HF_ENDPOINT}"), False, lines.append)
    assert clean(summary.failed["T"]) and all(clean(line) for line in lines)


@pytest.mark.parametrize("url", ["https://u:hunter2@127.0.0.1:9/v1", "http://127.0.0.1:9/v1?api_key=tok123secret"])
def test_the_chat_endpoint_label_goes_through_redact(url):
    from maeb.encoders.chat import Endpoint

    assert clean(Endpoint(url, "m").label)
