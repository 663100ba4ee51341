"""The judge client under a misbehaving server on 127.0.0.1: rate limits with Retry-After, slow
items, one bad item, empty and refused replies, a refused key, and a judge that answers nothing."""

from __future__ import annotations

import email.utils
import json
import re
import time

import pytest

from maeb.encoders.chat import ChatError, Endpoint, EndpointRefused, Judge, chat, parse_retry_after

from .test_generative import ScriptedServer, result, run_cli, user_text, write_model, write_spec, write_wav

FAST = {"backoff": 0.01, "timeout": 2.0, "budget": 5.0}  # small numbers keep every test here fast


def judge_at(server, tmp_path, concurrency: int = 4, **endpoint) -> Judge:
    logged: list[str] = []
    judge = Judge(Endpoint(server.url, "judge-x", **{**FAST, **endpoint}), tmp_path, concurrency, log=logged.append)
    judge.logged = logged
    return judge


def test_retry_after_in_seconds_dates_and_milliseconds():
    now = time.time()
    assert parse_retry_after({"Retry-After": "2"}) == 2.0
    assert parse_retry_after({"Retry-After": " 0.5 "}) == 0.5
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=now) == pytest.approx(30, abs=1)
    assert parse_retry_after({"Retry-After": email.utils.formatdate(now - 60, usegmt=True)}, now=now) == 0.0
    assert parse_retry_after({"retry-after-ms": "1500", "Retry-After": "9"}) == 1.5
    assert parse_retry_after({"Retry-After": "soon"}) is None and parse_retry_after({}) is None


def test_rate_limit_waits_for_retry_after_and_succeeds(tmp_path):
    seen: dict[str, int] = {}

    def reply(body):
        text = user_text(body)
        seen[text] = seen.get(text, 0) + 1
        if seen[text] == 1:
            return ("status", 429, {"Retry-After": "2"})
        return f"answer to {text}"

    with ScriptedServer(reply) as server:
        judge = judge_at(server, tmp_path)
        started = time.monotonic()
        replies = judge.ask(["a", "b", "c"])
        elapsed = time.monotonic() - started
    # the old client gave up on a limit like this after its fixed retries; now every item waits it out
    assert replies.texts == ["answer to a", "answer to b", "answer to c"] and replies.failed == {}
    assert 2.0 <= elapsed < 4.5 and all(n == 2 for n in seen.values())


def test_rate_limit_beyond_the_budget_fails_the_item_at_once(tmp_path):
    with ScriptedServer(lambda body: ("status", 429, {"Retry-After": "30"})) as server:
        judge = judge_at(server, tmp_path, budget=1.0)
        started = time.monotonic()
        replies = judge.ask(["a"], labels=["item 7 (model first)"], context="ChatFixture [test]")
        assert time.monotonic() - started < 1.0  # it does not sleep into a wait it cannot finish
    assert replies.texts == [None] and "HTTP 429" in replies.failed[0] and "budget" in replies.failed[0]
    assert replies.record()["judge_failed"] == 1
    line = judge.logged[0]
    assert "ChatFixture [test]" in line and "judge-x" in line and server.url in line and "item 7 (model first)" in line


def test_slow_item_times_out_alone_or_succeeds_on_retry(tmp_path):
    tries: dict[str, int] = {}

    def reply(body):
        text = user_text(body)
        tries[text] = tries.get(text, 0) + 1
        if text == "always slow" or (text == "slow once" and tries[text] == 1):
            return ("slow", 1.0, "too late")
        return f"ok {text}"

    with ScriptedServer(reply) as server:
        judge = judge_at(server, tmp_path, timeout=0.3, budget=1.2)
        started = time.monotonic()
        replies = judge.ask(["fast", "slow once", "always slow"])
        assert time.monotonic() - started < 2.5  # bounded by the budget, not by the server
    assert replies.texts[:2] == ["ok fast", "ok slow once"] and tries["slow once"] == 2
    assert replies.texts[2] is None and list(replies.failed) == [2]
    # tried until the budget ran out (the last try gets only what is left of it), then failed alone
    assert re.match(r"failed after [3-5] attempts in 1\.\d+ s \(no reply within 0\.\d+ s", replies.failed[2])


def test_one_bad_item_fails_alone_and_a_rerun_asks_only_it(tmp_path):
    def reply(body):
        if "too long" in user_text(body):
            return ("status", 400, {})
        return "8 7"

    with ScriptedServer(reply) as server:
        replies = judge_at(server, tmp_path).ask(["one", "too long", "two"])
        assert replies.texts == ["8 7", None, "8 7"] and replies.record()["judge_failed"] == 1
        assert replies.failed[1].startswith("HTTP 400") and len(server.requests) == 3  # never retried
        again = judge_at(server, tmp_path).ask(["one", "too long", "two"])
        assert len(server.requests) == 4 and user_text(server.requests[-1]) == "too long"
        assert again.record()["judge_failed"] == 1


@pytest.mark.parametrize(
    "answer, reason",
    [
        ("", "empty reply"),
        ("   \n", "empty reply"),
        (("message", {"content": None, "refusal": "I can't help with that."}), "refused: I can't help"),
        (("message", {"content": "8"}, "content_filter"), "content filter"),
    ],
)
def test_empty_or_refused_replies_fail_the_item_and_are_not_cached(tmp_path, answer, reason):
    with ScriptedServer(lambda body: answer) as server:
        first = judge_at(server, tmp_path).ask(["judge this"])
        assert first.texts == [None] and reason in first.failed[0]
        judge_at(server, tmp_path).ask(["judge this"])
        assert len(server.requests) == 2  # asked again: nothing was cached


