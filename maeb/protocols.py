"""The reference protocols maeb reproduces, written down in one place.

A protocol fixes everything between the dataset and the evaluator that mteb's code decides and a
model entry does not: how clips are resampled, each family's length cap, batching and pooling
rule, how text documents are built, and the evaluator details that change a score or a result
file. Every result records the protocol it followed (`maeb.protocol`).

- "mteb-2.26" (default): mteb 2.26.24 as released; `make parity` checks maeb against it end to
  end. No single code state produced the published MAEB leaderboard (its files come from several
  states of mteb's maeb branch, some with unseeded k-means and unresampled pair audio, and from
  releases 2.12-2.18), so the newest release is the reference.
- "paper": the length caps and batching of the commit that introduced MAEB (a79aefed5), which is
  what the paper describes (wav2vec2-style encoders cut at 30 s), with 2.26.24's evaluators.
- "mteb-2.26-stable" (opt-in): mteb-2.26's vectors and draws, but the classification and
  multilabel probes fit standardised features to convergence (maeb.tasktypes.probe), so their
  scores do not depend on the machine's rounding (mteb's unconverged probe turns last-bit
  differences into points: maeb.stability). Not mteb's numbers; its results go to the
  experiments folder like any other protocol's, and it reuses mteb-2.26's cached vectors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import SpecError


@dataclass(frozen=True)
class Protocol:
    name: str
    reference: str
    resampler: str  # see maeb.audio.RESAMPLERS
    text_documents: str  # "title-text-strip": mteb's (title + " " + text).strip(); "raw"
    call_batch_size: int = 32  # mteb.evaluate's batch size, for families batched as mteb batches
    # family -> architecture (a transformers model_type, or "*") -> wrapper settings
    families: dict[str, dict[str, dict]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    probe: str = "mteb"  # the classification probe (maeb.tasktypes.probe): "mteb" or "standardized"
    vectors: str | None = None  # a protocol whose vectors this one shares (it changes only evaluators)

    @property
    def embeds_as(self) -> str:
        """The protocol name that keys this protocol's cached vectors."""
        return self.vectors or self.name

    def family_rules(self, family: str, arch: str | None = None) -> dict:
        table = self.families.get(family, {})
        return {**table.get("*", {}), **(table.get(arch, {}) if arch else {})}

    def describe(self, resampler: str | None = None) -> dict:
        return {
            "name": self.name,
            "reference": self.reference,
            "resampler": resampler or self.resampler,
            "text_documents": self.text_documents,
            **({"probe": self.probe} if self.probe != "mteb" else {}),
        }


