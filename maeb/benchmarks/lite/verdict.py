"""`lite --check`'s verdict in stages, each judged on its own evidence, so that it holds on CPUs
no reference run used:

1. inputs: the run's clips are the reference's (their content keys, as each result's fingerprints
   record them): other bytes mean other synthesizers, not another CPU.
2. encoders: this machine's vectors against the reference's vectors (maeb.benchmarks.lite.vectors),
   per model, within the tolerance its family declares (rounding is 1e-7 to a few 1e-6; a changed
   encoder is far more); a cascade's clips with another transcript counted against its allowance.
3. evaluators: the reference's vectors scored on this machine give the reference's scores
   (maeb.benchmarks.lite.evaluators), within the largest of the evaluator spread the reference
   measured under every evaluator set-up its CPU runs, the cell's rounding band (an evaluator's own
   rounding on another CPU is rounding too) and one item's share (verdict.evaluator_allowance).
4. scores: this machine's own scores beside the reference's, with their move and each cell's
   sensitivity (the band that rounding-level noise in the vectors gives it, from the reference's
   replays; fragile where that exceeds one item's share). Once the vectors are within tolerance and
   the evaluators agree, a move is what the measured vector difference does to the score: it is
   reported, not failed.

Exit 1 only when a stage of 1-3 fails (or a cell is missing or unreadable); the line names the
stage, by how much, and what to send in a bug report."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import MaebError
from ...run.numeric_env import summary as env_summary
from . import vectors as vectors_file
from .check import DEFAULT_TOLERANCE, MARGIN, Cell, _band_problem, _main, _results, compare, metric_of, stability_of

STAGES = ("inputs", "encoders", "evaluators")


@dataclass
class EvaluatorCell:
    """One cell's reference score against the same vectors scored here."""

    model: str
    task: str
    reference: float
    here: float
    allowed: float
    source: str

    @property
    def gap(self) -> float:
        """|here - reference|."""
        return abs(self.here - self.reference)

    @property
    def agrees(self) -> bool:
        """Within the cell's evaluator allowance."""
        return self.gap <= self.allowed + DEFAULT_TOLERANCE


@dataclass
class Verdict:
    """The staged check: what failed, by stage, and the reports of every stage."""

    cells: list[Cell]
    failures: dict[str, list[str]] = field(default_factory=lambda: {s: [] for s in STAGES})
    encoders: list[vectors_file.EncoderVerdict] = field(default_factory=list)
    evaluators: list[EvaluatorCell] = field(default_factory=list)
    other: list[str] = field(default_factory=list)  # cells missing or unreadable

    @property
    def passed(self) -> bool:
        """No stage failed and no cell is missing."""
        return not self.other and not any(self.failures.values())

    @property
    def failed_stage(self) -> str | None:
        """The first stage that failed (None: none)."""
        return next((s for s in STAGES if self.failures[s]), None)


def _fingerprint(data: dict, what: str):
    return (((data.get("maeb") or {}).get("fingerprints")) or {}).get(what)


def evaluator_band_problem(reference: dict, bands: dict | None) -> str | None:
    """What makes a cell's evaluator allowance untrustworthy, or None: the reference's evaluator
    spread, stability band or item share not a finite number of at least 0 or wider than the
    metric's range (a spread of 1e9 would pass every score; NaN would allow nan), by the rule the
    leaderboard sets such bands aside by (maeb.results.read.check_band)."""
    from ...results.read import check_band

    if bands is not None and not isinstance(bands, dict):
        return f"the reference's evaluator record is {type(bands).__name__}, not a record"
    if bands and "spread" in bands:
        problem = check_band(bands["spread"], metric_of(reference), "evaluator spread")
        if problem:
            return f"the reference vectors' {problem}"
    problem = _band_problem(reference)
    return f"the reference's {problem}" if problem else None


def evaluator_allowance(reference: dict, bands: dict | None) -> tuple[float, str]:
    """How far the reference's vectors scored here may move a cell's score, the largest of: MARGIN
    times the spread the reference measured across evaluator set-ups (OpenBLAS kernels, torch's
    instruction sets); MARGIN times the cell's rounding band (another CPU's evaluator rounds
    otherwise, and rounding-level noise moves the cell by that much: a fragile cell's move); one
    item's share (an unmeasured kernel flipping one clip, query or pair, as rounding does in a
    cell that is not fragile). Check evaluator_band_problem first: values it refuses count as 0."""
    if evaluator_band_problem(reference, bands):
        return 0.0, "no trusted band (the reference's is refused)"
    spread = float((bands or {}).get("spread", 0.0))
    record = stability_of(reference)
    band = float(record["band"]) if isinstance(record.get("band"), (int, float)) else 0.0
    quantum = float(record["quantum"]) if isinstance(record.get("quantum"), (int, float)) else 0.0
    kernels = (bands or {}).get("kernels")
    setups = ", ".join(sorted(kernels)) if isinstance(kernels, dict) else ""
    return max(
        (MARGIN * spread, f"{MARGIN:g} x the spread over the evaluator set-ups {setups}"),
        (MARGIN * band, f"{MARGIN:g} x its rounding band" + (" (fragile)" if record.get("fragile") else "")),
        (quantum, "one item's share"),
        (0.0, "no set-up moved it"),
    )


