"""Turn a labelled table into the shape a task type needs, for local data that has only clips and
labels (hub datasets in mteb's layout arrive in shape). Every draw is seeded.

  pairs          pair classification: n_pairs pairs, positive_fraction share the label
  same_label     audio-to-audio retrieval: each clip queries the others with its label
  text_to_audio  one text query per label (relevance "label") or per clip (relevance "self")
  audio_to_text  each clip queries the texts; its own label's text is relevant
  rerank         n_queries queries, each with `positives` same-label and `negatives` other-label
                 candidates; hard_negative_column keeps negatives that share that column's value"""

from __future__ import annotations

import random
from collections import defaultdict

from .data import Table
from .errors import DataError, SpecError, check_keys
from .tasktypes.retrieval import RetrievalData

KINDS = {
    "pairs": {"label_column", "n_pairs", "positive_fraction", "seed"},
    "same_label": {"label_column", "max_queries", "seed"},
    "text_to_audio": {"label_column", "text_template", "relevance", "label_names"},
    "audio_to_text": {"label_column", "text_template", "label_names", "max_queries", "seed"},
    "rerank": {"label_column", "n_queries", "positives", "negatives", "hard_negative_column", "seed"},
}
FITS = {
    "pairs": {"pair_classification"},
    "same_label": {"retrieval"},
    "text_to_audio": {"retrieval"},
    "audio_to_text": {"retrieval"},
    "rerank": {"reranking"},
}


def validate(spec, where: str) -> None:
    if not spec.derive:
        return
    kind = spec.derive.get("kind")
    if kind not in KINDS:
        raise SpecError(f"{where}: [derive] kind must be one of {', '.join(KINDS)}, got {kind!r}")
    check_keys(f"{where}: [derive]", {k: v for k, v in spec.derive.items() if k != "kind"}, KINDS[kind])
    if spec.type not in FITS[kind]:
        raise SpecError(f"{where}: [derive] kind {kind!r} builds {'/'.join(FITS[kind])} data, not {spec.type}")
    if kind == "same_label":
        spec.protocol["ignore_identical_ids"] = True  # a clip must not retrieve itself


def _text(template: str, label, names: dict | None) -> str:
    return template.format(label=(names or {}).get(str(label), label))


def derive(spec, table: Table):
    d = spec.derive
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
        return _pairs(refs, labels, by_label, d, rng, spec.name)
    if kind == "same_label":
        rows = list(range(len(refs)))
        if d.get("max_queries"):
            rows = sorted(rng.sample(rows, min(d["max_queries"], len(rows))))
        ids = [f"c{i}" for i in range(len(refs))]
        corpus = dict(zip(ids, refs))
        queries = {ids[i]: refs[i] for i in rows if len(by_label[labels[i]]) > 1}
        qrels = {ids[i]: {ids[j]: 1 for j in by_label[labels[i]] if j != i} for i in rows if len(by_label[labels[i]]) > 1}
        return RetrievalData(corpus, queries, qrels)
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
        return RetrievalData(corpus, queries, qrels)
    if kind == "audio_to_text":
        keys = sorted(by_label, key=str)
        doc_of = {v: f"t{n}" for n, v in enumerate(keys)}
        corpus = {doc_of[v]: _text(template, v, names) for v in keys}
        rows = list(range(len(refs)))
        if d.get("max_queries"):
            rows = sorted(rng.sample(rows, min(d["max_queries"], len(rows))))
        queries = {f"q{i}": refs[i] for i in rows}
        qrels = {f"q{i}": {doc_of[labels[i]]: 1} for i in rows}
        return RetrievalData(corpus, queries, qrels)
    return _rerank(refs, labels, by_label, table, d, rng, spec.name)


def _pairs(refs, labels, by_label, d, rng, name) -> Table:
    n_pairs = d.get("n_pairs", 1000)
    n_pos = round(n_pairs * d.get("positive_fraction", 0.5))
    groups = [v for v, rows in by_label.items() if len(rows) > 1]
    if not groups or len(by_label) < 2:
        raise DataError(f"{name}: pairs need a label with two clips and at least two labels")
    seen, pairs = set(), []
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
    return Table(
        {"audio1": [refs[i] for i, _, _ in pairs], "audio2": [refs[j] for _, j, _ in pairs], "label": [y for *_, y in pairs]},
        name=f"{name} pairs",
    )


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
    return RetrievalData(corpus, q_items, qrels, candidates)
