"""Zero-shot classification (mteb AudioZeroshotClassification): each class name becomes a text
prompt; the predicted class is the argmax of the model's audio-text similarity; main score accuracy.

Candidate texts, in class order: `candidate_texts` if given (index i is the text of label i, for
integer labels), else `template` filled with each label (or its entry in `label_names`), over the
sorted labels of the eval split."""

from __future__ import annotations

import numpy as np

from ..errors import DataError
from ..similarity import similarity_matrix
from . import keep_valid
from .classification import label_metrics

NAME = "zeroshot"
MAIN_SCORE = "accuracy"
PARAMS = {"template": "{label}", "candidate_texts": None, "label_names": None}


def splits(spec) -> list[str]:
    return list(spec.data.eval_splits)


def needs(spec) -> set[str]:
    return {"audio", "text"}


def candidates(labels: list, p: dict) -> tuple[list, list[str]]:
    """(class values in index order, their prompt texts)."""
    if p["candidate_texts"] is not None:
        texts = list(p["candidate_texts"])
        if any(not isinstance(v, int) for v in labels):
            # string labels: the texts are given in sorted-label order
            return sorted(set(labels)), texts
        return list(range(len(texts))), texts
    names = p["label_names"] or {}
    classes = sorted(set(labels))
    return classes, [p["template"].format(label=names.get(str(c), c)) for c in classes]


def evaluate(data, split, emb, spec, state) -> dict:
    table = data[split]
    audio, label = spec.data.audio_column, spec.data.label_column
    table.require([audio, label])
    classes, texts = candidates(table[label], spec.protocol)
    index = {c: i for i, c in enumerate(classes)}
    unknown = sorted({str(v) for v in table[label] if v not in index})
    if unknown:
        raise DataError(f"{spec.name}: labels {unknown[:5]} have no candidate text ({len(texts)} texts given)")
    x, ok = emb.audio(table[audio])
    x, y = keep_valid(ok, x, np.array([index[v] for v in table[label]]))
    t = emb.text(texts)
    predictions = similarity_matrix(x, t, emb.similarity).argmax(axis=1)
    return label_metrics(y, predictions)
