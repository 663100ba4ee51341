"""Open-ended audio QA scored by an LLM judge against a reference answer (AIR-Bench Chat).

The judge sees the clip's textual description, the question and two answers and replies with two
1-10 scores. Every item is judged twice, the reference first and then the model first, so neither
position is favoured; the model's judge_score is its mean score over both orders, win_rate the share
of judgements where it strictly beats the reference. A reply without two scores is not guessed: it
is counted (unparsed_replies) and left out of the means; so is a judgement the judge could not
give (an HTTP error on that item, an empty or refused reply): judge_failed counts them, with the
first reasons in judge_failures; they are not cached, so rerunning the task asks only them.
Categories pool tasks; AIR-Bench's mixed audio is the mean of speech_and_sound and
speech_and_music; judge_score averages the reported categories (speech, sound, music, mixed)."""

from __future__ import annotations

import re
from typing import Any

from ..core.taskspec import TaskSpec
from .base import Data, Embeddings, Evaluation, Param, TaskState, TaskType
from .generative import GENERATION_DOC, csv_file, generation_settings, require_judge

# AIR-Bench's judge prompt as its scoring script sends it (scores are only comparable with it).
JUDGE_PROMPT = (
    "You are a helpful and precise assistant for checking the quality of the answer.\n"
    "[Detailed Audio Description]\n{description}\n[Question]\n{question}\n"
    "[The Start of Assistant 1s Answer]\n{answer_1}\n[The End of Assistant 1s Answer]\n"
    "[The Start of Assistant 2s Answer]\n{answer_2}\n[The End of Assistant 2s Answer]\n[System]\n"
    "We would like to request your feedback on the performance of two AI assistants in response to the user question "
    "and audio description displayed above. AI assistants are provided with detailed audio descriptions and questions.\n"
    "Please rate the helpfulness, relevance, accuracy, and comprehensiveness of their responses. "
    "Each assistant receives an overall score on a scale of 1 to 10, where a higher score indicates better overall performance. "
    "Please output a single line containing only two values indicating the scores for Assistant 1 and 2, respectively. "
    "The two scores are separated by a space."
)
CATEGORIES = {
    "speech_QA": "speech",
    "speech_dialogue_QA": "speech",
    "sound_QA": "sound",
    "sound_generation_QA": "sound",
    "music_QA": "music",
    "music_generation_analysis_QA": "music",
    "speech_and_sound_QA": "speech_and_sound",
    "speech_and_music_QA": "speech_and_music",
}
SCORES = re.compile(r"(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)")


def parse_scores(reply: str) -> tuple[float, float] | None:
    """The two scores when the reply is just two numbers of at most 10 separated by space, as
    AIR-Bench's scorer reads it (line breaks read as spaces); anything else is not guessed at."""
    match = SCORES.fullmatch(reply.strip().replace("\n", " ").strip())
    if not match:
        return None
    first, second = float(match.group(1)), float(match.group(2))
    return (first, second) if first <= 10 and second <= 10 else None


