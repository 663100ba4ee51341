"""`maeb submit RESULTS_DIR --to CLONE`: results laid out in a clone of the public results repository,
merged with its files and checked by its CI rules (maeb.results.submit)."""

from __future__ import annotations

import sys
from pathlib import Path


def add_parser(sub) -> None:
    """The `submit` subcommand's flags."""
    p = sub.add_parser(
        "submit",
        help="lay results out in a clone of the public results repository, merged and checked as its CI checks",
        description="Copy a run's results into a clone of the results repository (embeddings-benchmark/results) as a "
        "pull request there expects: merged with the files already there, checked by the repository's CI rules, "
        "and put back as they were when a rule fails. Commit, push and open the pull request yourself.",
    )
    p.add_argument("results_dir", type=Path, help="maeb's output folder (MODEL/REVISION/TASK.json)")
    p.add_argument("--to", dest="clone", type=Path, required=True, help="the clone of the results repository")


def cmd_submit(args) -> int:
    """`maeb submit`: exit 0 when everything was laid out (or was there already) and passes the
    rules; 1 when something was refused or a rule failed (each one line on stderr); 2 when a file
    could not be written (a full disk: the clone is left as it was)."""
    from ..results.submit import submit
    from .common import count

    out = submit(args.results_dir, args.clone)
    for line in out.notes:
        print(f"note: {line}", file=sys.stderr)
    for line in out.refused:
        print(f"refused: {line}", file=sys.stderr)
    for line in out.failures:
        print(f"failed: {line}", file=sys.stderr)
    if out.failures:
        print(f"{len(out.failures)} of the repository's checks failed; nothing was written", file=sys.stderr)
        return 1
    files = [p for p in out.written if p.suffix == ".json" and p.name != "model_meta.json"]
    if files:
        models = ", ".join(sorted(out.models))
        print(f"wrote {count(len(files), 'result file')} of {models} into {args.clone / 'results'}; the repository's checks pass")
        print(
            f"next: cd {args.clone} && git checkout -b my-results && git add results && git commit -m 'Add results' && git push"
        )
    else:
        print("nothing new to submit")
    return 1 if out.refused else 0


COMMANDS = {"submit": cmd_submit}
