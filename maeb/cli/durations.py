"""`maeb durations`: score against clip duration (maeb.analysis.durations), from results run with
--duration-buckets."""

from __future__ import annotations


def add_parser(sub) -> None:
    """The `durations` subcommand's flags, defined beside what they run (maeb.analysis.durations)."""
    from ..analysis import durations

    dur = sub.add_parser("durations", help="score against clip duration, from results run with --duration-buckets")
    durations.add_arguments(dur)


def cmd_durations(args) -> int:
    """`maeb durations`: the score of each duration bucket, per model and task."""
    from ..analysis import durations  # kept lazy like the rest

    return durations.command(args)


COMMANDS = {"durations": cmd_durations}
