"""Zero-shot classification (mteb AudioZeroshotClassification): each class name becomes a text
prompt; the predicted class is the argmax of the model's audio-text similarity; main score accuracy.

Candidate texts, in class order: `candidate_texts` if given (index i is the text of label i, for
integer labels), else `template` filled with each label (or its entry in `label_names`), over the
sorted labels of the eval split."""

from __future__ import annotations

import numpy as np

from ..core.errors import DataError
from ..core.taskspec import TaskSpec
from ..data.sources import Table
from ..metrics import perclass, ties
from ..metrics.registry import tie_aware_of
from ..metrics.similarity import similarity_matrix
from .base import Data, Embeddings, Evaluation, Param, TaskState, TaskType, keep_valid
from .labels import binary_ap, label_metric_names, label_metrics


def candidates(labels: list, p: dict) -> tuple[list, list[str]]:
    """(class values in index order, their prompt texts). With candidate_texts, integer labels are
    indices into them and string labels must equal one of them (mteb's rule)."""
    if p["candidate_texts"] is not None:
        texts = list(p["candidate_texts"])
        if labels and isinstance(labels[0], str):
            return texts, texts
        return list(range(len(texts))), texts
    names = p["label_names"] or {}
    classes = sorted(set(labels))
    return classes, [p["template"].format(label=names.get(str(c), c)) for c in classes]


def _ties_record(refs, ok, x, probs, split_ties: dict, relative: float, main_score: str, expected: bool) -> dict:
    """The split's ties record: clips sharing a vector, the share of clips whose best class ties
    (top 1) or whose class scores tie anywhere, and, for accuracy, its range over tie orders."""
    kept = [r for r, k in zip(refs, ok) if k]
    tied_any = np.mean(
        [max(ties.group_sizes(sorted(row, reverse=True), ties.tolerance(row, relative))) > 1 for row in probs.tolist()]
    )
    main_range = (split_ties["low"], split_ties["high"]) if main_score == "accuracy" else None
    return ties.record(
        ties.distinct_clips(kept, x), len(probs), main_range, relative, split_ties["tied_share"], float(tied_any), 1, expected
    )


class ZeroshotClassification(TaskType[Table]):
    """The zeroshot task type (the module's docstring says what it scores and how)."""

    NAME = "zeroshot"
    LABELLED = True
    MAIN_SCORE = "accuracy"
    PARAMS = {
        "template": Param("{label}", "prompt of each class; {label} is the class name"),
        "candidate_texts": Param(None, "explicit prompt per class, in class order", kind=list, items=str),
        "label_names": Param(None, "label value -> class name used in the template", kind=dict),
    }

    def metrics(self, spec: TaskSpec) -> tuple[str, ...]:
        """The metric names a zero-shot result holds."""
        return label_metric_names()

    def needs(self, spec: TaskSpec) -> set[str]:
        """The sides of the model the type uses: audio and text."""
        return {"audio", "text"}

    def evaluate(self, data: Data, split: str, emb: Embeddings, spec: TaskSpec, state: TaskState) -> Evaluation:
        """Score split `split`: embed the clips and the class texts and predict each clip's class as the most similar text."""
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
        probs = similarity_matrix(x, t, emb.similarity)
        scores = label_metrics(y, probs.argmax(axis=1))
        block = perclass.single_label(y, probs.argmax(axis=1), list(range(len(classes))))
        scores["per_class"] = perclass.mean_blocks([{**block, "labels": [perclass.plain(c) for c in classes]}])
        if len(np.unique(y)) == 2:  # mteb scores binary tasks by the similarity to the second class
            scores["ap"], scores["ap_weighted"] = (float(v) for v in binary_ap(y, probs[:, 1]))
        expected, relative = ties.protocol_ties(getattr(emb, "protocol", None))
        split_ties = tie_aware_of("accuracy")(probs, y, relative)
        if expected and split_ties["tied_share"] > 0:  # a tied argmax counts 1/|tied| (where none ties: sklearn's accuracy)
            scores["accuracy"] = split_ties["expected"]
        return Evaluation(
            scores,
            ties=_ties_record(table[audio], ok, x, probs, split_ties, relative, spec.main_score or self.MAIN_SCORE, expected),
        )
