"""Small local datasets in the hub layout each catalog task reads: the configs, splits and columns
its spec names (before any transform), with generated tones whose pitch encodes the class, and with
the rows each custom transform exists for (labels to drop, unmapped values, undecodable clips)."""

from __future__ import annotations

import string
from pathlib import Path

import numpy as np

from maeb.mock import tone, vector_wav, write_hub_repo
from maeb.tasktypes import get as get_type

N_CLASSES = 3
PER_CLASS = 12


def wav(seconds: float, freq: float, seed: int) -> bytes:
    import io

    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, tone(freq, seconds, 16000, seed=seed), 16000, format="WAV")
    return buf.getvalue()


def class_freq(c: int) -> float:
    return 220.0 * (2.2**c)


def source_column(spec, column: str) -> tuple[str, list[dict]]:
    """Follow renames and maps back to the column the repo must hold; returns it and the steps."""
    steps = []
    for step in reversed(spec.transforms):
        if step["op"] in ("rename", "map") and step.get("to", step["column"]) == column:
            steps.append(step)
            column = step["column"]
    return column, steps


def label_values(spec, column: str, classes: list) -> list:
    """Source values for each class (through the maps applied to this column)."""
    source, steps = source_column(spec, column)
    values = list(classes)
    for step in reversed(steps[::-1]):
        if step["op"] == "map":
            inverse = {str(v): k for k, v in step["mapping"].items()}
            values = [[inverse[str(x)] for x in v] if isinstance(v, list) else inverse.get(str(v), v) for v in values]
            if step.get("lowercase"):
                values = [v.upper() if isinstance(v, str) else v for v in values]
    return values


def final_classes(spec) -> list:
    for step in spec.transforms:
        if step["op"] == "map" and step.get("to", step["column"]) == spec.data.label_column:
            return list(step["mapping"].values())[:N_CLASSES]
    if spec.type == "zeroshot" and spec.protocol.get("candidate_texts"):
        return list(range(len(spec.protocol["candidate_texts"])))
    return [f"class{c}" for c in range(N_CLASSES)]


def table_rows(spec, split: str, subset: str, seed: int) -> dict[str, list]:
    d = spec.data
    classes = final_classes(spec)
    rng = np.random.default_rng(seed)
    n_per = max(PER_CLASS, 4)
    cols: dict[str, list] = {}
    label = d.label_column
    kind = spec.type
    rows = [c for c in range(len(classes)) for _ in range(n_per)]
    if kind == "pair_classification":
        a1, a2 = d.audio_columns
        cols[a1], cols[a2], cols[label] = [], [], []
        for i in range(36):
            same = i % 2
            c1 = i % N_CLASSES
            c2 = c1 if same else (c1 + 1) % N_CLASSES
            cols[a1].append(wav(0.4, class_freq(c1), seed + i))
            cols[a2].append(wav(0.5, class_freq(c2), seed + 100 + i))
            cols[label].append(same)
        return cols
    audio = d.audio_columns[0]
    cols[audio] = [wav(float(rng.uniform(0.2, 0.8)), class_freq(c % 6), seed + i) for i, c in enumerate(rows)]
    if spec.derive.get("kind") == "rows":
        return rows_columns(spec, cols, rows, audio, subset)
    source, _ = source_column(spec, label)
    values = label_values(spec, label, classes)
    if kind == "multilabel":
        sets = [[values[c]] + ([values[(c + 1) % len(values)]] if i % 3 == 0 else []) for i, c in enumerate(rows)]
        for step in spec.transforms:  # BirdSet stores integer codes that a map turns into names
            if step["op"] == "map" and step["column"] in (source, label):
                keys = list(step["mapping"])
                sets = [[int(keys[c]) for c in range(len(s))] for s in sets]
        cols[source] = sets
    else:
        cols[source] = [values[c] for c in rows]
    for step in spec.transforms:  # rows the filters and maps exist to remove
        if step.get("splits") and split not in step["splits"]:
            continue
        if step["op"] == "filter" and step["column"] == source and "drop" in step:
            for value in step["drop"]:
                cols[audio].append(wav(0.3, 300.0, seed))
                cols[source].append(value)
        if step["op"] == "filter" and step.get("drop_empty") and step["column"] in (source, label):
            cols[audio].append(wav(0.3, 300.0, seed))
            cols[source].append([] if kind == "multilabel" else "")
        if step["op"] == "map" and step.get("unmapped") == "drop" and step["column"] == source:
            cols[audio].append(wav(0.3, 300.0, seed))
            cols[source].append("Unmapped")
        if step["op"] == "drop_invalid_audio":
            cols[audio] += [wav(0.01, 300.0, seed), b"not audio at all"]
            if step.get("check_finite", True):
                cols[audio].append(vector_wav(np.full(2000, np.nan)))
            cols[source] += [values[0]] * (len(cols[audio]) - len(cols[source]))
    if source != "ebird_code_multilabel" and any(
        s["op"] == "rename" and s["column"] == "ebird_code_multilabel" for s in spec.transforms
    ):
        cols["ebird_code_multilabel"] = cols.pop(source)
    return cols


