"""Regenerate models/*.toml from mteb's model registry: every model whose modalities include audio.

  python scripts/import_models.py          # write models/*.toml
  python scripts/import_models.py --check  # exit 1 if the files differ from what the script writes

Facts (name, revision, parameters, embedding size, licence, languages, release date, reference,
training datasets, adapted_from, public training code and data, ...) come from the pinned mteb
release; the family is maeb's, chosen by the mteb wrapper that loads the model (LOADER_FAMILIES).
Models whose wrapper has no maeb family run through mteb's own wrapper (family "mteb").
`published` marks the models with MAEB scores in embeddings-benchmark/results (PUBLISHED).

Length caps, batching, frame counting and dtype are not options of an entry: the run's protocol
decides them per family (maeb/encoders/protocols.py), so one entry serves both mteb 2.26.24's protocol and
the paper's. Options an entry does carry select a variant of its family's code (st-omni's
`variant`) or pin a second checkpoint (OmniEmbed's `base_revision`).

A model that is not in mteb's registry is not generated: write its entry by hand in a file of
its own (models/local.toml, or any file passed by path), see docs/add-model.md."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from toml_out import dumps  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

# mteb wrapper (loader's __name__) -> maeb family
LOADER_FAMILIES = {
    "WhisperAudioWrapper": "hf-whisper",
    "Wav2Vec2AudioWrapper": "hf-ssl",
    "HubertWrapper": "hf-ssl",
    "WavlmWrapper": "hf-ssl",
    "Data2VecAudioWrapper": "hf-ssl",
    "UniSpeechWrapper": "hf-ssl",
    "SewDWrapper": "hf-sew-d",
    "MMSWrapper": "hf-mms",
    "SpeechT5Audio": "hf-speecht5",
    "SpeechT2Multimodal": "hf-speecht5",
    "MCTCTWrapper": "hf-mctct",
    "ASTWrapper": "hf-ast",
    "ClapZeroShotWrapper": "hf-clap",
    "SeamlessM4TWrapper": "hf-seamless",
    "EncodecWrapper": "hf-encodec",
    "Qwen2AudioWrapper": "hf-qwen2-audio",
    "LCOEmbedding": "hf-omni-embedding",
    "QwenOmniWrapper": "hf-qwen-omni",
    "E5OmniWrapper": "st-omni",
    "TevatronOmniEmbedWrapper": "st-omni",
    "JinaV5OmniWrapper": "st-omni",
    "BidirLMOmniEncoder": "st-omni",
    "EBindWrapper": "ebind",
    "HeARS11AudioWrapper": "hf-hear",
    "FusionEmbeddingWrapper": "fusion-embedding",
    "yamnet_loader": "yamnet",
    "vggish_loader": "vggish",
    "CNN14Wrapper": "sb-cnn14",
    "MSClapWrapper": "msclap",
    "Wav2ClipZeroShotWrapper": "wav2clip",
    "MuQMuLanWrapper": "muq-mulan",
}
# st-omni runs four wrappers of mteb that differ in prompts and input format
ST_VARIANTS = {
    "E5OmniWrapper": "e5-omni",
    "TevatronOmniEmbedWrapper": "omniembed",
    "JinaV5OmniWrapper": "jina-v5-omni",
    "BidirLMOmniEncoder": "bidirlm-omni",
}
# family -> models/{file}.toml
FILES = {
    "hf-whisper": "whisper",
    "hf-ssl": "wav2vec2",
    "hf-sew-d": "ssl_variants",
    "hf-mms": "ssl_variants",
    "hf-speecht5": "ssl_variants",
    "hf-mctct": "ssl_variants",
    "hf-ast": "ast",
    "hf-clap": "clap",
    "hf-seamless": "seamless",
    "hf-encodec": "encodec",
    "hf-qwen2-audio": "audio_llm",
    "hf-omni-embedding": "audio_llm",
    "hf-qwen-omni": "audio_llm",
    "st-omni": "omni_embedding",
    "ebind": "omni_embedding",
    "fusion-embedding": "omni_embedding",
    "yamnet": "audioset",
    "vggish": "audioset",
    "sb-cnn14": "audioset",
    "hf-hear": "audioset",
    "msclap": "clap_family",
    "wav2clip": "clap_family",
    "muq-mulan": "clap_family",
    "mteb": "mteb_registry",
}
# the MAEB paper's reference models, in the order the first import wrote them
PAPER = [
    "openai/whisper-tiny",
    "openai/whisper-base",
    "openai/whisper-small",
    "openai/whisper-medium",
    "openai/whisper-large-v3",
    "facebook/wav2vec2-base",
    "facebook/wav2vec2-base-960h",
    "facebook/wav2vec2-large",
    "facebook/wav2vec2-large-xlsr-53",
    "facebook/wav2vec2-xls-r-300m",
    "facebook/wav2vec2-xls-r-1b",
    "facebook/wav2vec2-xls-r-2b",
    "facebook/hubert-base-ls960",
    "facebook/hubert-large-ls960-ft",
    "microsoft/wavlm-base",
    "microsoft/wavlm-base-plus",
    "microsoft/wavlm-large",
    "facebook/data2vec-audio-base-960h",
    "facebook/data2vec-audio-large-960h",
    "MIT/ast-finetuned-audioset-10-10-0.4593",
    "laion/clap-htsat-fused",
    "laion/clap-htsat-unfused",
    "laion/larger_clap_general",
    "laion/larger_clap_music",
    "laion/larger_clap_music_and_speech",
    "facebook/seamless-m4t-v2-large",
    "facebook/encodec_24khz",
    "Qwen/Qwen2-Audio-7B",
    "LCO-Embedding/LCO-Embedding-Omni-3B",
    "LCO-Embedding/LCO-Embedding-Omni-7B",
]
# models with MAEB results in embeddings-benchmark/results (67): the paper's 30 and these 37
PUBLISHED = set(PAPER) | {
    "BidirLM/BidirLM-Omni-2.5B-Embedding",
    "EximiusLabs/fusion-embedding-1-2b-preview",
    "EximiusLabs/fusion-embedding-2-2b-preview",
    "Haon-Chen/e5-omni-3B",
    "Haon-Chen/e5-omni-7B",
    "OpenMuQ/MuQ-MuLan-large",
    "Qwen/Qwen2.5-Omni-3B",
    "Qwen/Qwen2.5-Omni-7B",
    "Qwen/Qwen3-Omni-30B-A3B-Instruct",
    "Qwen/Qwen3-Omni-30B-A3B-Thinking",
    "Tevatron/OmniEmbed-v0.1",
    "asapp/sew-d-base-plus-400k-ft-ls100h",
    "asapp/sew-d-mid-400k-ft-ls100h",
    "asapp/sew-d-tiny-100k-ft-ls100h",
    "encord-team/ebind-full",
    "facebook/mms-1b-all",
    "facebook/mms-1b-fl102",
    "facebook/mms-1b-l1107",
    "facebook/wav2vec2-lv-60-espeak-cv-ft",
    "facebook/wav2vec2-xls-r-2b-21-to-en",
    "google/vggish",
    "google/yamnet",
    "jinaai/jina-embeddings-v5-omni-nano",
    "jinaai/jina-embeddings-v5-omni-small",
    "lyrebird/wav2clip",
    "matthewagi/HeAR-s1.1",
    "microsoft/msclap-2022",
    "microsoft/msclap-2023",
    "microsoft/speecht5_multimodal",
    "microsoft/unispeech-sat-base-100h-libri-ft",
    "microsoft/wavlm-base-plus-sd",
    "microsoft/wavlm-base-plus-sv",
    "microsoft/wavlm-base-sd",
    "microsoft/wavlm-base-sv",
    "speechbrain/cnn14-esc50",
    "speechbrain/m-ctc-t-large",
    "vitouphy/wav2vec2-xls-r-300m-phoneme",
}
ALIASES = {
    "MIT/ast-finetuned-audioset-10-10-0.4593": ["ast-audioset", "ast"],
    "facebook/seamless-m4t-v2-large": ["seamless-m4t-v2"],
    "facebook/encodec_24khz": ["encodec-24khz"],
    "Qwen/Qwen2-Audio-7B": ["qwen2-audio-7b"],
    "laion/clap-htsat-fused": ["clap-htsat-fused"],
    "laion/clap-htsat-unfused": ["clap-htsat-unfused"],
    "speechbrain/cnn14-esc50": ["cnn14"],
    "microsoft/msclap-2023": ["msclap"],
}
SIMILARITY = {"cosine": "cosine", "dot": "dot", "euclidean": "euclidean", "MaxSim": "max_sim", "max_sim": "max_sim"}


def mteb_extras() -> dict[str, list[str]]:
    """mteb's pip extras -> their requirements, from its installed metadata."""
    from importlib import metadata

    out: dict[str, list[str]] = {}
    for line in metadata.requires("mteb") or []:
        match = re.search(r"""extra\s*==\s*["']([^"']+)["']""", line)
        if match:
            out.setdefault(_norm(match.group(1)), []).append(line.split(";")[0].strip())
    return out


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def family_of(meta) -> tuple[str, str]:
    loader = getattr(meta.loader, "__name__", None) or ""
    return LOADER_FAMILIES.get(loader, "mteb"), loader


