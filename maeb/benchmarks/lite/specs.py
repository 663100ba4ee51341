"""MAEB-lite's task specs: what the runner runs and the evaluator check rescores, read from the
catalog in one place (both import it from here, neither from the other)."""

from __future__ import annotations

from ...spec import catalog


def lite_specs(tasks: list[str] | None = None) -> list:
    """MAEB-lite's task specs, or those of `tasks` (names of its tasks; another name is an error)."""
    from ...core.errors import MaebError

    specs = catalog.benchmark_specs(catalog.find_benchmark("MAEB-lite"))
    if tasks is None:
        return specs
    by_name = {s.name.lower(): s for s in specs}
    unknown = [t for t in tasks if t.lower() not in by_name]
    if unknown:
        raise MaebError(f"--tasks: {', '.join(unknown)} not in MAEB-lite; its tasks: {', '.join(s.name for s in specs)}")
    return [by_name[t.lower()] for t in tasks]