def test_refused_key_stops_at_once(tmp_path):
    with ScriptedServer(lambda body: ("status", 401, {})) as server:
        judge = judge_at(server, tmp_path, concurrency=2)
        with pytest.raises(EndpointRefused) as info:
            judge.ask([f"p{i}" for i in range(20)], context="ChatFixture [test]")
        assert len(server.requests) <= 2 + 1  # the requests in flight, no retries, not the other 18 items
    message = str(info.value)
    assert "\n" not in message and "ChatFixture [test]" in message and server.url in message and "judge-x" in message
    assert "HTTP 401" in message and "OPENAI_API_KEY" in message


def test_a_judge_that_answers_nothing_stops_the_run(tmp_path):
    with ScriptedServer(lambda body: ("status", 404, {})) as server:
        with pytest.raises(ChatError, match="the first 8 items all failed.*check --judge-url and --judge-model"):
            judge_at(server, tmp_path, concurrency=1).ask([f"p{i}" for i in range(30)])
        assert len(server.requests) == 8


def test_server_errors_are_retried_with_backoff(tmp_path):
    calls = {"n": 0}

    def reply(body):
        calls["n"] += 1
        return ("status", 502, {}) if calls["n"] <= 2 else "fine"

    with ScriptedServer(reply) as server:
        assert chat(Endpoint(server.url, "judge-x", **FAST), [{"role": "user", "content": "x"}]) == "fine"
        assert calls["n"] == 3
        with pytest.raises(ChatError, match=r"failed after 2 attempts .*HTTP 502"):
            calls["n"] = -10
            chat(Endpoint(server.url, "judge-x", **{**FAST, "retries": 1}), [{"role": "user", "content": "x"}])


# -- through the command line: the failure reaches the result, a rerun asks only it -------------
def mmac_fixture(tmp_path):
    root = tmp_path / "mmac"
    lines = []
    for i, pitch in enumerate([220.0, 3520.0]):
        write_wav(root / "audio" / f"c{i}.wav", pitch)
        targets = [
            {"dimension": "pitch", "category": "paralinguistic", "label": "low", "scale": "binary"},
            {"dimension": "speaker gender", "category": "persona", "label": "female", "scale": "binary"},
        ]
        lines.append(json.dumps({"id": f"c{i}", "audio": f"audio/c{i}.wav", "targets": targets}))
    (root / "annotations.jsonl").write_text("\n".join(lines))
    return write_spec(
        tmp_path / "mmac.toml",
        f"""
name = "MMACFixture"
type = "mmac"
[data]
source = "metafolder"
path = "{root}"
meta_file = "annotations.jsonl"
eval_splits = ["test"]
""",
    )


def test_cli_records_a_failed_item_and_a_rerun_asks_only_it(tmp_path, capsys):
    spec, model = mmac_fixture(tmp_path), write_model(tmp_path)
    broken = {"on": True}

    def reply(body):
        text = user_text(body)
        if broken["on"] and "a high tone" in text and "speaker gender" in text:
            return ("status", 400, {})
        caption = re.search(r"\[Caption\]\n(.*)\n\[Property\]", text).group(1)
        return json.dumps({"mentioned": True, "score": 1 if "low" in caption else 0})

    with ScriptedServer(reply) as server:
        judge = ["--judge-url", server.url, "--judge-model", "judge-x", "--judge-timeout", "2", "--judge-budget", "5"]
        assert run_cli(tmp_path, model, spec, *judge) == 0
        entry = result(tmp_path, "MMACFixture")[0]["scores"]["test"][0]
        assert entry["judge_failed"] == 1 and entry["judgements"] == 4 and len(server.requests) == 4
        assert entry["judge_failures"][0].startswith("clip c1 / speaker gender: HTTP 400")
        assert entry["coverage_speaker gender"] == 1.0  # the failed item is left out, not scored 0
        assert entry["judge"]["timeout_s"] == 2.0 and entry["judge"]["budget_s"] == 5.0
        assert "MMACFixture [test]" in capsys.readouterr().err
        broken["on"] = False
        assert run_cli(tmp_path, model, spec, *judge, "--overwrite") == 0
        assert len(server.requests) == 5  # only the failed item is asked again
        assert result(tmp_path, "MMACFixture")[0]["scores"]["test"][0]["judge_failed"] == 0


def test_cli_stops_at_once_on_a_refused_key(tmp_path, capsys):
    spec, model = mmac_fixture(tmp_path), write_model(tmp_path)
    with ScriptedServer(lambda body: ("status", 401, {})) as server:
        args = ["--judge-url", server.url, "--judge-model", "judge-x", "--judge-key-env", "MAEB_NO_SUCH_KEY"]
        assert run_cli(tmp_path, model, spec, *args, "--judge-concurrency", "1") == 2
        assert len(server.requests) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "MMACFixture" in err[0] and server.url in err[0] and "judge-x" in err[0]
    assert "HTTP 401" in err[0] and "$MAEB_NO_SUCH_KEY, which is not set" in err[0]
    assert not (tmp_path / "res" / "test__tones" / "1" / "MMACFixture.json").exists()


def test_cli_rejects_nonsense_judge_limits(tmp_path, capsys):
    spec, model = mmac_fixture(tmp_path), write_model(tmp_path)
    assert (
        run_cli(tmp_path, model, spec, "--judge-url", "http://127.0.0.1:9/v1", "--judge-model", "j", "--judge-budget", "0") == 2
    )
    assert "--judge-budget must be a positive number" in capsys.readouterr().err
    assert run_cli(tmp_path, model, spec, "--judge-url", "127.0.0.1:8000/v1", "--judge-model", "j") == 2
    assert "with http:// or https://" in capsys.readouterr().err
