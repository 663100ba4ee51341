"""Qwen-Omni, HeAR, fusion-embedding, the sentence-transformers omni family and the mteb bridge.
HeAR and fusion-embedding load tiny remote-code checkpoints through trust_remote_code and must
equal mteb 2.26.24's own wrappers on them."""

from __future__ import annotations

import numpy as np
import pytest

from maeb.core.errors import ModelError
from maeb.encoders import ModelMeta, load_encoder, runnable_problems, tiny
from maeb.encoders.protocols import get_protocol

from .family_fixtures import clips, meta_for, stub_torchaudio, through_mteb

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


def test_qwen_omni_thinker_last_token(tmp_path):
    opts = tiny.qwen_omni_thinker(tmp_path / "m")
    enc = load_encoder(meta_for("hf-qwen-omni", "Qwen/Qwen2.5-Omni-3B", ("audio", "text")), **opts)
    assert enc.arch == "qwen2_5_omni" and enc.max_seconds == 300.0 and enc.batching == "padded"
    arrays = clips((0.5, 1.4))
    audio, text = enc.embed_audio(arrays), enc.embed_text(["a low tone", "rain"])
    assert audio.shape == (2, 16) and text.shape == (2, 16) and audio.dtype == np.float32
    assert np.allclose(np.linalg.norm(audio, axis=1), 1, atol=1e-5) and np.allclose(np.linalg.norm(text, axis=1), 1, atol=1e-5)
    # left padding: the shorter clip's vector is its own last token whatever its batch-mates
    assert np.allclose(enc.embed_audio([arrays[0]])[0], audio[0], atol=1e-4)
    # the chat prompt wraps the clip: Qwen's system prompt is part of what the model reads
    assert "virtual human" in enc._chat([{"type": "text", "text": "x"}])
    rules = get_protocol("mteb-2.26").family_rules("hf-qwen-omni", "qwen3_omni_moe")
    assert rules["batching"] == "single" and rules["dtype"] == "bfloat16"  # Qwen3-Omni's experts: one clip at a time


@pytest.mark.usefixtures("allow_code")  # the checkpoint's own code runs only when allowed
def test_hear_equals_mteb_wrapper_on_a_remote_code_checkpoint(tmp_path, monkeypatch):
    from mteb.models.model_implementations.hear_s11_models import HeARS11AudioWrapper

    stub_torchaudio(monkeypatch)
    opts = tiny.remote(tmp_path / "m")
    enc = load_encoder(meta_for("hf-hear", "matthewagi/HeAR-s1.1", **opts))
    assert enc.windows(np.zeros(int(2.5 * 16000))).shape == (2, 32000) and enc.windows(np.zeros(10)).shape == (1, 32000)
    reference = through_mteb(HeARS11AudioWrapper(str(tmp_path / "m"), revision=None, device="cpu"))
    arrays = clips((0.7, 2.5, 4.1))
    assert np.allclose(enc.embed_audio(arrays), reference.embed_audio(arrays), atol=1e-6)


@pytest.mark.usefixtures("allow_code")
def test_fusion_embedding_equals_mteb_wrapper(tmp_path, monkeypatch):
    from mteb.models.model_implementations.fusion_embedding_models import FusionEmbeddingWrapper

    stub_torchaudio(monkeypatch)
    opts = tiny.remote(tmp_path / "m")
    meta = meta_for("fusion-embedding", "EximiusLabs/fusion-embedding-1-2b-preview", ("audio", "text"), **opts)
    enc = load_encoder(meta)
    reference = through_mteb(
        FusionEmbeddingWrapper(str(tmp_path / "m"), revision=None, device="cpu"), modalities=("audio", "text")
    )
    arrays = clips((0.3, 1.2))
    assert np.allclose(enc.embed_audio(arrays), reference.embed_audio(arrays), atol=1e-6)
    texts = ["a dog barks", "rain"]
    assert np.allclose(enc.embed_text(texts), reference.embed_text(texts), atol=1e-6)


