"""Multiple-choice audio QA (AIR-Bench Foundation): the options are lettered in the prompt and the
letter is read from the reply. No random fallback: a reply that names no option, or several, counts
as wrong and is reported (unparsed_answers; AIR-Bench's own scorer leaves such replies out instead).

Accuracy is pooled per task (a task may draw on several source datasets), task accuracies are
averaged within each category (speech, sound, music) and the categories averaged equally: the
"Average" of AIR-Bench's leaderboard. accuracy_micro is the share of all items answered right."""

from __future__ import annotations

import re

from .generative import csv_file, generation_settings

NAME = "multiple_choice"
MAIN_SCORE = "accuracy"
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
PARAMS = {
    "prompt_template": PROMPT,
    "generation": {"max_new_tokens": 32},
    "choice_columns": ["choice_a", "choice_b", "choice_c", "choice_d"],
    "question_column": "question",
    "answer_column": "answer_gt",
    "task_column": "task_name",
    "key_column": "uniq_id",
    "categories": {**dict.fromkeys(SPEECH, "speech"), **dict.fromkeys(SOUND, "sound"), **dict.fromkeys(MUSIC, "music")},
}


def splits(spec) -> list[str]:
    return list(spec.data.eval_splits)


def needs(spec) -> set[str]:
    return {"generate"}


def extract_letter(reply: str, options: dict[str, str]) -> str | None:
    """The option a reply names, or None when it names none or several. In order: a reply that
    starts with a letter ("B", "(B)", "B.", "B) piano"); explicit markers ("(B)", "answer is B",
    "option B"); a bare capital letter in a reply of at most five words; the text of one option."""
    text = reply.strip()
    letters = "".join(options)
    if not letters:
        return None
    lead = re.match(rf"^\(?([{letters}])(?:[\).:]|$|\s)", text)
    if lead and (len(text) <= 2 or text[1:2] in ").:" or text.startswith("(")):
        return lead.group(1)
    marked = set(re.findall(rf"\(([{letters}])\)", text))
    marked |= set(re.findall(rf"(?i:answer|option|choice)\s*(?:is|:)?\s*\(?([{letters}])\b", text))
    if not marked and len(text.split()) <= 5:
        marked = set(re.findall(rf"(?<![A-Za-z])([{letters}])(?![A-Za-z])", text))
    if not marked:
        lowered = text.lower()
        marked = {letter for letter, option in options.items() if option and option.strip().lower() in lowered}
    return next(iter(marked)) if len(marked) == 1 else None


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else float("nan")


def evaluate(data, split, emb, spec, state) -> dict:
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
    texts, ok = emb.generate(table[audio], prompts, generation_settings(p))
    per_task: dict[str, list[float]] = {}
    unparsed, no_truth, rows = 0, 0, []
    for i in range(len(table)):
        if not ok[i]:
            continue
        options = options_per_row[i]
        truth = next((letter for letter, text in options.items() if text == str(table[p["answer_column"]][i])), None)
        no_truth += truth is None
        guess = extract_letter(texts[i], options)
        unparsed += guess is None
        per_task.setdefault(str(table[p["task_column"]][i]), []).append(1.0 if guess is not None and guess == truth else 0.0)
        rows.append((str(table[p["key_column"]][i]) if p["key_column"] in table else str(i), texts[i]))
    out: dict = {
        "n_items": sum(len(v) for v in per_task.values()),
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
    out["_files"] = {"predictions.csv": csv_file(rows)}
    return out
