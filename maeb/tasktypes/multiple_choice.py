"""Multiple-choice audio QA (AIR-Bench Foundation): the options are lettered in the prompt and the
answer is read from the reply, in one of two labelled modes (protocol.answer_parsing, recorded in
every result):

- "whole-option" (default): a letter ("B", "(B)", "B.", "B) piano", "the answer is B") or an
  option's text as whole words ("female" never matches inside "The speaker is female" as "male"
  would by substring, "6" never inside "60"); when options overlap the longest match wins ("a mid
  tone" over "mid"); a reply that names no option, or several, is unparsable and counts as wrong
  (no random fallback).
- "air-bench": AIR-Bench's official score_foundation.py rule: the reply's first character if it is
  A-D, else its second-to-last ("The answer is A."); other replies are dropped from the denominator,
  as that script drops them. (Its optional GPT re-alignment step, which guesses at random when
  nothing matches, is not reproduced.)

unparsed_answers counts the unparsable replies in both modes. Accuracy is pooled per task (a task
may draw on several source datasets), task accuracies are averaged within each category (speech,
sound, music) and the categories averaged equally: the "Average" of AIR-Bench's leaderboard.
accuracy_micro is the share of all scored items answered right."""

from __future__ import annotations

import re

from ..core.errors import SpecError
from ..core.taskspec import TaskSpec
from .base import Data, Embeddings, Evaluation, Param, TaskState, TaskType
from .generative import GENERATION_DOC, csv_file, generation_settings

LETTERS = "ABCD"
# AIR-Bench's inference prompt; an absent option is written as "None", as its script does.
PROMPT = (
    "Choose the most suitable answer from options A, B, C, and D to respond the question in next line, "
    "you may only choose A or B or C or D.\n{question}\nA. {choice_a}\nB. {choice_b}\nC. {choice_c}\nD. {choice_d}"
)
SPEECH = [
    "Speech_Grounding",
    "Spoken_Language_Identification",
    "Speaker_Gender_Recognition",
    "Speaker_Emotion_Recontion",
    "Speaker_Age_Prediction",
    "Speech_Entity_Reconition",
    "Speaker_Intent_Classification",
    "Speaker_Number_Verification",
    "Synthesized_Voice_Detection",
]
SOUND = ["Audio_Grounding", "vocal_sound_classification", "Acoustic_Scene_Classification", "Sound_AQA"]
MUSIC = [
    "Music_Instruments_Classfication",
    "Music_Genre_Recognition",
    "Music_Midi_Pitch_Analysis",
    "Music_Midi_Velocity_Analysis",
    "Music_AQA",
    "Music_Mood_Recognition",
]
PARSERS = ("whole-option", "air-bench")


def _phrase(text: str) -> str:
    """A regex for text as whole words: no word character on either side, and a number is not part
    of a longer one ("6" is not in "60" nor in "6.5")."""
    return rf"(?<![\w])(?<!\d[.,]){re.escape(text)}(?![\w])(?![.,]\d)"


def extract_letter(reply: str, options: dict[str, str]) -> str | None:
    """The option a reply names, or None when it names none or several. In order: a reply that is
    or starts with a letter ("B", "(B)", "B.", "B) piano"); explicit markers ("(B)", "answer is B",
    "option B"), which must agree; the options' texts as whole words, the longest match winning
    where matches overlap, and any other pair of options named making it ambiguous; last, a bare
    capital letter in a reply of at most five words ("I pick C"), not the article "A" ("A dog")."""
    text = reply.strip()
    letters = "".join(options)
    if not letters or not text:
        return None
    lead = re.match(rf"^\(?([{letters}])(?:[\).:]|$|\s)", text)
    if lead and (len(text) <= 2 or text[1:2] in ").:" or text.startswith("(")):
        return lead.group(1)
    marked = set(re.findall(rf"\(([{letters}])\)", text))
    marked |= set(re.findall(rf"(?i:answer|option|choice)\s*(?:is|:)?\s*\(?([{letters}])\b", text))
    if marked:
        return next(iter(marked)) if len(marked) == 1 else None
    spans = []  # (start, end, letter) of every whole-word occurrence of every option
    for letter, option in options.items():
        needle = " ".join(option.split())
        if needle:
            spans += [(m.start(), m.end(), letter) for m in re.finditer(_phrase(needle), text, re.I)]
    named = {
        letter
        for start, end, letter in spans
        if not any(s <= start and end <= e and (e - s) > (end - start) for s, e, _ in spans)  # inside a longer match
    }
    if named:
        return next(iter(named)) if len(named) == 1 else None
    if len(text.split()) <= 5:
        others = letters.replace("A", "")
        bare = set(re.findall(rf"(?<![A-Za-z])([{others}])(?![A-Za-z])", text)) if others else set()
        if "A" in letters:
            # "A" before a word is the article ("A piano"), unless the word joins letters ("A or B", "A is right")
            bare |= set(re.findall(r"(?<![A-Za-z])(A)(?![A-Za-z])(?!\s+(?!or\b|and\b|nor\b|is\b)[a-z])", text))
        return next(iter(bare)) if len(bare) == 1 else None
    return None