def rows_columns(spec, cols, rows, audio, subset) -> dict[str, list]:
    d = spec.derive
    n = len(rows)
    text = d.get("text_column", "text")
    fields = {f for _, f, _, _ in string.Formatter().parse(d.get("id_template") or "") if f}
    for field in fields:
        base = field.split("[")[0]
        if base == "line_indices":
            cols[base] = [[i, i + 1] for i in range(n)]
        elif base == "index":
            cols[base] = list(range(n))
        else:
            cols[base] = [f"{base}-{subset}-{i // 2 if base == 'id' else i}" for i in range(n)]  # FLEURS-like repeated ids
    sentences = [f"a tone at {class_freq(c % 6):.0f} Hz" for c in rows]
    if d.get("split_text"):
        sentences = [f"{s}. another {s}." for s in sentences]
    cols[text] = sentences
    if d.get("relevance") not in (None, "self", text):
        cols[d["relevance"]] = [f"artist{c}" for c in rows]
    if spec.data.subset_column:
        cols[spec.data.subset_column] = [subset] * n
    return cols


def retrieval_configs(spec, subset: str, seed: int) -> dict[str, dict[str, dict[str, list]]]:
    split = spec.data.eval_splits[0]
    prefix = "" if subset == "default" else f"{subset}-"
    n_docs, n_queries = 30, 10
    text_queries = spec.category == "t2a"
    text_docs = spec.category == "a2t"
    docs = {"id": [f"d{i}" for i in range(n_docs)]}
    if text_docs:
        docs["text"] = [f"a tone at {class_freq(i % 6):.0f} Hz" for i in range(n_docs)]
    else:
        docs["audio"] = [wav(0.3, class_freq(i % 6), seed + i) for i in range(n_docs)]
    queries = {"id": [f"q{i}" for i in range(n_queries)]}
    if text_queries:
        queries["text"] = [f"a tone at {class_freq(i % 6):.0f} Hz" for i in range(n_queries)]
    else:
        queries["audio"] = [wav(0.3, class_freq(i % 6), seed + 50 + i) for i in range(n_queries)]
    qrels = {"query-id": [], "corpus-id": [], "score": []}
    for q in range(n_queries):
        for doc in range(q % 6, n_docs, 6):
            qrels["query-id"].append(f"q{q}")
            qrels["corpus-id"].append(f"d{doc}")
            qrels["score"].append(1)
    configs = {
        prefix + "corpus": {split: docs},
        prefix + "queries": {split: queries},
        (prefix + "qrels" if prefix else "default"): {split: qrels},
    }
    if spec.type == "reranking":
        ranked = {
            "query-id": [f"q{q}" for q in range(n_queries)],
            "corpus-ids": [[f"d{(q + k) % n_docs}" for k in range(13)] for q in range(n_queries)],
        }
        configs[prefix + "top_ranked"] = {split: ranked}
    return configs


def build_fixture(spec, root: Path) -> Path:
    """Write the fixture repo for `spec` under root and return its path."""
    d = spec.data
    splits = get_type(spec.type).splits(spec)
    configs: dict[str, dict[str, dict[str, list]]] = {}
    for n, subset in enumerate(d.subsets[:3]):  # three subsets are enough to exercise the loop
        if d.layout == "retrieval":
            configs.update(retrieval_configs(spec, subset, 10 * n))
            continue
        config = d.config if d.config is not None else subset
        for split in splits:
            repo_split = d.split_names.get(split, split)
            part = table_rows(spec, split, subset, 1000 * n + 7 * len(split))
            target = configs.setdefault(config, {}).setdefault(repo_split, {})
            for column, values in part.items():
                target.setdefault(column, []).extend(values)
    audio_columns = tuple(d.audio_columns) + (("audio",) if d.layout == "retrieval" else ())
    return write_hub_repo(root, configs, audio_columns=audio_columns)