class RecordingST:
    """Stands in for a SentenceTransformer: records what it was asked to encode (the st-omni
    family's job is the input format and prompts of each mteb wrapper)."""

    def __init__(self):
        self.calls, self.max_seq_length = [], 512

    def __getitem__(self, i):
        return self

    processing_kwargs: dict = {}

    def encode(self, items, prompt=None, **kwargs):
        self.calls.append(("encode", items, prompt, kwargs))
        return np.ones((len(items), 4), dtype=np.float32)

    def encode_query(self, items, **kwargs):
        self.calls.append(("encode_query", items, None, kwargs))
        return np.ones((len(items), 4), dtype=np.float32)


@pytest.mark.parametrize(
    "variant, audio_kind, audio_prompt, text_call, task",
    [
        ("e5-omni", dict, None, "encode_query", None),
        ("jina-v5-omni", np.ndarray, "Document: ", "encode", "retrieval"),
        ("bidirlm-omni", dict, None, "encode", None),
    ],
)
def test_st_omni_variants_format_inputs_as_their_mteb_wrappers(variant, audio_kind, audio_prompt, text_call, task):
    fake = RecordingST()
    fake.processing_kwargs = {}
    enc = load_encoder(meta_for("st-omni", f"tiny/{variant}", ("audio", "text")), variant=variant, model=fake)
    enc.embed_audio(clips((0.2,)))
    call, items, prompt, kwargs = fake.calls[-1]
    assert isinstance(items[0], audio_kind) and prompt == audio_prompt and kwargs.get("task") == task
    if audio_kind is dict:
        assert items[0]["audio"]["sampling_rate"] == 16000 and items[0]["audio"]["array"].dtype == np.float32
    enc.embed_text(["a dog"])
    assert fake.calls[-1][0] == text_call
    caps = {"e5-omni": 300.0, "jina-v5-omni": 30.0, "bidirlm-omni": None}
    assert enc.max_seconds == caps[variant] and enc.config()["variant"] == variant
    assert enc.batching == ("same_length" if variant == "bidirlm-omni" else "padded")
    with pytest.raises(ModelError, match="variant must be one of"):  # one line naming the option, not a traceback
        load_encoder(meta_for("st-omni"), variant="nope", model=fake)


def test_mteb_bridge_refuses_what_maeb_cannot_score():
    meta = ModelMeta(name="vidore/colqwen-omni-v0.1", family="mteb", revision="0", similarity="max_sim")
    with pytest.raises(ModelError, match="one vector per item"):
        load_encoder(meta)
    assert any("max_sim" in p for p in runnable_problems(meta))
    assert any(
        "missing" in p and "nope-package" in p
        for p in runnable_problems(ModelMeta(name="x", family="mteb", revision="0", requires=("nope-package",)))
    )


def test_mteb_bridge_passes_rows_and_task_metadata_in_mteb_format():
    seen = {}

    class Wrapper:
        sampling_rate = 22050

        def encode(self, inputs, *, task_metadata, hf_split, hf_subset, prompt_type=None, **kwargs):
            seen.update(
                features=set(inputs.dataset.features), task=task_metadata.name, type=task_metadata.type, prompt=prompt_type
            )
            batch = next(iter(inputs))
            if "audio" in batch:
                seen["rate"] = batch["audio"][0]["sampling_rate"]
                return np.stack([[a["array"].mean(), len(a["array"])] for a in batch["audio"]])
            return np.stack([[len(t), 0.0] for t in batch["text"]])

    from maeb.encoders.mteb_bridge import MtebWrapperEncoder

    enc = MtebWrapperEncoder(meta_for("mteb", "tiny/x", ("audio", "text")), model=Wrapper())
    assert enc.sample_rate == 22050  # read from the wrapper: maeb resamples once, to its rate
    out = enc.embed_audio([np.ones(10, np.float32), np.zeros(4, np.float32)])
    assert out.tolist() == [[1.0, 10.0], [0.0, 4.0]] and seen["features"] == {"audio"} and seen["rate"] == 22050
    assert seen["task"] == "BeijingOpera" and seen["type"] == "AudioClassification" and seen["prompt"] is None
    assert enc.embed_text(["abc"]).tolist() == [[3.0, 0.0]] and str(seen["prompt"]).endswith("query")