# Wrapper settings per family and architecture. Keys: max_seconds (None: no cap), batching
# ("padded", "single", or "by-norm": single when the feature encoder normalises with group norm,
# i.e. feat_extract_norm != "layer"), frames ("conv" or "ratio", see encoders.pooling), layer
# ("last_hidden_state" or "hidden_states[-1]"), min_samples (zero-padding of short clips), dtype
# ("auto": the checkpoint's stored dtype, what transformers 5 loads when mteb passes none), l2,
# text_max_tokens, short_pad_samples (EnCodec's padding of short clips), batches ("mteb": where a
# padded batch's length enters a vector, through the ratio frame count or a mean over padding,
# clips are batched as mteb batches them, in each call's order in batches of call_batch_size, and
# a vector is cached with its batch; otherwise maeb batches by length and shares vectors).
_MTEB_2_26 = {
    "hf-whisper": {"*": {"max_seconds": 30.0, "dtype": "auto"}},
    "hf-ssl": {
        # batched (layer-norm) checkpoints: padding moves their vectors in the last bits (and the
        # ratio frame count by a frame), so they are batched as mteb batches them
        "*": {
            "max_seconds": None,
            "batching": "by-norm",
            "frames": "conv",
            "min_samples": 400,
            "dtype": "auto",
            "batches": "mteb",
        },
        "wav2vec2": {},
        "hubert": {"frames": "ratio"},
        "wavlm": {"max_seconds": 240.0, "frames": "ratio"},
        "data2vec-audio": {"batching": "single", "frames": "ratio"},
        "unispeech-sat": {"batching": "single", "frames": "ratio", "layer": "hidden_states[-1]"},
    },
    "hf-ast": {"*": {"dtype": "auto"}},
    "hf-clap": {"*": {"dtype": "auto"}},
    "hf-seamless": {"*": {"max_seconds": 60.0, "dtype": "auto", "batches": "mteb"}},
    "hf-encodec": {"*": {"max_seconds": None, "batching": "single", "short_pad_samples": "latent-frame"}},
    "hf-qwen2-audio": {"*": {"max_seconds": 30.0, "dtype": "auto", "batches": "mteb"}},
    "hf-omni-embedding": {
        "*": {"max_seconds": 300.0, "dtype": "bfloat16", "l2": True, "text_max_tokens": 300, "batches": "mteb"}
    },
    # max_seconds "position-horizon": the checkpoint's position table in samples (SEW-D:
    # max_position_embeddings x conv strides x squeeze_factor; SpeechT5: max_speech_positions x
    # strides; M-CTC-T: max_position_embeddings x strides filterbank frames), read from its config
    "hf-sew-d": {
        "*": {"max_seconds": "position-horizon", "batching": "single", "frames": "ratio", "min_samples": 720, "dtype": "auto"}
    },
    "hf-mms": {
        "*": {"max_seconds": None, "batching": "by-norm", "frames": "ratio", "min_samples": 0, "dtype": "auto", "batches": "mteb"}
    },
    "hf-speecht5": {"*": {"max_seconds": "position-horizon", "batching": "single", "min_samples": 400, "dtype": "auto"}},
    "hf-mctct": {"*": {"max_seconds": "position-horizon"}},
    # Qwen3-Omni's mixture of experts changes a clip's vector with its batch-mates: one at a time
    "hf-qwen-omni": {
        "*": {"max_seconds": 300.0, "dtype": "bfloat16", "batching": "padded"},
        "qwen3_omni_moe": {"batching": "single"},
    },
    "st-omni": {
        "*": {"max_seconds": 300.0, "batching": "padded"},
        "jina-v5-omni": {"max_seconds": 30.0},
        "bidirlm-omni": {"max_seconds": None, "batching": "single"},
    },
    "ebind": {"*": {"max_seconds": None, "batching": "padded"}},
    "hf-hear": {"*": {"window_seconds": 2.0}},
    "fusion-embedding": {"*": {"max_seconds": None, "batching": "padded"}},
    # front_end "audioset-log-mel": the official AudioSet log-mel (mteb's _log_mel); YAMNet pads to one
    # 0.96 s patch plus whole 0.48 s hops, VGGish to one example; VGGish without the port's final ReLU
    "yamnet": {"*": {"max_seconds": None, "front_end": "audioset-log-mel", "pad": "patch-hops"}},
    "vggish": {"*": {"max_seconds": None, "front_end": "audioset-log-mel", "pad": 15600, "final_relu": False}},
    "sb-cnn14": {"*": {"sample_rate": 44100, "max_seconds": None, "batching": "single", "front_end": "stft-fbank"}},
    # msclap: its own sampling rate and duration (the cut avoids its random-window branch), float WAV
    "msclap": {"*": {"sample_rate": "model", "max_seconds": "model-duration", "wav_subtype": "FLOAT", "text": "2.26"}},
    "wav2clip": {"*": {"max_seconds": None, "batching": "single"}},
    "muq-mulan": {"*": {"max_seconds": None, "batching": "single"}},
}

