"""`python -m maeb.lite` (or maeb.benchmarks.lite): not a command of its own; one line saying which is."""

import sys

if __name__ == "__main__":
    # the package holds MAEB-lite's build and check; the command that runs them is `maeb lite`
    print(
        "maeb.lite is MAEB-lite's package, not a command: run `python -m maeb lite` to build and evaluate it, "
        "or `python -m maeb lite --check` to compare a run with the committed reference",
        file=sys.stderr,
    )
    raise SystemExit(2)
