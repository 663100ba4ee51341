"""`maeb describe`: the spec format's reference (maeb.spec.describe): a task type, transforms, derive kinds,
or all of it as markdown."""

from __future__ import annotations

import sys

from ..core.errors import MaebError


def add_parser(sub) -> None:
    """The `describe` subcommand's flags."""
    desc = sub.add_parser("describe", help="the spec format: fields, transforms, derive kinds, task types and their parameters")
    desc.add_argument(
        "topic", nargs="?", help="a task type (maeb or mteb name), spec, transforms, derive or types; none: an overview"
    )
    desc.add_argument("--markdown", action="store_true", help="the whole reference as markdown (docs/spec-reference.md)")


def cmd_describe(args) -> int:
    """`maeb describe`: the spec format's reference (a task type, transforms, derive kinds), or all as markdown."""
    from ..spec import describe

    if args.markdown and args.topic:
        raise MaebError("describe --markdown prints the whole reference; give no topic with it")
    sys.stdout.write(describe.markdown() if args.markdown else describe.text(args.topic))
    return 0


COMMANDS = {"describe": cmd_describe}
