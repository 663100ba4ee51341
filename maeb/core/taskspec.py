"""The typed task spec: DataSpec and TaskSpec, what a task's TOML file becomes once checked.

They sit on the lowest floor so that every layer may name them (a task type's `evaluate` takes a
TaskSpec); reading and checking spec files stays in maeb.spec.taskspec, the catalog in
maeb.spec.catalog. The type name a result records (TaskSpec.mteb_type) is a field the parser fills
from the task types' registry, which sits above this floor, so nothing here depends on what has been
imported."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import SpecError


@dataclass(frozen=True)
class DataSpec:
    """Where a task's data comes from (a hub repository, a local folder or file) and how to read it: subsets, splits and columns."""

    source: str
    path: str
    revision: str | None = None
    base: str = "."  # the spec file's folder: relative paths start there
    subsets: list[str] = field(default_factory=lambda: ["default"])
    eval_splits: list[str] = field(default_factory=lambda: ["test"])
    train_split: str = "train"
    audio_columns: list[str] = field(default_factory=lambda: ["audio"])
    label_column: str = "label"
    text_column: str | None = None
    split_by: dict | None = None
    label_separator: str | None = None
    layout: str = "table"  # "table" or "retrieval" (corpus / queries / qrels / top_ranked configs)
    config: str | None = None  # hub config to read when it is not the subset's name
    subset_column: str | None = None  # subsets are this column's values, rows of one config
    split_names: dict[str, str] = field(default_factory=dict)  # task split -> split in the repo
    meta_file: str | None = None  # metafolder / hub-files: the JSON list of rows
    audio_template: str = "{audio}"  # metafolder / hub-files: audio path from a row's fields
    decode_rate: int | None = None  # decode at this rate first (mteb casts some datasets' Audio to it)

    @property
    def audio_column(self) -> str:
        """The first audio column (most task types use one)."""
        return self.audio_columns[0]

    def location(self, variables: dict[str, str] | None = None) -> str:
        """The folder or hub id to read, its variables expanded now: the run's own (MAEB_LITE_DIR,
        see RunContext.variables), then the environment's."""
        local = self.source in ("audiofolder", "metafolder")
        return _expand(self.path, Path(self.base), local=local, variables=variables) if "$" in self.path else self.path


@dataclass(frozen=True)
class TaskSpec:
    """A task as declared by its TOML spec: name, type, data, protocol parameters, main score and the metadata the leaderboard
    groups by."""

    name: str
    type: str
    data: DataSpec
    description: str = ""
    reference: str = ""
    main_score: str | None = None
    category: str | None = None
    domains: list[str] = field(default_factory=list)
    languages: list[str] | dict[str, list[str]] = field(default_factory=list)
    license: str | None = None
    notes: str = ""
    dataset_revision: str | None = None
    aliases: list[str] = field(default_factory=list)
    transforms: list[dict] = field(default_factory=list)
    derive: dict = field(default_factory=dict)
    protocol: dict = field(default_factory=dict)
    modalities: list[str] = field(default_factory=lambda: ["audio"])
    date: Any = None
    superseded_by: str | None = None
    family: str | None = None  # tasks built from the same source data share a family
    benchmarks: list[str] = field(default_factory=list)  # informational; the lists live in benchmarks.toml
    stats: dict = field(default_factory=dict)  # split -> clips, hours, max_seconds, classes (for dry runs)
    source_file: str = ""
    # the task's type under mteb's name (e.g. "AudioClassification"), as result files record it: the
    # parser (maeb.spec.taskspec) fills it from the task types' registry; unset, the type as written
    mteb_type: str = ""

    def __post_init__(self) -> None:
        if not self.mteb_type:
            object.__setattr__(self, "mteb_type", self.type)

    @property
    def revision(self) -> str:
        """What result files record as dataset_revision."""
        return self.dataset_revision or self.data.revision or "local"

    def languages_for(self, subset: str) -> list[str]:
        """The languages of `subset` (a spec may give one list or one per subset)."""
        if isinstance(self.languages, dict):
            return list(self.languages.get(subset, []))
        return list(self.languages)


def _expand(path: str, base: Path, local: bool, variables: dict[str, str] | None = None) -> str:
    """Folders are relative to the spec file; a hub id stays as written unless such a folder exists."""
    if variables is None:
        from .context import default_context

        variables = default_context().variables()
    for name, value in variables.items():
        path = path.replace("${" + name + "}", value)
    expanded = os.path.expandvars(os.path.expanduser(path))
    if "$" in expanded:
        raise SpecError(f"data.path {path!r}: environment variable is not set")
    candidate = Path(expanded) if Path(expanded).is_absolute() else base / expanded
    if local or candidate.is_dir():
        return str(candidate.resolve())
    return expanded
