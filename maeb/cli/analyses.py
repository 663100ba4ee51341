"""The analyses of results: `maeb select` (a non-redundant task subset), `maeb compare` (two benchmarks, or two models' paired significance),
`maeb tradeoff` (acoustic against linguistic tasks) and `maeb correlate` (against an external score)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..core.errors import MaebError


def add_parser(sub) -> None:
    """The flags of `select`, `compare`, `tradeoff` and `correlate`."""
    sel = sub.add_parser("select", help="choose a non-redundant task subset (MAEB's procedure)")
    sel.add_argument("--results", nargs="+", type=Path, required=True)
    sel.add_argument("--pool", required=True, help="benchmark whose tasks form the pool, e.g. MAEB(extended)")
    sel.add_argument("--threshold", type=float, default=0.8)
    sel.add_argument("--sweep", nargs="*", type=float, help="report figures for several thresholds instead")
    sel.add_argument("--max-missing", type=int, default=10, help="drop models missing more tasks than this")
    sel.add_argument("--format", choices=["json", "md"], default="json")
    sel.add_argument("--out", type=Path)

    cmp_ = sub.add_parser(
        "compare",
        help="correlation of per-model averages on two benchmarks, or (--models) two models' paired significance per task",
    )
    cmp_.add_argument("--results", nargs="+", type=Path, required=True)
    cmp_set = cmp_.add_mutually_exclusive_group(required=True)
    cmp_set.add_argument("--benchmarks", nargs=2, metavar="NAME")
    cmp_set.add_argument(
        "--models",
        nargs=2,
        metavar="MODEL",
        help="two models (names, or their result folders) run with --per-item: a paired bootstrap and permutation test per task",
    )
    cmp_.add_argument("--tasks", nargs="+", metavar="T", help="with --models: these tasks (default: all both have)")
    cmp_.add_argument("--draws", type=int, default=10000, help="with --models: bootstrap and permutation draws (default 10000)")
    cmp_.add_argument("--seed", type=int, default=0, help="with --models: the draws' seed")
    cmp_.add_argument("--json", action="store_true", help="with --models: print the rows as JSON")

    trade = sub.add_parser("tradeoff", help="acoustic vs linguistic task groups, per model")
    trade.add_argument("--results", nargs="+", type=Path, required=True)
    trade.add_argument("--acoustic", nargs="+", default=["VoxPopuliGenderID"])
    trade.add_argument("--linguistic", nargs="+", default=["VoxPopuliLanguageID"])

    corr = sub.add_parser("correlate", help="Pearson r, Spearman rho and R^2 of per-model means against an external score")
    corr.add_argument("--results", nargs="+", type=Path, required=True, help="results folders (mteb layout) or CSV files")
    corr.add_argument("--external", type=Path, required=True, help="CSV of external scores, one row per model")
    corr_set = corr.add_mutually_exclusive_group(required=True)
    corr_set.add_argument("--tasks", nargs="+", metavar="T", help="the task set whose per-model mean is correlated")
    corr_set.add_argument(
        "--preset", choices=["maeb-llm"], help="maeb-llm: the MAEB+ classification tasks (the paper's MMAU setting)"
    )
    corr.add_argument("--model-column", default="model", help="the external CSV's model-name column (default: model)")
    corr.add_argument("--score-column", default="score", help="the external CSV's score column (default: score)")
    corr.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="bootstrap resamples (default 1000)")
    corr.add_argument("--seed", type=int, default=0, help="seed of the bootstrap resampling")
    corr.add_argument("--json", type=Path, metavar="OUT", help="also write the analysis as JSON here")
    corr.add_argument("--html", type=Path, metavar="OUT", help="also write an HTML page with a scatter plot here")


def _scores_for(results, task_names):
    """Valid scores of these tasks, one revision per model and task; what was left out goes to stderr."""
    from ..analysis.leaderboard import catalog_info, report_lines
    from ..results.read import choose_revisions, read_results
    from ..spec import catalog

    res = read_results(results, catalog_info, task_names)
    for line in report_lines(res.problems, res.notes):
        print(line, file=sys.stderr)
    registered = {m.name: m.revision for m in catalog.models().values()}
    return choose_revisions(res.scores, None, registered)


def cmd_select(args) -> int:
    """`maeb select`: a non-redundant task subset, by MAEB's procedure."""
    from ..analysis.leaderboard import task_infos
    from ..analysis.selection import score_matrix, select, sweep
    from ..spec import catalog

    pool = list(catalog.find_benchmark(args.pool).tasks)
    matrix = score_matrix(_scores_for(args.results, pool), pool, args.max_missing)
    if len(matrix.models) < 3:
        raise MaebError(f"selection needs scores of at least 3 models on {args.pool}; found {len(matrix.models)}")
    infos = task_infos(matrix.tasks)
    if args.sweep is not None:
        payload = {"pool": args.pool, "sweep": sweep(matrix, infos, args.sweep or [0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9])}
    else:
        payload = {"pool": args.pool, "n_models": len(matrix.models), **select(matrix, infos, args.threshold).as_dict()}
    if args.format == "json":
        text = json.dumps(payload, indent=2) + "\n"
    elif "sweep" in payload:
        head = "| threshold | tasks | pearson r | spearman rho | speed-up |\n|---|---|---|---|---|\n"
        text = head + "".join(
            f"| {r['threshold']} | {r['n_tasks_selected']} | {r['pearson_r']} | {r['spearman_rho']} | {r['speedup']} |\n"
            for r in payload["sweep"]
        )
    else:
        v = payload["validation"]
        text = (
            f"Selected {len(payload['selected'])} of {v['n_tasks_pool']} tasks at rho > {args.threshold} "
            f"({v['n_models']} models): Pearson r {v['pearson_r']}, Spearman rho {v['spearman_rho']}, speed-up {v['speedup']}x\n\n"
            + "\n".join(f"- {t}" for t in payload["selected"])
            + "\n\nRemoved:\n\n"
            + "\n".join(f"- {r['task']} (with {r['redundant_with']}, rho {r['rho']}, {r['reason']})" for r in payload["removed"])
            + "\n"
        )
    if args.out:
        from ..results.write import write_text_atomic

        write_text_atomic(args.out, text)
    else:
        sys.stdout.write(text)
    return 0


