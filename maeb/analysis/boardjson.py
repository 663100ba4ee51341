"""The leaderboard's JSON record: what `maeb leaderboard --format json` writes and the html page
embeds for its script."""

from __future__ import annotations

import datetime as _dt
import math

from .. import __version__
from .leaderboard import Board
from .notes import any_fragile, flat_tasks, num


def to_json(board: Board) -> dict:
    """The leaderboard's JSON results file: tasks, per-model ranks, means and scores (6 places), the
    uncertainty where computed; `generated` is the time of writing in UTC. A task's chance and majority
    levels (None where its results record none), why it separates no models (None where it does) and,
    where they record one, each model's label-shuffled control per task (the model's `shuffled`: a
    control belongs to a model's run, never to the task). Where any cell is fragile (maeb.stability), each
    model's `fragile` says per task whether its score is; absent, none is."""
    from .baselines import board_baselines, board_chance_errors
    from .cards import shuffled_controls

    base, shuffled = board_baselines(board), shuffled_controls(board)
    errors = board_chance_errors(board)
    flat = flat_tasks(board, base)
    fragile = any_fragile(board)
    return {
        "benchmark": board.benchmark,
        "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "maeb_version": __version__,
        "tasks": [
            {
                "name": t.name,
                "type": t.type,
                "category": t.category,
                "group": t.group,
                "domains": list(t.domains),
                "languages": list(t.languages),
                "family": t.family,
                "main_score": t.main_score,
                "chance": num(base[t.name][0]) if t.name in base else None,
                "majority": num(base[t.name][1]) if t.name in base else None,
                # how chance is known: "closed form" (error 0) or "draws" (error: the mean's standard error;
                # None where an older result did not store it)
                "chance_rule": errors[t.name][0] if t.name in errors else None,
                "chance_error": num(errors[t.name][1]) if t.name in errors and math.isfinite(errors[t.name][1]) else None,
                "not_separating": flat.get(t.name),
            }
            for t in board.tasks
        ],
        "types": board.types,
        "domains": board.domains,
        "missing_tasks": board.missing_tasks,
        "task_filter": board.task_filter,
        "borda_rule": board.borda,  # the rule that ranked the models (maeb.analysis.leaderboard.BORDA_RULES)
        "models": [
            {
                "model": r.model,
                "revisions": r.revisions,
                "rank_borda": r.rank,
                "borda_points": round(r.points, 6),
                "mean_task": None if r.mean_task is None else num(r.mean_task),
                "mean_tasktype": None if r.mean_tasktype is None else num(r.mean_tasktype),
                "n_tasks": r.n_tasks,
                "types": {k: (None if v is None else num(v)) for k, v in r.types.items()},
                "groups": {k: (None if v is None else num(v)) for k, v in r.groups.items()},
                "domains": {k: (None if v is None else num(v)) for k, v in r.domains.items()},
                "scores": {k: (None if v is None else num(v)) for k, v in r.tasks.items()},
                "train_eval_shared_clips": dict(r.leaks),
                "tie_dependent": list(r.tie_dependent),
                **({"fragile": {t: t in r.fragile for t in r.tasks}} if fragile else {}),  # only where a cell is
                **shuffled_of(shuffled, r.model),  # only where its runs recorded the control
            }
            for r in board.rows
        ],
        **({"uncertainty": board.uncertainty.as_dict()} if board.uncertainty is not None else {}),
    }


def shuffled_of(shuffled: dict[tuple[str, str], float], model: str) -> dict:
    """A model's `shuffled` entry for the JSON file: task -> its control, or nothing where it recorded none."""
    mine = {t: num(v) for (m, t), v in shuffled.items() if m == model}
    return {"shuffled": mine} if mine else {}
