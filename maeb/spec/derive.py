"""Turn a labelled table into the shape a task type needs, for local data that has only clips and
labels (hub datasets in mteb's layout arrive in shape). Every draw is seeded.

  pairs          pair classification: n_pairs pairs, positive_fraction share the label
  same_label     audio-to-audio retrieval: each clip queries the others with its label
  text_to_audio  one text query per label (relevance "label") or per clip (relevance "self")
  audio_to_text  each clip queries the texts; its own label's text is relevant
  rerank         n_queries queries, each with `positives` same-label and `negatives` other-label
                 candidates; hard_negative_column keeps negatives that share that column's value
  rows           each row pairs a clip with a text or with other clips (mteb's caption and speech
                 retrieval tasks): direction t2a, a2t or a2a; ids from id_template (str.format over
                 the row, e.g. "{song_name}{line_indices[0]}") with query/corpus prefixes; relevance
                 "self" (the row's own counterpart) or a column (every row sharing its value);
                 split_text cuts a text into several queries or documents (Clotho's captions)"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

from ..core.errors import DataError, SpecError, check_keys
from ..data.sources import RetrievalData, Table, document_text

KINDS = {
    "pairs": {"label_column", "n_pairs", "positive_fraction", "seed"},
    "same_label": {"label_column", "max_queries", "seed"},
    "text_to_audio": {"label_column", "text_template", "relevance", "label_names"},
    "audio_to_text": {"label_column", "text_template", "label_names", "max_queries", "seed"},
    "rerank": {"label_column", "n_queries", "positives", "negatives", "hard_negative_column", "seed"},
    "rows": {
        "direction",
        "audio_column",
        "text_column",
        "id_template",
        "query_id_prefix",
        "corpus_id_prefix",
        "split_text",
        "relevance",
    },
}
FITS = {
    "pairs": {"pair_classification"},
    "same_label": {"retrieval"},
    "text_to_audio": {"retrieval"},
    "audio_to_text": {"retrieval"},
    "rerank": {"reranking"},
    "rows": {"retrieval"},
}


RULES: dict[str, dict[str, Any]] = {  # value rules of the numeric and choice fields
    "n_pairs": {"kind": int, "min": 1, "max": 10_000_000},
    "positive_fraction": {"kind": (int, float), "min": 0.0, "max": 1.0},
    "max_queries": {"kind": int, "min": 1},
    "n_queries": {"kind": int, "min": 1},
    "positives": {"kind": int, "min": 1},
    "negatives": {"kind": int, "min": 1},
    "seed": {"kind": int, "min": 0, "max": 2**32 - 1},
    "relevance": {"kind": str},
    "text_template": {"kind": str},
    "label_names": {"kind": dict},
}


def implied_protocol(derive: dict) -> dict:
    """Protocol defaults a derivation implies (a spec's own [protocol] still wins)."""
    if derive.get("kind") == "same_label":
        return {"ignore_identical_ids": True}  # a clip must not retrieve itself
    return {}


def validate(spec, where: str) -> None:
    """Check a spec's [derive] table: a known kind, known keys, values in range, and a kind that builds data for the spec's type
    (SpecError naming the field)."""
    from ..tasktypes import Param

    if not spec.derive:
        return
    kind = spec.derive.get("kind")
    if kind not in KINDS:
        raise SpecError(f"{where}: [derive] kind must be one of {', '.join(KINDS)}, got {kind!r}")
    check_keys(f"{where}: [derive]", {k: v for k, v in spec.derive.items() if k != "kind"}, KINDS[kind])
    for key, value in spec.derive.items():
        if key in RULES:
            rule = RULES[key]
            Param(None, kind=rule["kind"], min=rule.get("min"), max=rule.get("max")).check(key, value, f"{where}: [derive]")
    if kind == "text_to_audio" and spec.derive.get("relevance", "label") not in ("label", "self"):
        raise SpecError(f"{where}: [derive] relevance must be 'label' or 'self' for text_to_audio")
    if spec.type not in FITS[kind]:
        raise SpecError(f"{where}: [derive] kind {kind!r} builds {'/'.join(FITS[kind])} data, not {spec.type}")
    if kind == "rows" and spec.derive.get("direction") not in ("t2a", "a2t", "a2a"):
        raise SpecError(f"{where}: [derive] rows needs direction = 't2a', 'a2t' or 'a2a'")


def _text(template: str, label, names: dict | None) -> str:
    return template.format(label=(names or {}).get(str(label), label))


def derive(spec, table: Table):
    """The task's data built from a labelled table by its [derive] rule (rows, pairs or retrieval data, by kind)."""
    d = spec.derive
    if d["kind"] == "rows":
        return _rows(spec, table)
    audio = spec.data.audio_column
    label = d.get("label_column", spec.data.label_column)
    table.require([audio], "audio")
    table.require([label], "label for [derive]")
    refs, labels = table[audio], table[label]
    rng = random.Random(d.get("seed", 42))
    by_label: dict = defaultdict(list)
    for i, value in enumerate(labels):
        by_label[value].append(i)
    kind = d["kind"]
    if kind == "pairs":
        return _pairs(refs, labels, by_label, d, rng, spec)
    if kind == "same_label":
        rows = list(range(len(refs)))
        if d.get("max_queries"):
            rows = sorted(rng.sample(rows, min(d["max_queries"], len(rows))))
        ids = [f"c{i}" for i in range(len(refs))]
        corpus = dict(zip(ids, refs))
        queries = {ids[i]: refs[i] for i in rows if len(by_label[labels[i]]) > 1}
        qrels = {ids[i]: {ids[j]: 1 for j in by_label[labels[i]] if j != i} for i in rows if len(by_label[labels[i]]) > 1}
        return RetrievalData.from_dicts(corpus, queries, qrels)
    template, names = d.get("text_template", "{label}"), d.get("label_names")
    if kind == "text_to_audio":
        corpus = {f"c{i}": ref for i, ref in enumerate(refs)}
        if d.get("relevance", "label") == "self":
            queries = {f"q{i}": _text(template, v, names) for i, v in enumerate(labels)}
            qrels = {f"q{i}": {f"c{i}": 1} for i in range(len(refs))}
        else:
            keys = sorted(by_label, key=str)
            queries = {f"q{n}": _text(template, v, names) for n, v in enumerate(keys)}
            qrels = {f"q{n}": {f"c{i}": 1 for i in by_label[v]} for n, v in enumerate(keys)}
        return RetrievalData.from_dicts(corpus, queries, qrels)
    if kind == "audio_to_text":
        keys = sorted(by_label, key=str)
        doc_of = {v: f"t{n}" for n, v in enumerate(keys)}
        corpus = {doc_of[v]: document_text(_text(template, v, names)) for v in keys}
        rows = list(range(len(refs)))
        if d.get("max_queries"):
            rows = sorted(rng.sample(rows, min(d["max_queries"], len(rows))))
        queries = {f"q{i}": refs[i] for i in rows}
        qrels = {f"q{i}": {doc_of[labels[i]]: 1} for i in rows}
        return RetrievalData.from_dicts(corpus, queries, qrels)
    return _rerank(refs, labels, by_label, table, d, rng, spec.name)


def _pairs(refs, labels, by_label, d, rng, spec) -> Table:
    name = spec.name
    n_pairs = d.get("n_pairs", 1000)
    n_pos = round(n_pairs * d.get("positive_fraction", 0.5))
    groups = [v for v, rows in by_label.items() if len(rows) > 1]
    if not groups or len(by_label) < 2:
        raise DataError(f"{name}: pairs need a label with two clips and at least two labels")
    same = sum(len(rows) * (len(rows) - 1) // 2 for rows in by_label.values())
    other = len(refs) * (len(refs) - 1) // 2 - same
    if n_pos > same or n_pairs - n_pos > other:
        raise DataError(
            f"{name}: [derive] asks for {n_pos} same-label and {n_pairs - n_pos} different-label pairs, but the data "
            f"holds {same} and {other} distinct ones; lower n_pairs or change positive_fraction"
        )
    seen: set[tuple] = set()
    pairs: list[tuple] = []
    attempts = 0
    while len(pairs) < n_pairs and attempts < 50 * n_pairs:
        attempts += 1
        positive = len(pairs) < n_pos
        if positive:
            i, j = rng.sample(by_label[rng.choice(groups)], 2)
        else:
            i, j = rng.randrange(len(refs)), rng.randrange(len(refs))
            if labels[i] == labels[j]:
                continue
        key = (min(i, j), max(i, j))
        if key in seen:
            continue
        seen.add(key)
        pairs.append((i, j, int(positive)))
    rng.shuffle(pairs)
    # the pair evaluator reads data.label_column and the protocol's clip columns: name the built
    # columns so (a [derive] label_column of its own, or data.label_column other than "label", failed)
    first, second = spec.protocol.get("audio1_column", "audio1"), spec.protocol.get("audio2_column", "audio2")
    columns = {first: [refs[i] for i, _, _ in pairs], second: [refs[j] for _, j, _ in pairs]}
    columns[spec.data.label_column] = [y for *_, y in pairs]
    return Table(columns, name=f"{name} pairs")


def _rerank(refs, labels, by_label, table, d, rng, name) -> RetrievalData:
    positives, negatives = d.get("positives", 3), d.get("negatives", 10)
    hard = d.get("hard_negative_column")
    if hard:
        table.require([hard], "hard_negative_column")
    eligible = [i for i in range(len(refs)) if len(by_label[labels[i]]) > positives]
    if not eligible:
        raise DataError(f"{name}: no label has more than {positives} clips to serve as positives")
    queries = sorted(rng.sample(eligible, min(d.get("n_queries", 100), len(eligible))))
    corpus, q_items, qrels, candidates = {}, {}, {}, {}
    for i in queries:
        pos = rng.sample([j for j in by_label[labels[i]] if j != i], positives)
        pool = [j for j in range(len(refs)) if labels[j] != labels[i]]
        if hard:
            same = [j for j in pool if table[hard][j] == table[hard][i]]
            pool = same if len(same) >= negatives else pool
        neg = rng.sample(pool, min(negatives, len(pool)))
        ids = [f"c{j}" for j in pos + neg]
        for j in pos + neg:
            corpus[f"c{j}"] = refs[j]
        rng.shuffle(ids)
        q_items[f"q{i}"] = refs[i]
        qrels[f"q{i}"] = {f"c{j}": 1 for j in pos}
        candidates[f"q{i}"] = ids
    return RetrievalData.from_dicts(corpus, q_items, qrels, candidates)


def _rows(spec, table: Table) -> RetrievalData:
    d = spec.derive
    audio = d.get("audio_column", spec.data.audio_column)
    text = d.get("text_column", spec.data.text_column or "text")
    direction = d["direction"]
    needed = [audio] + ([] if direction == "a2a" else [text])
    relevance = d.get("relevance", "self")
    if relevance != "self":
        needed.append(relevance)
    table.require(needed, "[derive] rows")
    template = d.get("id_template")
    columns = table.columns

    def row_id(i: int) -> str:
        if template is None:
            return str(i)
        try:
            return template.format(**{k: v[i] for k, v in columns.items()})
        except (KeyError, IndexError, TypeError) as exc:
            raise DataError(f"{spec.name}: id_template {template!r} fails on row {i} ({exc})") from exc

    ids = [row_id(i) for i in range(len(table))]
    q_prefix, c_prefix = d.get("query_id_prefix", ""), d.get("corpus_id_prefix", "")
    query_col, corpus_col = {"t2a": (text, audio), "a2t": (audio, text), "a2a": (audio, audio)}[direction]
    sep = d.get("split_text")
    # lists keep duplicate ids, which some mteb datasets have (see the retrieval notes)
    queries: list[tuple[str, object]] = []
    corpus: list[tuple[str, object]] = []
    own: dict[int, list[str]] = {}  # row -> the document ids that row contributes
    asked: dict[int, list[str]] = {}  # row -> the query ids that row contributes
    for i, rid in enumerate(ids):
        if sep and query_col == text:
            pieces = str(columns[text][i]).split(sep)
            asked[i] = [f"q-{rid}-{n}" for n in range(len(pieces))]
            queries += list(zip(asked[i], pieces))
        else:
            asked[i] = [q_prefix + rid]
            queries.append((q_prefix + rid, columns[query_col][i]))
        if sep and corpus_col == text:
            pieces = str(columns[text][i]).split(sep)
            own[i] = [f"d-{rid}-{n}" for n in range(len(pieces))]
            corpus += [(doc, document_text(piece)) for doc, piece in zip(own[i], pieces)]
        else:
            own[i] = [c_prefix + rid]
            value = columns[corpus_col][i]
            corpus.append((c_prefix + rid, value if corpus_col == audio else document_text(value)))
    qrels: dict[str, dict[str, int]] = {}
    if relevance == "self":
        for i in range(len(ids)):
            for q in asked[i]:
                qrels.setdefault(q, {}).update({doc: 1 for doc in own[i]})
    else:
        groups: dict = defaultdict(list)
        for i, value in enumerate(columns[relevance]):
            groups[str(value)].append(i)
        for rows in groups.values():
            docs = {doc: 1 for i in rows for doc in own[i]}
            for i in rows:
                for q in asked[i]:
                    qrels.setdefault(q, {}).update(docs)
    return RetrievalData.from_lists(corpus, queries, qrels)
