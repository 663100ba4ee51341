"""The metrics the built-in task types compute, declared in the registry (maeb.metrics.registry; their records in maeb.metrics.records) by
the names their results use. Each is the very call the type made before the registry existed, so no
score moved; the type keeps what it does around the call (warnings silenced, float(), ties).

Each record also declares the metric's direction, range, chance level and majority baseline (closed
forms in maeb.metrics.chance; clustering's chance is drawn), and its tie-aware form where ranks are
involved; the metrics maeb only reads in results (mteb's, or computed inside an evaluator) are
declared at the end with no function, so their direction and range live here too.

Oracles: sklearn.metrics for the label, ranking and clustering scores (tests/test_metric_registry.py
compares each with sklearn's own call; the classification types' results are compared with mteb's
in tests/parity/test_e2e.py), the mecat package for BLEU (tests/test_generative.py), mteb's own
evaluators for the pair thresholds and multilabel's hamming (tests/test_parity_mteb.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn import metrics as skm

from . import chance as ch
from . import ties
from .records import builtin_metric as metric
from .records import register_builtin as register_metric
from .textmetrics import corpus_bleu

UNIT = (0.0, 1.0)
SIGNED = (-1.0, 1.0)
POSITIVE = (0.0, math.inf)  # unbounded above: distances, error rates that can pass 1
UNIFORM = "closed form: the expectation over a uniform guess among the evaluated split's classes"
MOST_FREQUENT = (
    "always the training split's most frequent class (cross-validation and zero-shot: the evaluated split's); "
    "tied most frequent classes: the mean over them"
)
LABELS = {"inputs": "labels", "range": UNIT, "loose": True, "chance_rule": UNIFORM, "majority_rule": MOST_FREQUENT}


@metric("accuracy", oracle="sklearn.metrics.accuracy_score", chance=ch.uniform_accuracy, **LABELS, tie_aware=ties.argmax_ties)
def accuracy(y_true: Any, y_pred: Any) -> float:
    """The share of predicted labels equal to the true ones."""
    return skm.accuracy_score(y_true, y_pred)


@metric("f1", oracle="sklearn.metrics.f1_score (average='macro')", chance=ch.uniform_f1, **LABELS)
def f1(y_true: Any, y_pred: Any) -> float:
    """F1 per class (or label of a multilabel matrix), averaged over classes."""
    return skm.f1_score(y_true, y_pred, average="macro")


@metric("f1_weighted", oracle="sklearn.metrics.f1_score (average='weighted')", chance=ch.uniform_f1_weighted, **LABELS)
def f1_weighted(y_true: Any, y_pred: Any) -> float:
    """F1 per class, averaged with each class weighted by its true count."""
    return skm.f1_score(y_true, y_pred, average="weighted")


@metric("precision", oracle="sklearn.metrics.precision_score (average='macro')", chance=ch.uniform_precision, **LABELS)
def precision(y_true: Any, y_pred: Any) -> float:
    """Precision per class, averaged over classes."""
    return skm.precision_score(y_true, y_pred, average="macro")


@metric(
    "precision_weighted",
    oracle="sklearn.metrics.precision_score (average='weighted')",
    chance=ch.uniform_precision_weighted,
    **LABELS,
)
def precision_weighted(y_true: Any, y_pred: Any) -> float:
    """Precision per class, weighted by each class's true count."""
    return skm.precision_score(y_true, y_pred, average="weighted")


@metric("recall", oracle="sklearn.metrics.recall_score (average='macro')", chance=ch.uniform_recall, **LABELS)
def recall(y_true: Any, y_pred: Any) -> float:
    """Recall per class, averaged over classes."""
    return skm.recall_score(y_true, y_pred, average="macro")


@metric(
    "recall_weighted", oracle="sklearn.metrics.recall_score (average='weighted')", chance=ch.uniform_recall_weighted, **LABELS
)
def recall_weighted(y_true: Any, y_pred: Any) -> float:
    """Recall per class, weighted by each class's true count."""
    return skm.recall_score(y_true, y_pred, average="weighted")


