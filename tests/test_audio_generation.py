"""The audio_generation task type end to end: a local folder in the documented MMAG layout built by
hand, systems written here, generated files beside the results (resume, identity), missing metrics
reported with their reason, capability flags, the HTTP and transformers adapters, and ranking by a
lower-is-better main score."""

from __future__ import annotations

import csv
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from maeb.api import evaluate
from maeb.audiogen.request import Capabilities, SynthesisRequest
from maeb.core.errors import MaebError, ModelError
from maeb.mock import tone

RATE = 16000


def _wav(path: Path, audio: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(path, audio, RATE, subtype="PCM_16")


def _scene(freq: float, seconds: float, burst: tuple[float, float] | None = None) -> np.ndarray:
    clip = 0.3 * tone(freq, seconds)
    if burst:
        on, off = (int(t * RATE) for t in burst)
        clip[on:off] += 0.5 * np.random.default_rng(int(freq)).standard_normal(off - on).astype(np.float32)
    return clip.astype(np.float32)


def build_folder(root: Path) -> Path:
    """Three subsets as a user lays them out (README, 'Audio generation')."""
    rows = {
        "main": [("m0", 220.0, "a low hum", "hello there"), ("m1", 440.0, "a middle tone", ""), ("m2", 880.0, "a high tone", "")],
        "voice_cloning": [("v0", 330.0, "a voice over a hum", "good morning"), ("v1", 660.0, "a voice", "good night")],
        "timestamp": [("t0", 500.0, "a burst (0.5-1.0s)", "one two"), ("t1", 700.0, "a burst (1.0-1.5s)", "three")],
    }
    for subset, items in rows.items():
        folder = root / subset
        fields = ["file_name", "key", "caption", "transcript", "duration"]
        fields += ["voice_prompt"] if subset == "voice_cloning" else []
        fields += ["timestamped_caption"] if subset == "timestamp" else []
        folder.mkdir(parents=True)
        with open(folder / "metadata.csv", "w", newline="") as fh:
            out = csv.DictWriter(fh, fieldnames=fields)
            out.writeheader()
            for key, freq, caption, words in items:
                burst = None
                if subset == "timestamp":
                    on = 0.5 if key == "t0" else 1.0
                    burst = (on, on + 0.5)
                _wav(folder / f"ref/{key}.wav", _scene(freq, 2.0, burst))
                row = {"file_name": f"ref/{key}.wav", "key": key, "caption": caption, "transcript": words, "duration": 2.0}
                if subset == "voice_cloning":
                    _wav(folder / f"prompt/{key}.wav", _scene(freq * 1.01, 1.0))
                    row["voice_prompt"] = f"prompt/{key}.wav"
                if subset == "timestamp":
                    row["timestamped_caption"] = caption
                out.writerow(row)
    return root


def write_spec(tmp: Path, folder: Path, main_score: str = "fd", extra: str = "") -> Path:
    spec = tmp / "LocalGeneration.toml"
    spec.write_text(
        f"""name = "LocalGeneration"
type = "audio_generation"
description = "a hand-made MMAG-layout folder"
category = "t2a"
main_score = "{main_score}"
[data]
source = "audiofolder"
path = "{folder}"
subsets = ["main", "voice_cloning", "timestamp"]
eval_splits = ["test"]
audio_columns = ["audio", "voice_prompt"]
[protocol]
metrics = ["fd", "kl", "is", "clap"]
subset_metrics = {{ timestamp = ["sound_f1"] }}
{extra}
[protocol.scorers]
cnn14 = {{ checkpoint = "random", seed = 0 }}
clap = {{ path = "{tmp / "no-such-clap"}" }}
timing = {{ speech_detector = "webrtcvad", sound_detector = "foreground", energy_exclude_speech = false }}
"""
    )
    return spec


class ToneSystem:
    """Renders each caption as a tone: the reference's own frequency when `exact`, else a fixed one."""

    sample_rate = RATE

    def __init__(self, exact: bool = True, accepts=("caption", "transcript", "voice_prompt"), fail_after=None):
        self.exact, self.fail_after = exact, fail_after
        self.capabilities = Capabilities(accepts=tuple(accepts))
        self.seen: list[SynthesisRequest] = []

    def config(self) -> dict:
        return {"exact": self.exact}

    def synthesize(self, requests):
        out = []
        for r in requests:
            if self.fail_after is not None and len(self.seen) >= self.fail_after:
                raise RuntimeError("the server went away")
            self.seen.append(r)
            out.append(np.zeros(int(r.duration * RATE), np.float32) + 0.1 if not self.exact else None)
        return [o if o is not None else self._render(r) for o, r in zip(out, requests)]

    def _render(self, r):
        table = {"a low hum": 220.0, "a middle tone": 440.0, "a high tone": 880.0, "a voice over a hum": 330.0, "a voice": 660.0}
        if r.key.startswith("t"):
            on = 0.5 if r.key == "t0" else 1.0
            return _scene(500.0 if r.key == "t0" else 700.0, r.duration, (on, on + 0.5))
        return _scene(table[r.caption], r.duration)


def _result(out: Path, name: str = "LocalGeneration") -> dict:
    return json.loads(next(out.rglob(f"{name}.json")).read_text())


def _by_subset(result: dict) -> dict:
    return {e["hf_subset"]: e for e in result["scores"]["test"]}


def test_local_folder_end_to_end_with_resume_and_missing_metrics(tmp_path):
    folder = build_folder(tmp_path / "mmag")
    spec = write_spec(tmp_path, folder)
    system = ToneSystem()
    kwargs = dict(
        output_dir=tmp_path / "out", cache_dir=tmp_path / "cache", name="test/tone-system", revision="1", progress=False
    )
    (res,) = evaluate(system, spec, **kwargs)
    result = _result(tmp_path / "out")
    scores = _by_subset(result)
    assert set(scores) == {"main", "voice_cloning", "timestamp"}
    # the exact system renders the references themselves: the distributions are equal (KL keeps
    # the toolkit's eps inside the log: about -5e-4 for identical outputs)
    assert abs(scores["main"]["fd"]) < 1e-6 and abs(scores["main"]["kl"]) < 1e-3
    assert scores["main"]["clap"] is None  # its model is not there: missing, never 0
    info = result["maeb"]["evaluation"]["test"]["main"]
    assert "clap" in info["missing_metrics"] and "no-such-clap" in info["missing_metrics"]["clap"]
    assert info["scorers"]["cnn14"]["stand_in"] is True and info["scorers"]["cnn14"]["revision"]
    assert info["set_level_metrics"] == ["fd", "is"] and "fd" in info["lower_is_better"]
    assert scores["timestamp"]["sound_f1"] == pytest.approx(1.0)  # bursts exactly where the captions say
    # files beside the result, one per clip, named by key; per-clip values beside them
    generated = sorted(p.name for p in (tmp_path / "out").rglob("generated/**/*.wav"))
    assert len(generated) == 7 and any(n.startswith("m0-") for n in generated)
    per_clip = next((tmp_path / "out").rglob("LocalGeneration_predictions/timestamp/test_per_clip.jsonl"), None) or next(
        (tmp_path / "out").rglob("LocalGeneration_predictions/timestamp/per_clip.jsonl")
    )
    rows = [json.loads(line) for line in per_clip.read_text().splitlines()]
    assert {r["key"] for r in rows} == {"t0", "t1"} and all("sound_f1" in r and r["file"].endswith(".wav") for r in rows)
    assert result["maeb"]["embedding"]["audio_generated"] == 7

    # a rerun over a new output folder with the same files present generates nothing ...
    again = ToneSystem()
    evaluate(again, spec, **{**kwargs, "overwrite": True})
    assert again.seen == [] and _result(tmp_path / "out")["maeb"]["embedding"]["audio_generated_cached"] == 7
    # ... and another seed is another request: new files
    spec2 = write_spec(tmp_path, folder, extra="seed = 7")
    third = ToneSystem()
    evaluate(third, spec2, **{**kwargs, "overwrite": True})
    assert len(third.seen) == 7 and {r.seed for r in third.seen} == {7}
    assert len(list((tmp_path / "out").rglob("generated/**/*.wav"))) == 14


def test_an_interrupted_generation_resumes_where_it_stopped(tmp_path):
    spec = write_spec(tmp_path, build_folder(tmp_path / "mmag"))
    kwargs = dict(output_dir=tmp_path / "out", cache_dir=tmp_path / "cache", name="test/tone", revision="1", progress=False)
    with pytest.raises(ModelError, match="failed to generate .*the server went away"):
        evaluate(ToneSystem(fail_after=2), spec, batch_size=1, **kwargs)
    assert not list((tmp_path / "out").rglob("LocalGeneration.json"))  # nothing wrong is written
    assert len(list((tmp_path / "out").rglob("generated/**/*.wav"))) == 2
    second = ToneSystem()
    evaluate(second, spec, batch_size=1, **kwargs)
    assert len(second.seen) == 5  # only what the first run did not finish


def test_a_system_sees_only_the_inputs_it_accepts(tmp_path):
    spec = write_spec(tmp_path, build_folder(tmp_path / "mmag"))
    system = ToneSystem(accepts=("caption",))
    evaluate(system, spec, output_dir=tmp_path / "out", cache_dir=tmp_path / "c", name="t/caption-only", progress=False)
    assert system.seen and all(r.transcript is None and r.voice_prompt is None for r in system.seen)
    full = ToneSystem()
    evaluate(full, spec, output_dir=tmp_path / "out2", cache_dir=tmp_path / "c", name="t/all", progress=False)
    prompts = [r for r in full.seen if r.voice_prompt is not None]
    assert len(prompts) == 2 and all(r.voice_prompt_rate == RATE and r.voice_prompt.size == RATE for r in prompts)
    assert {r.transcript for r in full.seen} >= {"hello there", "good morning"}


def test_a_system_that_needs_a_voice_prompt_is_refused_on_subsets_without_one(tmp_path):
    spec = write_spec(tmp_path, build_folder(tmp_path / "mmag"))
    system = ToneSystem()
    system.capabilities = Capabilities(accepts=("caption", "voice_prompt"), needs_voice_prompt=True)
    with pytest.raises(ModelError, match="needs a voice prompt .* 'm0'"):
        evaluate(system, spec, output_dir=tmp_path / "out", cache_dir=tmp_path / "c", name="t/vc", progress=False)


def test_a_missing_main_score_stops_the_task_with_its_reason(tmp_path):
    spec = write_spec(tmp_path, build_folder(tmp_path / "mmag"), main_score="clap")
    with pytest.raises(MaebError, match="main score clap is missing .*no-such-clap"):
        evaluate(ToneSystem(), spec, output_dir=tmp_path / "out", cache_dir=tmp_path / "c", name="t/x", progress=False)
    assert not list((tmp_path / "out").rglob("LocalGeneration.json"))


def test_borda_ranks_a_lower_is_better_main_score_smallest_first():
    from maeb.analysis.leaderboard import aggregate
    from maeb.results.read import Score, TaskInfo

    info = TaskInfo("MMAG-lite", "TextToAudioGeneration", main_score="wer")
    assert info.lower_is_better and not TaskInfo("ESC50", "AudioClassification", main_score="accuracy").lower_is_better
    scores = [Score(m, "1", "MMAG-lite", "all", "main", v) for m, v in (("oracle", 0.1), ("noise", 1.0))]
    board = aggregate(scores, infos={"MMAG-lite": info})
    assert [r.model for r in board.rows] == ["oracle", "noise"] and board.rows[0].rank == 1


# -- adapters ---------------------------------------------------------------------------------
class _AudioServer:
    def __init__(self, reply):
        self.bodies = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.bodies.append(body)
                status, kind, payload = reply(body)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/generate"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()


def _wav_reply(seconds: float, rate: int) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, 0.2 * tone(300.0, seconds, rate=rate), rate, format="WAV")
    return buf.getvalue()


