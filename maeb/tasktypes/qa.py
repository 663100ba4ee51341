"""Open-ended audio question answering scored against reference answers, as MECAT-QA scores it.

The question is the prompt; answers are scored with BLEU, FENSE and DATE within each of MECAT's
six categories (direct perception, sound characteristics, quality assessment, environment
reasoning, inference and judgement, application context); score_qa is their mean. MECAT scores QA
groups with the DATE band of its "long" captions. A category without answers scores 0 under every
metric, as mecat scores it, and is listed in empty_groups.

References come from MECAT's files (matched by key), or from the task's own columns when
answer_column is set (any local data: question from question_column or one fixed question,
categories from category_column or one category "all")."""

from __future__ import annotations

from ..core.errors import DataError
from ..core.taskspec import TaskSpec
from ..metrics.textmetrics import DATE_DELTA
from .base import Data, Embeddings, Evaluation, Param, TaskState, TaskType
from .generative import (
    MECAT_SCORING,
    METRIC_NAMES,
    cache_dir_of,
    csv_file,
    generation_settings,
    mecat_reference_dir,
    read_mecat_references,
    sentence_metrics,
    text_metrics,
)

CATEGORIES = [
    "direct_perception",
    "sound_characteristics",
    "quality_assessment",
    "environment_reasoning",
    "inference_judgement",
    "application_context",
]


def _items(table, p, spec) -> tuple[list[int], list[str], dict[str, dict]]:
    """Rows to ask, their keys, and per key the reference record (question, answer, category)."""
    key_col = p["key_column"]
    if p["answer_column"]:
        table.require([p["answer_column"]] + [c for c in (p["question_column"], p["category_column"]) if c])
        keys = [str(k) for k in table[key_col]] if key_col in table else [ref.name for ref in table[spec.data.audio_column]]
        refs = {}
        for i, key in enumerate(keys):
            question = (
                p["question"] if p["question"] else _question(table[p["question_column"]][i]) if p["question_column"] else None
            )
            if question is None:
                raise DataError(f"{spec.name}: set protocol.question or protocol.question_column")
            category = str(table[p["category_column"]][i]) if p["category_column"] else "all"
            refs[key] = {"question": question, "answer": table[p["answer_column"]][i], "category": category}
        return list(range(len(table))), keys, refs
    table.require([key_col])
    refs = read_mecat_references(str(mecat_reference_dir(p["references"], "qa")))
    rows = [i for i, k in enumerate(table[key_col]) if str(k) in refs]
    if not rows:
        raise DataError(f"{spec.name}: none of the {len(table)} clips has a MECAT-QA reference (keys like {table[key_col][0]!r})")
    return rows, [str(table[key_col][i]) for i in rows], refs


def _question(value) -> str:
    return value.get("question", "") if isinstance(value, dict) else str(value)


class QuestionAnswering(TaskType):
    """The qa task type (the module's docstring says what it scores and how)."""

    NAME = "qa"
    MAIN_SCORE = "date_score_qa"
    PARAMS = {
        "prompt_template": Param("{question}", "prompt sent with each clip; {question} is the item's question"),
        **MECAT_SCORING,
        "question_column": Param(
            None, "column holding the question (text, or a record with a question field); unset: the reference's"
        ),
        "question": Param(None, "one question for every clip, when the data has none"),
        "answer_column": Param(None, "column of reference answers (set: references from the data, not MECAT's files)"),
        "category_column": Param(None, "with answer_column: column of each item's category (unset: one category, all)"),
        "categories": Param(
            CATEGORIES, "categories scored and averaged into score_qa (MECAT's six; with answer_column: the data's)"
        ),
    }

    def metrics(self, spec: TaskSpec) -> tuple[str, ...]:
        """The metric names a QA result holds, so a spec's main_score is checked when it is parsed (the
        dry run's time) rather than after a paid run of API calls. Where the categories come from the
        data (answer_column with category_column) they are unknown until it is read: any
        "<metric>_<category>" main score is taken."""
        p = spec.protocol
        names = [n.lower() for m in p["metrics"] for n in METRIC_NAMES.get(m, [m])]
        out = [f"{n}_score_qa" for n in names] + ["n_questions", "questions_without_reference"]
        if p["answer_column"] and p["category_column"]:
            main = spec.main_score or ""
            if any(main.startswith(n + "_") for n in names):
                out.append(main)
            return tuple(out)
        categories = ["all"] if p["answer_column"] else list(p["categories"])
        return tuple(out + [f"{n}_{c}" for n in names for c in categories] + [f"n_{c}" for c in categories])

    def needs(self, spec: TaskSpec) -> set[str]:
        """The side of the model the type uses: text generation."""
        return {"generate"}

    def evaluate(self, data: Data, split: str, emb: Embeddings, spec: TaskSpec, state: TaskState) -> Evaluation:
        """Score split `split`: answer each question and score the answers against the references with BLEU, FENSE and DATE per
        category; score_qa is the mean over categories."""
        p = spec.protocol
        table = data[split]
        audio = spec.data.audio_column
        table.require([audio])
        rows, keys, refs = _items(table, p, spec)

        def question(i: int, key: str) -> str:
            if p["question_column"] and not p["answer_column"]:
                return _question(table[p["question_column"]][i])
            return refs[key]["question"]

        prompts = [p["prompt_template"].format(question=question(i, k)) for i, k in zip(rows, keys)]
        settings = generation_settings(p)
        texts, ok = emb.generate([table[audio][i] for i in rows], prompts, settings)
        answers = {k: t for k, t, good in zip(keys, texts, ok) if good}
        wanted = {"fense", "date"} & set(p["metrics"])
        scorer = sentence_metrics(p["sentence_model"], p["error_checker"], cache_dir=cache_dir_of(emb)) if wanted else None
        categories = p["categories"] if not p["answer_column"] else sorted({refs[k]["category"] for k in keys})
        out: dict = {"n_questions": len(keys), "questions_without_reference": len(table) - len(rows)}
        per_metric: dict[str, list[float]] = {}
        empty: list[str] = []  # categories without answers score 0, as in mecat, and are listed
        for category in emb.progress(categories, "QA categories"):
            members = [k for k in keys if refs[k].get("category") == category and k in answers]
            answer_refs = [
                [refs[k]["answer"]] if isinstance(refs[k]["answer"], str) else [str(a) for a in refs[k]["answer"]]
                for k in members
            ]
            values = text_metrics([answers[k] for k in members], answer_refs, members, p["metrics"], scorer, DATE_DELTA["long"])
            out[f"n_{category}"] = len(members)
            if not members:
                empty.append(category)
            for metric, value in values.items():
                out[f"{metric.lower()}_{category}"] = value
                per_metric.setdefault(metric.lower(), []).append(value)
        for metric, scores in per_metric.items():
            out[f"{metric}_score_qa"] = sum(scores) / len(scores)
        out["empty_groups"] = empty
        out["generation"] = settings
        return Evaluation(out, files={"qa_predictions.csv": csv_file(sorted(answers.items()))})