def check(
    reference_dir: Path,
    run_dir: Path,
    lite_dir: Path,
    tolerance: float = DEFAULT_TOLERANCE,
    models: list[str] | None = None,
    tasks: list[str] | None = None,
    evaluate=None,
) -> Verdict:
    """The staged verdict of a run against a reference (models/tasks: only those cells).
    evaluate(reference_dir, lite_dir, models, tasks) scores the reference's vectors here
    (maeb.benchmarks.lite.evaluators.score unless given)."""
    from .evaluators import main_score
    from .evaluators import score as score_reference

    cells = compare(reference_dir, run_dir, tolerance, models, tasks)
    verdict = Verdict(cells)
    reference, run = _results(reference_dir), _results(run_dir)
    # 1. inputs
    for cell in cells:
        key = (cell.model, cell.task)
        a, b = reference.get(key), run.get(key)
        if a is None or b is None:
            verdict.other.append(f"{cell.model} / {cell.task}: {cell.cause}")
            continue
        if _band_problem(a):  # (compare named it in the cell's cause; a band refused is a failed cell, not a pass)
            verdict.other.append(f"{cell.model} / {cell.task}: {cell.cause}")
            continue
        if _fingerprint(a, "inputs") != _fingerprint(b, "inputs"):
            verdict.failures["inputs"].append(
                f"{cell.model} / {cell.task}: the clips differ from the reference's (other bytes: the synthesizers' versions?)"
            )
    # 2. encoders
    ran = sorted({c.model for c in cells})
    references: dict[str, vectors_file.Vectors] = {}  # the reference's vectors of each model, read once
    for model in ran:
        ref_path, run_path = vectors_file.file_of(reference_dir, model), vectors_file.file_of(run_dir, model)
        if not ref_path.is_file():
            verdict.failures["encoders"].append(
                f"{model}: the reference holds no vectors ({ref_path}); regenerate it (make regen-lite)"
            )
            continue
        try:  # an unreadable file fails its model's encoder stage in one line; the other models are still checked
            ref_vectors = vectors_file.read(
                ref_path, "restore it (git checkout results/maeb-lite) or regenerate it (make regen-lite)"
            )
        except MaebError as exc:
            verdict.failures["encoders"].append(f"{model}: {exc}")
            continue
        references[model] = ref_vectors  # (the evaluator stage scores them even when the run's are absent)
        if not run_path.is_file():
            verdict.failures["encoders"].append(f"{model}: the run wrote no vectors ({run_path}); rerun `maeb lite`")
            continue
        try:
            run_vectors = vectors_file.read(run_path, "rerun `maeb lite`")
        except MaebError as exc:
            verdict.failures["encoders"].append(f"{model}: {exc}")
            continue
        family = ref_vectors.meta.get("family", "")
        found = vectors_file.compare(ref_vectors, run_vectors, model, family)
        verdict.encoders.append(found)
        if found.problem:
            verdict.failures["encoders"].append(f"{model} ({family}): {found.problem}")
    # 3. evaluators: the reference's own vectors, scored here
    with_vectors = sorted(references)
    if with_vectors:
        scored = (evaluate or score_reference)(reference_dir, lite_dir, with_vectors, tasks)
        bands: dict[str, dict | None] = {}
        for m in with_vectors:
            record = references[m].meta.get("evaluators") or {}
            if not isinstance(record, dict):
                verdict.failures["evaluators"].append(
                    f"{m}: the reference vectors' evaluator bands are a {type(record).__name__}, not a record by task: "
                    "restore it (the committed reference: git checkout results/maeb-lite)"
                )
                record = None
            bands[m] = record
        for (model, task), scores in sorted(scored.items()):
            ref, by_task = reference.get((model, task)), bands.get(model)
            if ref is None or by_task is None:  # (bands that are not a record failed above)
                continue
            problem = evaluator_band_problem(ref, by_task.get(task))
            if problem:
                verdict.failures["evaluators"].append(
                    f"{model} / {task}: {problem}: restore it (the committed reference: git checkout results/maeb-lite)"
                )
                continue
            allowed, source = evaluator_allowance(ref, by_task.get(task))
            scored_cell = EvaluatorCell(model, task, _main(ref) or 0.0, main_score(scores), allowed, source)
            verdict.evaluators.append(scored_cell)
            if not scored_cell.agrees:
                verdict.failures["evaluators"].append(
                    f"{model} / {task}: the reference's vectors score {scored_cell.here:.6f} here, "
                    f"{scored_cell.reference:.6f} in the reference (moved {scored_cell.gap:.4g}; allowed "
                    f"{scored_cell.allowed:.4g}: {source})"
                )
    return verdict