def air_bench_letter(reply: str) -> str | None:
    """AIR-Bench's official rule (score_foundation.py): newlines removed, the first character if it
    is A-D, else the second-to-last; None (the official script drops the item) otherwise."""
    predict = reply.strip().replace("\n", "")
    if not predict or predict == "None":
        return None
    if predict[0] in LETTERS:
        return predict[0]
    if len(predict) > 1 and predict[-2] in LETTERS:
        return predict[-2]
    return None


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else float("nan")


class MultipleChoice(TaskType):
    """The multiple choice task type (the module's docstring says what it scores and how)."""

    NAME = "multiple_choice"
    MAIN_SCORE = "accuracy"
    PARAMS = {
        "prompt_template": Param(PROMPT, "prompt with {question} and each choice column's value (AIR-Bench's prompt)"),
        "generation": Param({"max_new_tokens": 32}, GENERATION_DOC),
        "choice_columns": Param(
            ["choice_a", "choice_b", "choice_c", "choice_d"], "columns of the options, lettered A-D in order"
        ),
        "question_column": Param("question", "column holding the question"),
        "answer_column": Param("answer_gt", "column holding the right option's text"),
        "task_column": Param("task_name", "column holding the item's task (accuracy is pooled per task)"),
        "key_column": Param("uniq_id", "column naming each item in prediction files (absent: the row number)"),
        "categories": Param(
            {**dict.fromkeys(SPEECH, "speech"), **dict.fromkeys(SOUND, "sound"), **dict.fromkeys(MUSIC, "music")},
            "task name -> category (speech, sound, music; others: other), averaged equally",
        ),
        "answer_parsing": Param("whole-option", "how replies are read: " + " or ".join(PARSERS) + " (see the module docstring)"),
    }

    def needs(self, spec: TaskSpec) -> set[str]:
        """The side of the model the type uses: text generation."""
        return {"generate"}

    def evaluate(self, data: Data, split: str, emb: Embeddings, spec: TaskSpec, state: TaskState) -> Evaluation:
        """Score split `split`: ask each question with its lettered options, read the chosen option from the reply, and
        report accuracy per task and per category; `accuracy` is the mean over categories, `accuracy_micro` over items."""
        p = spec.protocol
        table = data[split]
        audio = spec.data.audio_column
        table.require([audio, p["question_column"], p["answer_column"], p["task_column"]])
        choices = {c: (table[c] if c in table else [None] * len(table)) for c in p["choice_columns"]}
        options_per_row = [
            {LETTERS[j]: str(choices[c][i]) for j, c in enumerate(p["choice_columns"]) if choices[c][i] not in (None, "")}
            for i in range(len(table))
        ]
        prompts = [
            p["prompt_template"].format(question=table[p["question_column"]][i], **{c: choices[c][i] for c in choices})
            for i in range(len(table))
        ]
        mode = p["answer_parsing"]
        if mode not in PARSERS:
            raise SpecError(f"{spec.name}: [protocol] answer_parsing {mode!r}: use {' or '.join(map(repr, PARSERS))}")
        texts, ok = emb.generate(table[audio], prompts, generation_settings(p))
        per_task: dict[str, list[float]] = {}
        unparsed, no_truth, rows = 0, 0, []
        for i in range(len(table)):
            if not ok[i]:
                continue
            options = options_per_row[i]
            truth = next((letter for letter, text in options.items() if text == str(table[p["answer_column"]][i])), None)
            no_truth += truth is None
            guess = extract_letter(texts[i], options) if mode == "whole-option" else air_bench_letter(texts[i])
            unparsed += guess is None
            rows.append((str(table[p["key_column"]][i]) if p["key_column"] in table else str(i), texts[i]))
            if guess is None and mode == "air-bench":
                continue  # the official scorer leaves it out of the task's total
            per_task.setdefault(str(table[p["task_column"]][i]), []).append(1.0 if guess is not None and guess == truth else 0.0)
        out: dict = {
            "n_items": sum(len(v) for v in per_task.values()),
            "answer_parsing": mode,
            "unparsed_answers": unparsed,
            "answers_not_among_options": no_truth,
        }
        by_category: dict[str, list[float]] = {}
        for task, values in sorted(per_task.items()):
            out[f"accuracy_{task}"] = _mean(values)
            out[f"n_{task}"] = len(values)
            by_category.setdefault(p["categories"].get(task, "other"), []).append(out[f"accuracy_{task}"])
        for category, values in sorted(by_category.items()):
            out[f"accuracy_{category}"] = _mean(values)
        out["accuracy"] = _mean(out[f"accuracy_{c}"] for c in by_category)
        out["accuracy_micro"] = _mean(v for values in per_task.values() for v in values)
        out["generation"] = generation_settings(p)
        return Evaluation(out, files={"predictions.csv": csv_file(rows)})
