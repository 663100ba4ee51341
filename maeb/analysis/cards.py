"""What the figures and the leaderboard page say about each model (its card) and each cell (where the
score comes from): parameters, embedding dimension, licence, reference, revision and protocol, read
from the model_meta.json beside the results, else from maeb's catalog; a cell's provenance from the
result file or CSV row it was read from."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..core.identity import http_url
from .leaderboard import Board


@dataclass
class Card:
    """One model's facts; None where neither its results nor the catalog record them."""

    model: str
    revisions: list[str]
    n_parameters: int | None = None
    embed_dim: int | None = None
    license: str | None = None
    reference: str | None = None
    open_weights: bool | None = None
    modalities: list[str] = field(default_factory=list)
    protocol: str | None = None  # maeb's protocol name (e.g. mteb-2.26), or the mteb version a published file names
    source: str = ""  # where the facts come from: "model_meta.json", "catalog" or ""
    baseline: bool = False  # a feature baseline (MFCC statistics), not a learned model

    def as_dict(self) -> dict:
        """The card as the page's JSON carries it."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _metas(board: Board) -> dict[str, dict]:
    """model name -> the model_meta.json beside its result files (mteb writes one per model and revision folder)."""
    out: dict[str, dict] = {}
    folders = dict.fromkeys(
        Path(s.source).parent for scores in board.cells.values() for s in scores if s.source.endswith(".json")
    )
    for folder in folders:
        try:
            meta = json.loads((folder / "model_meta.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # the reader reports unreadable result files; a card just lacks these facts
        if isinstance(meta, dict) and isinstance(meta.get("name"), str):
            out.setdefault(meta["name"], meta)
    return out


def _base_name(model: str) -> str:
    """'org/model [setting]' (an experiment row) -> 'org/model'."""
    return model.split(" [", 1)[0]


def _protocol(board: Board, model: str) -> str | None:
    """The protocol a model's first result file records (maeb's name), else the mteb version of its scores."""
    for (m, _), scores in board.cells.items():
        if m != model:
            continue
        for s in scores:
            if s.source.endswith(".json"):
                try:
                    data = json.loads(Path(s.source).read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    continue
                name = ((data.get("maeb") or {}).get("protocol") or {}).get("name")
                if name:
                    return str(name)
            if s.mteb_version:
                return f"mteb {s.mteb_version}"
    return None


def cards(board: Board) -> dict[str, Card]:
    """A card for every row of the board: facts from the model_meta.json beside its results, else the catalog's."""
    from ..spec import catalog

    metas = _metas(board)
    registered = catalog.models()
    out = {}
    for row in board.rows:
        base = _base_name(row.model)
        card = Card(row.model, list(row.revisions), protocol=_protocol(board, row.model))
        meta = metas.get(base)
        if meta is not None:
            card.n_parameters = meta.get("n_parameters")
            card.embed_dim = meta.get("embed_dim")
            card.license = meta.get("license")
            card.reference = http_url(meta.get("reference"))  # a page links it: http(s) only
            card.open_weights = meta.get("open_weights")
            card.modalities = list(meta.get("modalities") or [])
            card.baseline = (meta.get("maeb") or {}).get("family") == "mfcc"
            card.source = "model_meta.json"
        elif base in registered:
            m = registered[base]
            card.n_parameters, card.embed_dim, card.license = m.n_parameters, m.embed_dim, m.license
            card.reference, card.open_weights, card.modalities = http_url(m.reference), m.open_weights, list(m.modalities)
            card.baseline = m.family == "mfcc"
            card.source = "catalog"
        if card.embed_dim is not None and not isinstance(card.embed_dim, int):
            card.embed_dim = None  # mteb writes a list for models with several output sizes: no single dimension
        out[row.model] = card
    return out


def csv_source(source: str) -> tuple[str, str]:
    """A score read from a CSV names its file and line ('main_scores.csv:12'): (the file, the line), else ('', '')."""
    import re

    found = re.fullmatch(r"(.*\.csv)(?::(\d+))?", source)
    return (found.group(1), found.group(2) or "") if found else ("", "")


def _file_date(source: str) -> str:
    """For a score whose file records no date (a published main_scores.csv, mteb's own result files): the
    day the file was last written, said to be that, or that no date is known."""
    import datetime as dt

    try:
        stamp = Path(source).stat().st_mtime
    except (OSError, ValueError):
        return ", undated (the file records no date)"
    day = dt.datetime.fromtimestamp(stamp, dt.UTC).date().isoformat()
    return f", undated in the file, file written {day}"


def provenance(board: Board, model: str, task: str) -> str:
    """Where a cell's score comes from, one line: a maeb run's result file or a published file, and its date."""
    scores = board.cells.get((model, task), [])
    if not scores:
        return "no result"
    s = scores[0]
    path, row = csv_source(s.source)
    if path:
        kind = "published results"
    else:  # maeb writes no mteb_version into its own result files; mteb does
        kind = "mteb result file" if s.mteb_version else "maeb run"
    where = (Path(path or s.source).name + (f" row {row}" if row else "")) if s.source else "unknown file"
    date = f", {s.date[:10]}" if s.date else _file_date(path or s.source)
    version = f", mteb {s.mteb_version}" if s.mteb_version else ""
    return f"{kind} {where}{date}{version}"


def shuffled_controls(board: Board) -> dict[tuple[str, str], float]:
    """(model, task) -> that model's label-shuffled control on the task (maeb.tasktypes.control), as the
    board scores the task: the mean over the splits and subsets of the cell, each read from its own
    result file. A control is a fact of one model's run (its embeddings, probed with permuted labels),
    not of the task: two models on one task have two controls, and neither stands for the task."""
    out: dict[tuple[str, str], float] = {}
    records: dict[str, dict | None] = {}
    for key, scores in sorted(board.cells.items()):
        values = []
        for s in scores:
            if not s.source.endswith(".json"):
                break  # a published CSV records no control
            if s.source not in records:
                try:
                    records[s.source] = json.loads(Path(s.source).read_text(encoding="utf-8"))["maeb"]["baselines"]
                except (OSError, ValueError, KeyError, TypeError):
                    records[s.source] = None  # no baselines recorded: the run did not ask for the control
            try:
                values.append(float(records[s.source][s.split][s.subset]["shuffled"]))  # type: ignore[index]
            except (KeyError, TypeError, ValueError):
                break  # a split or subset without the control: no mean over the cell
        else:
            if values:
                out[key] = sum(values) / len(values)
    return out