@metric(
    "ap",
    oracle="sklearn.metrics.average_precision_score (average='macro')",
    inputs="scores",
    range=UNIT,
    loose=True,
    chance=ch.random_ap,
    chance_rule="closed form: the expected AP of a uniformly random order",
    majority=lambda n, r: r / n if n else 0.0,
    majority_rule="one score for every item: sklearn scores a constant the share of positives",
    tie_aware=ties.average_precision_range,
)
def ap(y_true: Any, y_score: Any) -> float:
    """Average precision of scores against binary labels (sklearn's pos_label=1)."""
    return skm.average_precision_score(y_true, y_score, average="macro")


@metric(
    "ap_weighted",
    oracle="sklearn.metrics.average_precision_score (average='weighted')",
    inputs="scores",
    range=UNIT,
    loose=True,
    chance=ch.random_ap,
    chance_rule="closed form: the expected AP of a uniformly random order",
    majority=lambda n, r: r / n if n else 0.0,
    majority_rule="one score for every item: sklearn scores a constant the share of positives",
    tie_aware=ties.average_precision_range,
)
def ap_weighted(y_true: Any, y_score: Any) -> float:
    """Average precision with classes weighted by their true count (equal to ap for binary labels)."""
    return skm.average_precision_score(y_true, y_score, average="weighted")


@metric(
    "lrap",
    oracle="sklearn.metrics.label_ranking_average_precision_score",
    inputs="label_scores",
    range=UNIT,
    loose=True,
    chance=ch.random_lrap,
    chance_rule="closed form: each clip's labels in uniformly random order",
    majority=ch.prior_lrap,
    majority_rule="every clip scored with the training split's label frequencies, tied labels in every order (the expectation)",
    tie_aware=ch.expected_lrap,
)
def lrap(y_true: Any, y_score: Any) -> float:
    """Label ranking average precision of per-label scores against a binary label matrix."""
    return skm.label_ranking_average_precision_score(y_true, y_score)


@metric(
    "v_measure",
    oracle="sklearn.metrics.cluster.v_measure_score",
    inputs="clusters",
    range=UNIT,
    loose=True,
    chance_rule="draws: uniformly random cluster ids, as many clusters as classes, until the standard error is registry.DRAW_ERROR (stored as chance_error)",
    majority_rule="one cluster for every clip",
)
def v_measure(labels_true: Any, labels_pred: Any) -> float:
    """The harmonic mean of a clustering's homogeneity and completeness."""
    return skm.cluster.v_measure_score(labels_true, labels_pred)


@metric(
    "ami",
    oracle="sklearn.metrics.cluster.adjusted_mutual_info_score",
    inputs="clusters",
    range=SIGNED,
    loose=True,
    chance_rule="draws: uniformly random cluster ids, as many clusters as classes, until the standard error is registry.DRAW_ERROR (stored as chance_error)",
    majority_rule="one cluster for every clip",
)
def ami(labels_true: Any, labels_pred: Any) -> float:
    """Mutual information of a clustering and the labels, adjusted for chance."""
    return skm.cluster.adjusted_mutual_info_score(labels_true, labels_pred)


@metric("bleu", oracle="mecat (its BLEU scorer; tests/test_generative.py)", range=UNIT, loose=True)
def bleu(candidates: Sequence[str], references: Sequence[Sequence[str]]) -> dict[str, float]:
    """BLEU-1 to BLEU-4 of a corpus as MECAT computes them (Bleu_1 .. Bleu_4)."""
    return corpus_bleu(candidates, references)


@metric("best_threshold_accuracy", oracle="mteb's pair classification evaluator (tests/test_parity_mteb.py)", range=UNIT)
def best_threshold_accuracy(scores: np.ndarray, labels: np.ndarray, higher_similar: bool) -> float:
    """The best accuracy of a threshold on `scores` (a threshold never splits tied scores), as mteb computes it."""
    order = sorted(zip(scores.tolist(), labels.tolist()), key=lambda r: r[0], reverse=higher_similar)
    best, positives, negatives_left = 0.0, 0, int((labels == 0).sum())
    for i in range(len(order) - 1):
        score, label = order[i]
        if label == 1:
            positives += 1
        else:
            negatives_left -= 1
        if score == order[i + 1][0]:
            continue
        best = max(best, (positives + negatives_left) / len(labels))
    return best