# The MAEB-introduction commit (a79aefed5): what the paper states (30 s caps) and how that
# commit's wrappers batch. Where its code cannot run as written (CLAP's unseeded batch
# featurisation, Qwen2-Audio's padded last-token index), the 2.26.24 behaviour is kept.
_PAPER = {
    **_MTEB_2_26,
    "hf-ssl": {
        "*": {
            "max_seconds": 30.0,
            "batching": "padded",
            "frames": "conv",
            "min_samples": 400,
            "dtype": "auto",
            "batches": "mteb",
        },
        "wav2vec2": {},
        "hubert": {"frames": "ratio"},
        "wavlm": {"frames": "ratio", "layer": "hidden_states[-1]"},
        "data2vec-audio": {"frames": "ratio"},
        "unispeech-sat": {"frames": "ratio", "layer": "hidden_states[-1]"},
    },
    "hf-seamless": {"*": {"max_seconds": 5.0, "dtype": "auto", "batches": "mteb"}},
    "hf-encodec": {"*": {"max_seconds": 30.0, "batching": "padded", "short_pad_samples": 24000, "batches": "mteb"}},
    "hf-omni-embedding": {"*": {"max_seconds": 10.0, "dtype": "bfloat16", "l2": False, "text_max_tokens": None}},
    # SEW-D: the CTC model's hidden_states[-1] (the squeezed, half-rate sequence), 30 s, padded
    # batches (720 samples kept: shorter clips do not run through its convolutions)
    "hf-sew-d": {
        "*": {
            "max_seconds": 30.0,
            "batching": "padded",
            "frames": "ratio",
            "min_samples": 720,
            "layer": "hidden_states[-1]",
            "dtype": "auto",
        }
    },
    "hf-mms": {
        "*": {"max_seconds": 30.0, "batching": "padded", "frames": "ratio", "min_samples": 0, "dtype": "auto", "batches": "mteb"}
    },
    "hf-speecht5": {"*": {"max_seconds": 30.0, "batching": "padded", "min_samples": 400, "dtype": "auto"}},
    # M-CTC-T's extractor read the 30 s cap as 480,000 filterbank frames: no cap in practice
    "hf-mctct": {"*": {"max_seconds": 4800.0}},
    # YAMNet/VGGish through the package's WaveformToInput, padded to 0.96 s, final ReLU kept
    "yamnet": {"*": {"max_seconds": 30.0, "front_end": "waveform-to-input", "pad": 15360}},
    "vggish": {"*": {"max_seconds": 30.0, "front_end": "waveform-to-input", "pad": 15360, "final_relu": True}},
    # CNN14 at 16 kHz, batches zero-padded to the longest clip, speechbrain's compute_features
    "sb-cnn14": {"*": {"sample_rate": 16000, "max_seconds": 30.0, "batching": "padded", "front_end": "compute-features"}},
    # MS-CLAP: 48 kHz audio written as 16-bit WAV and read by msclap as 44.1 kHz; no cap; text
    # padded to max_length 100 (2022) / 77 (2023) with no end-of-text suffix
    "msclap": {"*": {"sample_rate": 48000, "max_seconds": None, "wav_subtype": "PCM_16", "text": "a79"}},
    "wav2clip": {"*": {"max_seconds": None, "batching": "padded"}},
    "muq-mulan": {"*": {"max_seconds": 30.0, "batching": "padded"}},
}

PROTOCOLS: dict[str, Protocol] = {
    "mteb-2.26": Protocol(
        name="mteb-2.26",
        reference="mteb 2.26.24 (checked end to end by `make parity`)",
        resampler="torchaudio-sinc-hann",
        text_documents="title-text-strip",
        families=_MTEB_2_26,
        notes=(
            "maeb batches clips by length (so one vector serves every task); mteb pads batches of 32 in dataset "
            "order, which moves the ratio frame count of batched layer-norm models by one frame on some clips",
        ),
    ),
    "paper": Protocol(
        name="paper",
        reference="the MAEB paper's length policy as coded in mteb a79aefed5 (feat: Introduce MAEB); evaluators of mteb 2.26.24",
        resampler="torchaudio-sinc-hann",
        text_documents="title-text-strip",
        families=_PAPER,
        notes=(
            "no published MAEB score comes from a79aefed5: the public results were written by several states of "
            "mteb's maeb branch (stamped 1.38.33, 2.1.13, 2.4.2) and by releases 2.12-2.18",
        ),
    ),
    "mteb-2.26-stable": Protocol(
        name="mteb-2.26-stable",
        reference="mteb 2.26.24's vectors, draws and metrics; probes on standardised features fit to convergence (not mteb's numbers)",
        resampler="torchaudio-sinc-hann",
        text_documents="title-text-strip",
        families=_MTEB_2_26,
        probe="standardized",
        vectors="mteb-2.26",
        notes=(
            "classification and multilabel scores do not move with the machine's last bits (see maeb.stability); "
            "they differ from mteb's and the published leaderboard's",
        ),
    ),
}
DEFAULT_PROTOCOL = "mteb-2.26"


def get_protocol(name: str | Protocol) -> Protocol:
    if isinstance(name, Protocol):
        return name
    if name not in PROTOCOLS:
        raise SpecError(f"unknown protocol {name!r}; known: {', '.join(PROTOCOLS)}")
    return PROTOCOLS[name]