def _model_dir(results: list[Path], model: str) -> Path:
    """A model's result folder: the folder given, else ROOT/ORG__NAME/REVISION under one results root
    (one line naming the revisions when there are several)."""
    if Path(model).is_dir():
        return Path(model)
    found = [rev for root in results for rev in sorted((Path(root) / model.replace("/", "__")).glob("*")) if rev.is_dir()]
    if len(found) != 1:
        what = f"{len(found)} revisions ({', '.join(str(f) for f in found)}); name the folder" if found else "no folder"
        raise MaebError(f"model {model!r}: {what} under {', '.join(str(r) for r in results)}")
    return found[0]


def _compare_models(args) -> int:
    from ..analysis.paired import compare_models

    if args.draws < 100:
        raise MaebError(f"--draws {args.draws}: give at least 100")
    a, b = (_model_dir(args.results, m) for m in args.models)
    rows = compare_models(a, b, args.tasks, args.draws, args.seed)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"A = {args.models[0]}, B = {args.models[1]}: mean difference A - B over the items both scored")
    for r in rows:
        print(
            f"{r['task']} [{r['split']}] {r['metric']}: {r['items']} items, A {r['mean_a']:.4f}, B {r['mean_b']:.4f}, "
            f"A - B {r['difference']:+.4f} [95%: {r['low']:+.4f}, {r['high']:+.4f}], "
            f"p = {r['p_value']:.4g}" + (" (exact)" if r["exact"] else "")
        )
    return 0


def cmd_compare(args) -> int:
    """`maeb compare`: the correlation of per-model averages on two benchmarks, or (--models) two
    models' paired bootstrap and permutation test per task from their per-item scores."""
    if args.models:
        return _compare_models(args)
    from ..analysis.selection import compare_benchmarks
    from ..spec import catalog

    a, b = (list(catalog.find_benchmark(n).tasks) for n in args.benchmarks)
    result = compare_benchmarks(_scores_for(args.results, a + b), a, b)
    print(json.dumps({"benchmarks": args.benchmarks, **result}, indent=2))
    return 0


def cmd_tradeoff(args) -> int:
    """`maeb tradeoff`: acoustic against linguistic task groups, per model, as a markdown table."""
    from ..analysis.selection import tradeoff

    rows = tradeoff(_scores_for(args.results, args.acoustic + args.linguistic), args.acoustic, args.linguistic)
    print(f"| model | acoustic ({', '.join(args.acoustic)}) | linguistic ({', '.join(args.linguistic)}) | difference |")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {100 * r['acoustic']:.1f} | {100 * r['linguistic']:.1f} | {100 * r['difference']:+.1f} |")
    return 0


def cmd_correlate(args) -> int:
    """`maeb correlate`: per-model means on a task set against an external score (maeb.analysis.correlate)."""
    from ..analysis import correlate  # kept lazy like the rest

    return correlate.command(args)


COMMANDS = {"select": cmd_select, "compare": cmd_compare, "tradeoff": cmd_tradeoff, "correlate": cmd_correlate}