class JudgedQuestionAnswering(TaskType):
    """The judged qa task type (the module's docstring says what it scores and how)."""

    NAME = "judged_qa"
    MAIN_SCORE = "judge_score"
    SCORE_SCALE = 10.0  # judge scores run 1-10; leaderboards divide by this to put them beside 0-1 scores
    PARAMS = {
        "prompt_template": Param("{question}", "prompt sent with each clip; {question} is the item's question"),
        "generation": Param({}, GENERATION_DOC),
        "judge_prompt": Param(
            JUDGE_PROMPT, "judge prompt with {description}, {question}, {answer_1}, {answer_2} (AIR-Bench's scoring prompt)"
        ),
        "prompt_version": Param("air-bench-chat-official", "name of the judge prompt, recorded in every result"),
        "swap": Param(True, "judge each item a second time with the model's answer first"),
        "categories": Param(CATEGORIES, "task name -> category (speech, sound, music, speech_and_sound, speech_and_music)"),
        "question_column": Param("question", "column holding the question"),
        "answer_column": Param("answer_gt", "column holding the reference answer"),
        "description_column": Param("meta_info", "column holding the clip's textual description the judge sees"),
        "task_column": Param("task_name", "column holding the item's task, mapped to its category"),
        "key_column": Param("uniq_id", "column naming each item in prediction files (absent: the row number)"),
    }

    def needs(self, spec: TaskSpec) -> set[str]:
        """The sides the type uses: text generation and an LLM judge."""
        return {"generate", "judge"}

    def evaluate(self, data: Data, split: str, emb: Embeddings, spec: TaskSpec, state: TaskState) -> Evaluation:
        """Score split `split`: answer each question, have the judge compare the answer with the reference in both orders, and report
        judge_score and win_rate per category."""
        p = spec.protocol
        require_judge(emb, spec)
        table = data[split]
        audio = spec.data.audio_column
        cols = [audio, p["question_column"], p["answer_column"], p["description_column"], p["task_column"]]
        table.require(cols)
        prompts = [p["prompt_template"].format(question=q) for q in table[p["question_column"]]]
        texts, ok = emb.generate(table[audio], prompts, generation_settings(p))
        rows = [i for i in range(len(table)) if ok[i]]
        keys = [str(table[p["key_column"]][i]) if p["key_column"] in table else str(i) for i in range(len(table))]
        judge_prompts, owners, labels = [], [], []
        for i in rows:
            fields = {"description": str(table[p["description_column"]][i]), "question": str(table[p["question_column"]][i])}
            ref, hyp = str(table[p["answer_column"]][i]), texts[i]
            judge_prompts.append(p["judge_prompt"].format(**fields, answer_1=ref, answer_2=hyp))
            owners.append((i, "model_second"))
            labels.append(f"item {keys[i]} (reference first)")
            if p["swap"]:
                judge_prompts.append(p["judge_prompt"].format(**fields, answer_1=hyp, answer_2=ref))
                owners.append((i, "model_first"))
                labels.append(f"item {keys[i]} (model first)")
        replies = emb.judge.ask(
            judge_prompts, labels, progress=lambda it, n: emb.progress_iter(it, n, "judge"), context=emb.context
        )
        per_category: dict[str, dict[str, Any]] = {}  # model, wins: lists; unparsed: a count
        unparsed = 0
        for (i, order), reply in zip(owners, replies.texts):
            category = p["categories"].get(str(table[p["task_column"]][i]), str(table[p["task_column"]][i]))
            bucket = per_category.setdefault(category, {"model": [], "wins": [], "unparsed": 0})
            if reply is None:  # the judge failed on it: counted in judge_failed, not in the means
                continue
            scores = parse_scores(reply)
            if scores is None:
                unparsed += 1
                bucket["unparsed"] += 1
                continue
            model, reference = (scores[1], scores[0]) if order == "model_second" else scores
            bucket["model"].append(model)
            bucket["wins"].append(1.0 if model > reference else 0.0)
        out: dict = {"n_items": len(rows), "judgements": len(judge_prompts), "unparsed_replies": unparsed, **replies.record()}
        means = {}
        for category, bucket in sorted(per_category.items()):
            n = len(bucket["model"])
            means[category] = sum(bucket["model"]) / n if n else float("nan")
            out[f"judge_score_{category}"] = means[category]
            out[f"win_rate_{category}"] = sum(bucket["wins"]) / n if n else float("nan")
            out[f"unparsed_{category}"] = bucket["unparsed"]
        if "speech_and_sound" in means and "speech_and_music" in means:
            means["mixed"] = (means["speech_and_sound"] + means["speech_and_music"]) / 2
            out["judge_score_mixed"] = means["mixed"]
        reported = [means[c] for c in ("speech", "sound", "music", "mixed") if c in means]
        out["judge_score"] = sum(reported) / len(reported) if reported else float("nan")
        wins = [w for b in per_category.values() for w in b["wins"]]
        out["win_rate"] = sum(wins) / len(wins) if wins else float("nan")
        out["judge"] = emb.judge.describe(p["prompt_version"])
        out["generation"] = generation_settings(p)
        return Evaluation(out, files={"predictions.csv": csv_file([(keys[i], texts[i]) for i in rows])})