def entry(meta, extras: dict[str, list[str]], mteb_version: str) -> dict:
    family, loader = family_of(meta)
    out: dict = {"name": meta.name}
    if meta.name in ALIASES:
        out["aliases"] = ALIASES[meta.name]
    out.update({"family": family, "revision": str(meta.revision)})
    embed_dim = meta.embed_dim
    if isinstance(embed_dim, (list, tuple)):  # Matryoshka: mteb's to_dict writes the largest
        embed_dim = max(embed_dim)
    similarity = getattr(meta.similarity_fn_name, "value", meta.similarity_fn_name)
    for key, value in (
        ("n_parameters", meta.n_parameters),
        ("n_embedding_parameters", meta.n_embedding_parameters),
        ("memory_usage_mb", meta.memory_usage_mb),
        ("max_tokens", meta.max_tokens if meta.max_tokens is None or meta.max_tokens != float("inf") else None),
        ("embed_dim", embed_dim),
        ("license", meta.license),
        ("reference", meta.reference),
        ("release_date", meta.release_date),
    ):
        if value is not None:
            out[key] = value
    out["modalities"] = [m for m in meta.modalities if m in ("audio", "text")]
    out["similarity"] = SIMILARITY.get(str(similarity), "cosine") if similarity else "cosine"
    if meta.languages:
        out["languages"] = list(meta.languages)
    if meta.open_weights is not None:
        out["open_weights"] = bool(meta.open_weights)
    if meta.framework:
        out["framework"] = list(meta.framework)
    if meta.training_datasets is not None:
        out["training_datasets"] = sorted(meta.training_datasets)
    for key in ("adapted_from", "superseded_by", "public_training_code", "public_training_data", "use_instructions"):
        value = getattr(meta, key)
        if value is not None:
            out[key] = value
    if list(meta.model_type) != ["dense"]:
        out["model_type"] = list(meta.model_type)
    if meta.citation:
        out["citation"] = meta.citation.strip()
    out["published"] = meta.name in PUBLISHED
    options = entry_options(meta, family, loader)
    if family == "mteb":
        groups = ["audio", *(meta.extra_requirements_groups or [])]
        requires = [f"mteb=={mteb_version}"]
        for group in groups:
            requires += extras.get(_norm(group), [])
        out["requires"] = list(dict.fromkeys(requires))
        out["notes"] = (
            f"Runs mteb {mteb_version}'s own wrapper ({loader or 'no loader'}) through maeb's engine; "
            "maeb has no family of its own for it."
        )
    else:
        # what the model's own code needs beyond the family (remote code, a transformers range),
        # from mteb's extras; mteb's audio/video/image groups serve mteb's collators, not maeb
        requires = []
        for group in meta.extra_requirements_groups or []:
            if _norm(group) not in ("audio", "video", "image"):
                requires += [r for r in extras.get(_norm(group), []) if not r.startswith(MTEB_ONLY)]
        if requires:
            out["requires"] = list(dict.fromkeys(requires))
    if options:
        out["options"] = options
    return out


