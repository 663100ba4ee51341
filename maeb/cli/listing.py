"""`maeb list`: the registered models, tasks, benchmarks and reference protocols, as lines or JSON."""

from __future__ import annotations

import json
import sys
from typing import Any

from .common import count


def add_parser(sub) -> None:
    """The `list` subcommand's flags."""
    lst = sub.add_parser("list", help="list models, tasks or benchmarks")
    lst.add_argument("what", choices=["models", "tasks", "benchmarks", "protocols"])
    lst.add_argument("--benchmark", help="only the tasks of this benchmark")
    lst.add_argument("--json", action="store_true")
    lst.add_argument(
        "--published",
        action="store_true",
        help="models: only those with published MAEB results, and how many of them can run here",
    )


def _list_protocols(as_json: bool) -> int:
    """The reference protocols and each family's settings, printed from maeb.encoders.protocols itself."""
    from ..encoders.protocols import DEFAULT_PROTOCOL, PROTOCOLS

    if as_json:
        rows = [
            {**p.describe(), "default": p.name == DEFAULT_PROTOCOL, "families": p.families, "notes": list(p.notes)}
            for p in PROTOCOLS.values()
        ]
        print(json.dumps(rows, indent=2))
        return 0
    for p in PROTOCOLS.values():
        print(f"{p.name}{' (default)' if p.name == DEFAULT_PROTOCOL else ''}: {p.reference}")
        probe = f"; probe {p.probe}, vectors of {p.embeds_as}" if p.probe != "mteb" else ""
        probe += (
            f"; ranks {p.ranks} (tie tolerance {p.tie_tolerance:g}), vectors of {p.embeds_as}" if p.ranks != "first-found" else ""
        )
        print(f"  resampler {p.resampler}; text documents {p.text_documents}{probe}")
        for family, table in p.families.items():
            for arch in table:
                merged = p.family_rules(family, None if arch == "*" else arch)
                label = family if arch == "*" else f"{family} [{arch}]"
                print(f"  {label:32} " + ", ".join(f"{k}={v}" for k, v in merged.items()))
        for note in p.notes:
            print(f"  note: {note}")
    return 0


def cmd_list(args) -> int:
    """`maeb list`: models, benchmarks, tasks or protocols, as lines or JSON."""
    from ..spec import catalog

    if args.what == "protocols":
        return _list_protocols(args.json)
    rows: list[dict[str, Any]]  # one JSON object per model, benchmark or task
    if args.what == "models":
        from ..encoders import runnable_problems

        rows = [
            {
                "name": m.name,
                "aliases": list(m.aliases),
                "family": m.family,
                "revision": m.revision,
                "n_parameters": m.n_parameters,
                "embed_dim": m.embed_dim,
                "modalities": list(m.modalities),
                "license": m.license,
                "published": m.published,
                "runnable": not problems,
                "not_runnable_because": problems,
            }
            for m in catalog.models().values()
            if m.published or not args.published
            for problems in [runnable_problems(m)]
        ]
    elif args.what == "benchmarks":
        rows = []
        for b in catalog.benchmarks().values():
            counts: dict[str, int] = {}  # (also the task list's, below)
            for spec in catalog.benchmark_specs(b):
                counts[spec.mteb_type] = counts.get(spec.mteb_type, 0) + 1
            rows.append({"name": b.name, "aliases": list(b.aliases), "n_tasks": len(b.tasks), "types": counts})
    else:
        specs = (
            catalog.benchmark_specs(catalog.find_benchmark(args.benchmark))
            if args.benchmark
            else [catalog.find_task(n) for n in catalog.task_names()]
        )
        rows = [
            {
                "name": s.name,
                "type": s.mteb_type,
                "category": s.category,
                "main_score": s.main_score,
                "domains": s.domains,
                "subsets": len(s.data.subsets),
                "source": s.data.path,
            }
            for s in specs
        ]
    if args.json:
        print(json.dumps(rows, indent=2))
        if args.what == "models" and args.published:
            print(_published_summary(rows), file=sys.stderr)
        return 0
    if args.what == "models":
        for r in rows:
            alias = f" ({', '.join(r['aliases'])})" if r["aliases"] else ""
            # why not, as `run` says it: the missing package and what installs it
            why = "" if r["runnable"] else ", not runnable here: " + "; ".join(r["not_runnable_because"])
            marks = (", published" if r["published"] else "") + why
            print(f"{r['name']}{alias}  [{r['family']}, {'+'.join(r['modalities'])}, dim {r['embed_dim']}{marks}]")
        if args.published:
            print(_published_summary(rows))
    elif args.what == "benchmarks":
        for r in rows:
            types = ", ".join(f"{n} {t}" for t, n in sorted(r["types"].items()))
            print(f"{r['name']}: {count(r['n_tasks'], 'task')} ({types})")
    else:
        counts = {}
        for r in rows:
            counts[r["type"]] = counts.get(r["type"], 0) + 1
            print(f"{r['name']}  [{r['type']}, {r['category']}, {r['main_score']}]")
        print(f"{count(len(rows), 'task')}: " + ", ".join(f"{n} {t}" for t, n in sorted(counts.items())))
    return 0


def _published_summary(rows) -> str:
    runnable = sum(r["runnable"] for r in rows)
    return (
        f"{count(len(rows), 'model')} with published MAEB results; {runnable} runnable here (their packages are installed; "
        "weights come from the hub, or a local copy given as --option path=...)"
    )


COMMANDS = {"list": cmd_list}
