"""Seeded subsampling procedures that must reproduce mteb's draws exactly."""

from __future__ import annotations

import itertools

import numpy as np


def iterative_stratified_subset(label_sets: list[list], n: int, seed: int = 42) -> list[int]:
    """Indices of an n-row subset that keeps pairs of labels balanced (Sechidis et al. 2011,
    second-order iterative stratification), drawn as mteb's multilabel eval subsampling draws it:
    two folds sized n and len-n, random tie-breaks from RandomState(seed); returns the n-fold, sorted."""
    total = len(label_sets)
    if n >= total:
        return list(range(total))
    vocabulary = sorted({label for labels in label_sets for label in labels})
    column = {label: j for j, label in enumerate(vocabulary)}
    rows = [sorted({column[label] for label in labels}) for labels in label_sets]
    share = np.array([n / total, 1.0 - n / total])
    rng = np.random.RandomState(seed)
    want_fold = share * total

    members: dict[tuple, list[int]] = {}
    row_combos: list[list[tuple]] = [[] for _ in range(total)]
    for r, labels in enumerate(rows):
        for combo in itertools.combinations_with_replacement(labels, 2):
            members.setdefault(combo, []).append(r)
            row_combos[r].append(combo)
    want_combo = {combo: np.array([len(m) * share[0], len(m) * share[1]]) for combo, m in members.items()}
    used = [False] * total
    folds: list[list[int]] = [[], []]

    def next_combo():
        chosen, best_size, best_support = None, None, None
        for combo, m in members.items():
            size, support = len(set(combo)), len(m)
            if support == 0:
                continue
            if chosen is None or (best_size < size and best_support > support):
                chosen, best_size, best_support = combo, size, support
        return chosen

    def pick_fold(wanted: np.ndarray) -> int:
        # ties between the folds that want this label pair most are broken at random
        candidates = np.flatnonzero(wanted == wanted.max())
        if len(candidates) == 1:
            return int(candidates[0])
        return int(rng.choice(candidates, 1)[0])

    combo = next_combo()
    while combo is not None:
        while members[combo]:
            r = members[combo].pop()
            if used[r]:
                continue
            fold = pick_fold(want_combo[combo])
            folds[fold].append(r)
            used[r] = True
            for other in row_combos[r]:
                if r in members[other]:
                    members[other].remove(r)
                want_combo[other][fold] -= 1
            want_fold[fold] -= 1
        combo = next_combo()

    rest = [r for r in range(total) if not used[r]]
    while rest:
        r = rest.pop()
        fold = rng.choice(np.flatnonzero(want_fold > 0), 1)[0]
        want_fold[fold] -= 1
        folds[fold].append(r)
    return sorted(folds[0])


def stratified_subsample(labels: list, n: int, seed: int = 42, class_label_ids: bool = False) -> list[int]:
    """Row indices (in drawn order) of an n-row subset stratified by label, drawn exactly as mteb's
    stratified_subsampling draws it. Single labels: a ClassLabel over the labels (the hub's id order
    when the column already is one, else the sorted text of the values) and datasets'
    train_test_split(test_size=n, seed, stratify_by_column), keeping the "test" part. List labels:
    second-order iterative stratification."""
    if n >= len(labels):
        return list(range(len(labels)))
    if labels and isinstance(labels[0], (list, tuple)):
        return iterative_stratified_subset([list(v) for v in labels], n, seed)
    from datasets import ClassLabel, Dataset, Features, Value

    present = {v for v in labels if v is not None}
    # relative class order is all that the split depends on
    names = [str(v) for v in sorted(present)] if class_label_ids else sorted(str(v) for v in present)
    features = Features({"row": Value("int64"), "label": ClassLabel(names=names)})
    table = Dataset.from_dict({"row": list(range(len(labels))), "label": [str(v) for v in labels]}, features=features)
    return table.train_test_split(test_size=n, seed=seed, stratify_by_column="label")["test"]["row"]
