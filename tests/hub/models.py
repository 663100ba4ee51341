"""Model repositories for the test hub: under the real names of maeb's catalog, at the catalog's
revisions, a tiny random checkpoint of the same architecture class (maeb.encoders.tiny builds them) with the
real repository's processor settings, so `--model whisper-medium` downloads and runs through
transformers' real loading code. The vectors mean nothing.

REAL_PROCESSOR holds, per repository, the feature extractor settings of the public repository at
that revision (its preprocessor_config.json, as shown on the repository pages): where the tiny
builder's defaults differ, the file is corrected (wav2vec2-base asks for no attention mask; the
tiny CLAP processor saved by transformers 5.24 says truncation "fusion" and frequency_min 0, the
unfused checkpoint's says rand_trunc and 50); a key the builder does not write is an error (the
builder changed class). The settings are written as the flat preprocessor_config.json these
repositories hold, not transformers 5's processor_config.json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from maeb.encoders import tiny
from maeb.spec import catalog

REAL_PROCESSOR = {
    "openai/whisper-medium": {
        "feature_extractor_type": "WhisperFeatureExtractor",
        "feature_size": 80,
        "sampling_rate": 16000,
        "hop_length": 160,
        "n_fft": 400,
        "chunk_length": 30,
        "n_samples": 480000,
        "nb_max_frames": 3000,
        "padding_value": 0.0,
        "return_attention_mask": False,
    },
    "laion/clap-htsat-unfused": {
        "feature_extractor_type": "ClapFeatureExtractor",
        "feature_size": 64,
        "sampling_rate": 48000,
        "hop_length": 480,
        "fft_window_size": 1024,
        "frequency_min": 50,
        "frequency_max": 14000,
        "max_length_s": 10,
        "nb_max_samples": 480000,
        "padding": "repeatpad",
        "truncation": "rand_trunc",
        "return_attention_mask": False,
    },
    "facebook/wav2vec2-base": {
        "feature_extractor_type": "Wav2Vec2FeatureExtractor",
        "feature_size": 1,
        "sampling_rate": 16000,
        "do_normalize": True,
        "padding_value": 0.0,
        "return_attention_mask": False,
    },
}


def model_names() -> list[str]:
    return list(REAL_PROCESSOR)


def build_model_repo(name: str, dest: Path) -> Path:
    """A folder that is repository `name` (a tiny checkpoint of its family, the real processor
    settings); returns it. Its revision is the catalog's (`catalog.find_model(name).revision`)."""
    meta = catalog.find_model(name)
    dest = Path(dest)
    staging = dest.with_name(dest.name + ".staging")
    shutil.rmtree(staging, ignore_errors=True)
    built = Path(tiny.build(meta, staging)["path"])
    config_file = built / "preprocessor_config.json"
    if config_file.exists():
        config = json.loads(config_file.read_text())
    else:  # transformers 5 saves a processor as processor_config.json; these repositories predate it
        nested = json.loads((built / "processor_config.json").read_text())
        config = {**nested.pop("feature_extractor"), "processor_class": nested["processor_class"]}
        (built / "processor_config.json").unlink()
    for key, value in REAL_PROCESSOR[meta.name].items():
        if key not in config:
            raise AssertionError(f"{name}: the tiny builder wrote no {key!r} in preprocessor_config.json (another class?)")
        config[key] = value
    config_file.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    (built / "README.md").write_text(
        f"---\nlicense: {meta.license or 'other'}\n---\nA tiny random-weight stand-in for {name} (tests only).\n"
    )
    shutil.rmtree(dest, ignore_errors=True)
    built.rename(dest)
    shutil.rmtree(staging, ignore_errors=True)
    return dest