def _items(move: float, quantum) -> str:
    if not isinstance(quantum, (int, float)) or not quantum > 0:
        return ""
    return f" = {move / quantum:.1f} items"


def _sensitivity(reference: dict) -> str:
    record = stability_of(reference)
    band = record.get("band")
    if not isinstance(band, (int, float)) or not math.isfinite(band):
        return "its sensitivity is not measured"
    samples = record.get("refits") or record.get("replays")
    fragile = "fragile: " if record.get("fragile") else ""
    return f"{fragile}rounding-level noise moves it by ±{band:.4f} ({samples} replay samples at eps {_eps(record)})"


def _eps(record: dict) -> str:
    eps = record.get("eps")
    return " / ".join(f"{k} {v}" for k, v in eps.items()) if isinstance(eps, dict) else str(eps)


def report(verdict: Verdict, reference_dir: Path, run_dir: Path) -> str:
    """The check's text: one headline per stage, the encoders' measurements, every moved score with
    its sensitivity, and for a failure the stage, the amount and what to send in a bug report."""
    reference, run = _results(reference_dir), _results(run_dir)
    lines = []
    f = verdict.failures
    n_cells = len(verdict.cells)
    lines.append(
        f"MAEB-lite check, stage 1 (inputs): {n_cells - len(f['inputs']) - len(verdict.other)} of {n_cells} cells from the reference's clips"
    )
    lines.append(
        f"MAEB-lite check, stage 2 (encoders): {len(verdict.encoders) - len(f['encoders'])} of {len(verdict.encoders)} models' "
        "vectors within their family's tolerance of the reference vectors"
    )
    for enc in verdict.encoders:
        lines.append(f"  {enc.model} ({enc.family}): {enc.summary()}" + (f"; BEYOND: {enc.problem}" if enc.problem else ""))
    exact = sum(1 for e in verdict.evaluators if e.gap <= DEFAULT_TOLERANCE)
    lines.append(
        f"MAEB-lite check, stage 3 (evaluators): {len(verdict.evaluators) - len(f['evaluators'])} of {len(verdict.evaluators)} "
        f"cells give the reference's score from the reference's vectors here ({exact} to the last digit)"
    )
    for e in verdict.evaluators:
        if e.gap > DEFAULT_TOLERANCE and e.agrees:
            lines.append(f"  {e.model} / {e.task}: {e.reference:.4f} -> {e.here:.4f}, within {e.allowed:.4f} ({e.source})")
    moved = [c for c in verdict.cells if c.reference is not None and c.run is not None and c.main_gap > DEFAULT_TOLERANCE]
    fragile = sum(1 for c in verdict.cells if stability_of(reference.get((c.model, c.task)) or {}).get("fragile"))
    lines.append(
        f"MAEB-lite check, stage 4 (this machine's scores): {len(verdict.cells) - len(moved)} of {len(verdict.cells)} "
        f"equal the reference's; {len(moved)} moved ({fragile} cells are fragile: rounding moves them by more than one item)"
    )
    judged_ok = {enc.model for enc in verdict.encoders if not enc.problem}
    for c in moved:
        before, after = c.reference or 0.0, c.run or 0.0  # (both present: moved holds only such cells)
        ref = reference.get((c.model, c.task)) or {}
        quantum = stability_of(ref).get("quantum")
        why = (
            "explained by the vectors' rounding (within tolerance), reported, not failed"
            if c.model in judged_ok
            else "its model's vectors are beyond tolerance (stage 2)"
        )
        lines.append(
            f"  {c.model} / {c.task}: {before:.4f} -> {after:.4f} ({after - before:+.4f}{_items(c.main_gap, quantum)}); "
            f"{_sensitivity(ref)}; {why}"
        )
    for other in verdict.other:
        lines.append(f"  {other}")
    stage = verdict.failed_stage
    if verdict.passed:
        lines.append("MAEB-lite check: passed (inputs, encoders and evaluators agree with the reference)")
    else:
        lines.append(
            f"MAEB-lite check: FAILED at the {stage or 'results'} stage"
            if stage
            else "MAEB-lite check: FAILED: cells missing or unreadable"
        )
        for stage_name in STAGES:
            for line in f[stage_name]:
                lines.append(f"  [{stage_name}] {line}")
        env = next((((d.get("maeb") or {}).get("numeric_env")) for d in run.values()), None)
        lines.append(
            f"  to report it: the lines above, {Path(run_dir) / vectors_file.FOLDER}/ (this machine's vectors), the failing "
            f"cells' result files under {run_dir}, and this numeric environment: {env_summary(env)}"
        )
    return "\n".join(lines) + "\n"