def test_http_adapter_posts_requests_and_reads_wav_or_json(tmp_path):
    import base64

    from maeb.audiogen.adapters import HTTPTextToAudio
    from maeb.encoders import ModelMeta

    def reply(body):
        if body["key"] == "bad":
            return 400, "application/json", b'{"error": "no"}'
        audio = _wav_reply(body["duration"], 22050)
        if body["key"] == "json":
            return 200, "application/json", json.dumps({"audio": base64.b64encode(audio).decode()}).encode()
        return 200, "audio/wav", audio

    meta = ModelMeta(name="t/http", family="tta-http", revision="served", modalities=("text",))
    with _AudioServer(reply) as server:
        system = HTTPTextToAudio(meta, url=server.url, accepts="caption,transcript,voice_prompt", retries=0)
        assert system.capabilities.accepts == ("caption", "transcript", "voice_prompt")
        prompt = tone(200.0, 0.5)
        reqs = [
            SynthesisRequest("wav", "a tone", 1.0, seed=3, transcript="hi", voice_prompt=prompt, voice_prompt_rate=RATE),
            SynthesisRequest("json", "a tone", 0.5),
        ]
        out = system.synthesize(reqs)
        assert [len(o) for o in out] == [RATE, RATE // 2]  # resampled from the server's 22.05 kHz
        sent = {b["key"]: b for b in server.bodies}
        assert sent["wav"]["seed"] == 3 and sent["wav"]["transcript"] == "hi" and sent["wav"]["voice_prompt_rate"] == RATE
        echoed, rate = sf.read(io.BytesIO(base64.b64decode(sent["wav"]["voice_prompt"])), dtype="float32")
        assert rate == RATE and np.allclose(echoed, prompt, atol=1e-6)
        with pytest.raises(ModelError, match="gave no audio for clip 'bad' .*HTTP 400"):
            system.synthesize([SynthesisRequest("bad", "x", 1.0)])


def test_musicgen_adapter_from_a_tiny_config(tmp_path):
    import torch
    from transformers import EncodecConfig, MusicgenConfig, MusicgenDecoderConfig, MusicgenForConditionalGeneration, T5Config

    from maeb.audiogen.adapters import TransformersTextToAudio
    from maeb.encoders import ModelMeta, load_encoder
    from maeb.encoders.tiny import word_tokenizer

    words = "a dog barks loudly soft piano music".split()
    tok = word_tokenizer(words, ["<pad>"], padding_side="right")
    text = T5Config(vocab_size=len(tok), d_model=16, d_kv=4, d_ff=32, num_layers=1, num_heads=2, pad_token_id=0)
    codec = EncodecConfig(
        target_bandwidths=[1.5], sampling_rate=RATE, audio_channels=1, num_filters=4, hidden_size=16,
        upsampling_ratios=[8, 5, 4, 2], codebook_size=32, codebook_dim=16, num_lstm_layers=1, num_residual_layers=1,
    )  # fmt: skip
    decoder = MusicgenDecoderConfig(
        vocab_size=32, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, ffn_dim=32, num_codebooks=2,
        max_position_embeddings=512, pad_token_id=32, bos_token_id=32,
    )  # fmt: skip
    config = MusicgenConfig(text_encoder=text.to_dict(), audio_encoder=codec.to_dict(), decoder=decoder.to_dict())
    torch.manual_seed(0)
    model = MusicgenForConditionalGeneration(config)
    model.generation_config.update(decoder_start_token_id=32, pad_token_id=32, bos_token_id=32)
    model.save_pretrained(tmp_path / "mg")
    tok.save_pretrained(tmp_path / "mg")
    meta = ModelMeta(name="t/musicgen", family="tta-transformers", revision="1", modalities=("text",))
    system = load_encoder(meta, path=str(tmp_path / "mg"), top_k=8)
    assert isinstance(system, TransformersTextToAudio) and system.sample_rate == RATE
    reqs = [SynthesisRequest("a", "a dog barks", 0.3, seed=1), SynthesisRequest("b", "soft piano music", 0.5, seed=1)]
    first = system.synthesize(reqs)
    assert [len(x) for x in first] == [int(0.3 * RATE), int(0.5 * RATE)] and all(np.isfinite(x).all() for x in first)
    # one request at a time from its own seed: a clip does not depend on its batch-mates
    assert np.array_equal(system.synthesize(reqs[1:])[0], first[1])
    assert system.config()["one_by_one"] is True


class SettingsSystem(ToneSystem):
    """Takes the task's generation settings (e.g. sampling steps) beside the requests."""

    def __init__(self):
        super().__init__()
        self.settings = []

    def synthesize(self, requests, settings=None):
        self.settings.append(settings)
        return super().synthesize(requests)


def test_generation_settings_reach_the_system_and_name_the_files(tmp_path):
    folder = build_folder(tmp_path / "mmag")
    kwargs = dict(output_dir=tmp_path / "out", cache_dir=tmp_path / "c", name="t/settings", progress=False, overwrite=True)
    plain = SettingsSystem()
    evaluate(plain, write_spec(tmp_path, folder), **kwargs)
    assert set(map(str, plain.settings)) == {"None"}  # no settings: called as synthesize(requests)
    stepped = SettingsSystem()
    evaluate(stepped, write_spec(tmp_path, folder, extra="generation = { steps = 4 }"), **kwargs)
    assert stepped.settings and all(s == {"steps": 4} for s in stepped.settings) and len(stepped.seen) == 7
    result = _result(tmp_path / "out")
    assert result["maeb"]["evaluation"]["test"]["main"]["generation"] == {"steps": 4}
    assert len(list((tmp_path / "out").rglob("generated/**/*.wav"))) == 14  # other settings, other files


def test_the_offline_example_runs_a_hand_built_folder_from_the_command_line(tmp_path, monkeypatch):
    """examples/mmag_offline.toml over a folder in the README's layout, through `maeb run`."""
    pytest.importorskip("ctranslate2")
    pytest.importorskip("resemblyzer")
    from maeb.cli.commands import main

    monkeypatch.setenv("MMAG_DIR", str(build_folder(tmp_path / "mmag")))
    example = Path(__file__).resolve().parents[1] / "examples" / "mmag_offline.toml"
    args = ["run", "--model", "mmag-noise", "--tasks", str(example), "--output-dir", str(tmp_path / "out")]
    assert main([*args, "--cache-dir", str(tmp_path / "c"), "--quiet"]) == 0
    scores = _by_subset(_result(tmp_path / "out", "MMAGOffline"))
    assert set(scores) == {"main", "voice_cloning", "timestamp"}
    assert scores["main"]["wer"] == 1.0  # noise says none of "hello there" (capped at 1)
    assert scores["voice_cloning"]["spk_sim"] is not None and scores["timestamp"]["sound_f1"] is not None
    # the oracle needs a scene script, which a user's folder does not hold: one line naming the clip
    oracle = ["run", "--model", "mmag-oracle", "--tasks", str(example), "--output-dir", str(tmp_path / "o2")]
    assert main([*oracle, "--cache-dir", str(tmp_path / "c"), "--quiet"]) == 2


def test_anyaudio_judge_reads_yes_no_logits_of_a_tiny_audio_llm(tmp_path):
    """AnyAudio-Judge with a tiny random Qwen2-Audio: P(yes) is the two-way softmax of the
    next-token logits of "Yes" and "No" (checked against the model's own forward), a clip's score
    the mean over its rubrics; clips without rubrics are skipped and counted."""
    import torch

    from maeb.audiogen.judge import QUESTION, AnyAudioJudge, parse_rubrics
    from maeb.audiogen.metric import GeneratedItem, MetricUnavailable

    from .test_encoders import save_tiny_qwen2_audio

    template = (
        "{% for m in messages %}<|im_start|>{{ m.role }} {% for c in m.content %}{% if c.type == 'audio' %}"
        "<|audio_bos|><|AUDIO|><|audio_eos|>{% else %}{{ c.text }}{% endif %}{% endfor %}<|im_end|>{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant {% endif %}"
    )
    words = ["Yes", "No", "Does", "the", "audio", "satisfy", "this", "statement:", "Answer", "or", "No.", "a", "dog", "barks"]
    save_tiny_qwen2_audio(tmp_path / "q", ["<|im_start|>", "<|im_end|>"], ["user", "assistant", *words], chat_template=template)
    judge = AnyAudioJudge(("aaj",), {"path": str(tmp_path / "q"), "dtype": "float32"}, "cpu", None)
    assert judge.provenance()["stand_in"] is True and judge.provenance()["question"] == QUESTION
    clips = [tone(300.0, 1.0), tone(900.0, 1.0)]
    rubrics = [["a dog barks", "a dog"], None]
    items = [
        GeneratedItem(SynthesisRequest(f"k{i}", "a dog barks", 1.0), c, RATE, rubrics=r)
        for i, (c, r) in enumerate(zip(clips, rubrics))
    ]
    judge.update(items)
    assert set(judge.per_clip) == {"k0"} and judge.skipped == 1 and judge.per_clip["k0"]["aaj_rubrics"] == 2
    # independently: the model's logits for the first rubric
    s = judge.scorer
    inputs = s.processor(text=[s._text("a dog barks")], audio=[clips[0]], sampling_rate=s.rate, return_tensors="pt", padding=True)
    with torch.inference_mode():
        last = s.model(**inputs).logits[0, -1].float()
    expected = torch.softmax(torch.stack([last[s.yes], last[s.no]]), 0)[0].item()
    assert s.p_yes([clips[0]], ["a dog barks"])[0] == pytest.approx(expected, abs=1e-6)
    assert 0.0 < judge.result()["aaj"] < 1.0
    assert parse_rubrics('Sure: ["a dog barks", " a man speaks "]') == ["a dog barks", "a man speaks"]
    assert parse_rubrics("no list here") == []
    empty = AnyAudioJudge(("aaj",), {"path": str(tmp_path / "q"), "dtype": "float32"}, "cpu", None)
    empty.update(items[1:])
    with pytest.raises(MetricUnavailable, match="no clip has rubrics"):
        empty.result()