@metric("best_threshold_f1", oracle="mteb's pair classification evaluator (tests/test_parity_mteb.py)", range=UNIT)
def best_threshold_f1(scores: np.ndarray, labels: np.ndarray, higher_similar: bool) -> tuple[float, float, float]:
    """The best F1 of a threshold on `scores` and its precision and recall (a threshold never splits tied scores)."""
    order = sorted(zip(scores.tolist(), labels.tolist()), key=lambda r: r[0], reverse=higher_similar)
    best = (0.0, 0.0, 0.0)
    correct, relevant = 0, int(labels.sum())
    for i, (score, label) in enumerate(order[:-1]):
        correct += label == 1
        if score == order[i + 1][0] or correct == 0:
            continue
        precision, recall = correct / (i + 1), correct / relevant
        f1 = 2 * precision * recall / (precision + recall)
        if f1 > best[0]:
            best = (f1, precision, recall)
    return best


@metric(
    "hamming",
    oracle="mteb's multilabel classification evaluator (tests/test_parity_mteb.py)",
    inputs="label_matrix",
    range=UNIT,
    loose=True,
)
def hamming(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Per-row intersection over union of label sets; two empty sets agree fully."""
    t, p = y_true.astype(bool), y_pred.astype(bool)
    union = (t | p).sum(axis=1)
    inter = (t & p).sum(axis=1)
    return float(np.where(union == 0, 1.0, inter / np.maximum(union, 1)).mean())


# -- rankings (retrieval, reranking): trec_eval's measures as pytrec_eval computes them ---------
RANKING = {"ndcg": "NDCG", "map": "MAP", "recall": "Recall", "precision": "P", "hit_rate": "HitRate", "mrr": "MRR"}


def _ranking(short: str, key: str, also: str = "") -> None:
    chance, expected = ch.ranking_key(key)
    names = f"({short}{also})"

    def at_k(groups: list[list[int]], ideal: list[int], k: int) -> float:
        return ties.expected_metrics(groups, ideal, [k])[f"{key}@{k}"]

    at_k.__doc__ = (
        f"{key}@k of one query's ranked documents as tie groups of gains (each group of one: the ranking's own value; "
        "larger groups: the expectation over their orders)."
    )
    register_metric(
        f"{short}_at_k",
        at_k,
        "pytrec_eval (trec_eval), as maeb.tasktypes.retrieval.query_metrics computes it (tests/test_ties.py)",
        inputs="ranking",
        range=UNIT,
        # a cut-off of 0 documents is no metric: ndcg_at_0 is no result key of this record
        pattern=rf"{names}(_at_|@)[1-9]\d*" + ("" if short in ("recall", "precision", "hit_rate") else f"|{short}"),
        chance=chance,
        chance_rule="closed form: the pool in uniformly random order (one tie group)",
        majority=expected,
        majority_rule="documents ordered by how many queries judge them relevant, equally popular ones in every order",
        tie_aware=ties.expected_metrics,
    )


for _short, _key in RANKING.items():
    _ranking(_short, _key, "|cv_recall" if _short == "hit_rate" else "")


# -- read in results only (computed by mteb, or inside an evaluator): direction and range ----------
def _read_only(name: str, oracle: str, doc: str, **facts: object) -> None:
    register_metric(name, None, oracle, doc=doc, **facts)  # type: ignore[arg-type]


MTEB = "mteb's result files (maeb does not compute it)"
for _name, _doc in (("homogeneity", "Homogeneity of a clustering"), ("completeness", "Completeness of a clustering")):
    _read_only(_name, MTEB, _doc, range=UNIT, loose=True)
for _name, _doc in (
    ("ari", "Adjusted Rand index of a clustering"),
    ("pearson", "Pearson correlation"),
    ("spearman", "Spearman rank correlation"),
    ("kendall", "Kendall rank correlation"),
    ("silhouette", "Silhouette of a clustering"),
):
    _read_only(_name, MTEB, _doc, range=SIGNED, loose=True)
_read_only("adjusted_scores", MTEB, "Chance-adjusted clustering scores", range=SIGNED, pattern=r"adjusted\w*")
_read_only(
    "nauc",
    "mteb's abstention curves (maeb.tasktypes.retrieval.nauc)",
    "Normalised area under an abstention curve",
    range=SIGNED,
    pattern=r"nauc_\w+",
)
_read_only("rouge", "caption metrics of peer packages", "ROUGE of generated text", range=UNIT, pattern=r"rouge\w*")
_read_only("meteor", "caption metrics of peer packages", "METEOR of generated text", range=UNIT, loose=True)
_read_only("spice", "caption metrics of peer packages", "SPICE of generated text", range=UNIT, loose=True)
_read_only(
    "judge_score",
    "maeb.tasktypes.judged_qa (the LLM judge)",
    "Judge score divided by the type's SCORE_SCALE",
    range=UNIT,
    loose=True,
)
_read_only("win_rate", "maeb.tasktypes.judged_qa (the LLM judge)", "Share of judged comparisons won", range=UNIT, loose=True)
for _name, _doc in (
    ("fense", "FENSE caption similarity"),
    ("date", "DATE caption score"),
    ("similarity", "DATE's similarity part"),
):
    _read_only(_name, "mecat (maeb.metrics.textmetrics.SentenceMetrics)", _doc, range=SIGNED, loose=True)
_read_only(
    "discrimination", "mecat (maeb.metrics.textmetrics.SentenceMetrics)", "DATE's discrimination part", range=UNIT, loose=True
)
SED = "sed_eval (maeb.tasktypes.event_detection)"
_read_only(
    "event_scores",
    SED,
    "Event-based F-measure, precision and recall",
    range=UNIT,
    pattern=r"event_onset(_offset)?_\w+_(fms|precision|recall)",
)
_read_only(
    "segment_scores", SED, "Segment-based F1, precision and recall", range=UNIT, pattern=r"segment_\w+_(f1|precision|recall)"
)
_read_only(
    "segment_error_rate",
    SED,
    "Segment-based error rate (substitutions, deletions, insertions)",
    higher_is_better=False,
    range=POSITIVE,
    pattern=r"segment_\w+_er",
)

# -- audio generation (maeb.audiogen's scorer groups compute them) --------------------------------
GEN = "maeb.audiogen (the MMAG paper's scorers; tests/test_audio_generation.py)"
for _name, _doc, _facts in (
    ("fd", "Frechet distance of generated to reference embeddings", {"higher_is_better": False, "range": POSITIVE}),
    ("kl", "KL divergence of reference to generated label distributions", {"higher_is_better": False, "range": POSITIVE}),
    ("is", "Inception score of the generated clips", {"range": POSITIVE}),
    ("wer", "Word error rate of the transcribed speech", {"higher_is_better": False, "range": POSITIVE}),
    ("hit_rate", "Share of clips whose transcript misses the prompt's words", {"higher_is_better": False, "range": UNIT}),
    ("wer_caps", "Word error rate of the capitalised words", {"higher_is_better": False, "range": POSITIVE}),
    ("proportion", "Share of clips flagged by the speech scorer", {"higher_is_better": False, "range": UNIT}),
    ("pq", "Aesthetics: production quality", {}),
    ("pc", "Aesthetics: production complexity", {}),
    ("ce", "Aesthetics: content enjoyment", {}),
    ("cu", "Aesthetics: content usefulness", {}),
    ("clap", "CLAP similarity of clip and prompt", {"range": SIGNED}),
    ("utmos", "UTMOS predicted speech quality", {}),
    ("spk_sim", "Speaker similarity to the voice prompt", {"range": SIGNED}),
    ("speech_f1", "Timestamp F1 of the speech events", {"range": UNIT}),
    ("sound_f1", "Timestamp F1 of the sound events", {"range": UNIT}),
    ("aaj", "AnyAudio-Judge score", {}),
):
    _read_only(_name, GEN, _doc, **_facts)