MTEB_ONLY = ("torchaudio", "torchcodec", "datasets", "soundfile")


def entry_options(meta, family: str, loader: str) -> dict:
    options: dict = {}
    if family == "st-omni":
        options["variant"] = ST_VARIANTS[loader]
        base = (meta.loader_kwargs or {}).get("base_revision")
        if base:
            options["base_revision"] = base
    return options


def generate() -> dict[str, str]:
    import mteb

    extras = mteb_extras()
    metas = {m.name: m for m in mteb.get_model_metas() if "audio" in (m.modalities or [])}
    missing = sorted(PUBLISHED - set(metas))
    if missing:
        raise SystemExit(f"published models missing from mteb {mteb.__version__}'s audio registry: {missing}")
    order = [n for n in PAPER if n in metas] + sorted(set(metas) - set(PAPER), key=str.lower)
    files: dict[str, list[dict]] = {}
    for name in order:
        item = entry(metas[name], extras, mteb.__version__)
        files.setdefault(FILES[item["family"]], []).append(item)
    header = f"# Generated by scripts/import_models.py from mteb {mteb.__version__}'s model registry; edit the script, not this file.\n"
    return {f"models/{group}.toml": header + dumps({"model": entries}) for group, entries in files.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the files instead of writing them")
    args = parser.parse_args(argv)
    outputs = generate()
    stale = []
    for rel, text in outputs.items():
        path = ROOT / rel
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(rel)
            continue
        path.write_text(text, encoding="utf-8")
        print(f"{rel}: {text.count('[[model]]')} entries")
    if stale:
        print(f"out of date (run scripts/import_models.py): {', '.join(stale)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
