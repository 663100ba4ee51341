"""The README's command against a hub of our own: every dataset repository a benchmark reads
(tests/hub/fixtures.py, in the real cards' layouts) and the model repositories (tests/hub/models.py)
served by tests/hub/server.py, and `python -m maeb run ...` run as a user runs it, with
HF_ENDPOINT pointing at that server and HF_HOME, the maeb cache and the results in a work folder.

  python -m tests.hub.check                          # make hub-check: the three runs below
  python -m tests.hub.check --runs "clap-htsat-unfused=MAEB+"   # make hub-check-all

The runs (model=benchmark): whisper-medium=MAEB (the README's command; audio-only, so its text tasks
are skipped and counted), whisper-medium=MAEB(audio-only), clap-htsat-unfused=MAEB (both sides: all
30 tasks run). They share HF_HOME and the maeb cache, as one user's runs do.

What it requires, and exits 1 naming what differs:
- each run exits 0 and writes a result for every task of the benchmark except those the model has
  no side for (a text task for an audio-only model: skipped and counted), each result naming the
  dataset revision the catalog pins;
- each repository is downloaded once, at its pinned revision: no file of any repository is fetched
  twice over all the runs (they share HF_HOME), and every hub request for it names that revision;
- the run that evaluated the most tasks, run again with HF_HUB_OFFLINE=1 and an empty maeb cache
  and results folder (so data and model load again, from HF_HOME alone), makes no request at all
  and gives the same scores.
It prints the wall time of each run and the server's request counts. The functions here also
serve tests/test_hub_e2e.py."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from maeb.spec import catalog

from .server import HubServer

ROOT = Path(__file__).resolve().parents[2]
RUNS = ("whisper-medium=MAEB", "whisper-medium=MAEB(audio-only)", "clap-htsat-unfused=MAEB")
BUILD_MARK = ".built"  # a folder with this file was built completely (reused by the next check)


@dataclass
class Site:
    """What the hub serves: (repo, revision, folder) of each dataset and model repository."""

    work: Path
    datasets: list[tuple[str, str, Path]] = field(default_factory=list)
    models: list[tuple[str, str, Path]] = field(default_factory=list)

    def serve(self, hub: HubServer, skip: tuple[str, ...] = (), gated: tuple[str, ...] = ()) -> HubServer:
        for kind, entries in (("dataset", self.datasets), ("model", self.models)):
            for repo, revision, folder in entries:
                if repo not in skip:
                    hub.add(kind, repo, revision, folder, gated=repo in gated)
        return hub


def _built(folder: Path, build) -> Path:
    """`build(folder)` once: a folder marked complete is reused (a killed build is redone)."""
    if (folder / BUILD_MARK).exists():
        return folder
    build(folder)
    (folder / BUILD_MARK).write_text("")
    return folder


def build_site(work: Path, specs, models=(), variants: dict[str, str] | None = None) -> Site:
    """The dataset repositories `specs` read (at their pinned revisions, in the card's layout or the
    variant named for the repository) and the model repositories `models` (names or aliases)."""
    from .fixtures import build_dataset_repo
    from .models import build_model_repo

    site = Site(Path(work))
    variants = variants or {}
    for repo, revision in sorted({(s.data.path, s.data.revision) for s in specs}):
        variant = variants.get(repo)
        folder = site.work / "repos" / "datasets" / f"{repo.replace('/', '__')}@{revision}" / (variant or "default")
        _built(folder, lambda f, r=repo, v=revision, x=variant: build_dataset_repo(r, v, f, variant=x))
        site.datasets.append((repo, revision, folder))
    for name in models:
        meta = catalog.find_model(name)
        folder = site.work / "repos" / "models" / f"{meta.name.replace('/', '__')}@{meta.revision}"
        _built(folder, lambda f, m=meta.name: build_model_repo(m, f))
        site.models.append((meta.name, meta.revision, folder))
    return site


def maeb_env(work: Path, endpoint: str | None, **extra: str) -> dict[str, str]:
    """The environment of a user's shell pointed at the test hub: HF_HOME and the maeb cache in the
    work folder, no token, nothing inherited that could reach another hub or cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "MAEB_", "HUGGING", "TRANSFORMERS_"))}
    env.update(
        HF_HOME=str(Path(work) / "hf"),
        MAEB_CACHE_DIR=str(Path(work) / "maeb-cache"),
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_XET="1",  # the test hub has no Xet storage; huggingface_hub falls back to HTTP anyway
        PYTHONPATH=str(ROOT),
        # one OpenMP thread: on a shared 2-core machine scikit-learn's k-means spin-waits for busy
        # cores (the clustering evaluator took 71 s for 36 clips under load, 2.3 s with one thread)
        OMP_NUM_THREADS="1",
    )
    if endpoint is not None:
        env["HF_ENDPOINT"] = endpoint
    env.update(extra)
    return env


def maeb_run(args: list[str], env: dict, cwd: Path, timeout: float = 3600) -> tuple[subprocess.CompletedProcess, float]:
    """`python -m maeb ARGS` as a user types it, in `cwd`; the completed process and its wall time."""
    Path(cwd).mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "maeb", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    return proc, time.perf_counter() - started


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("maeb: error:")]


def results_of(folder: Path) -> dict[str, dict]:
    """task -> result payload, for every result file under `folder`."""
    out = {}
    for path in Path(folder).rglob("*.json"):
        if path.name != "model_meta.json" and "_predictions" not in str(path):
            payload = json.loads(path.read_text())
            out[payload["task_name"]] = payload
    return out


def main_scores(folder: Path) -> dict[str, float]:
    out = {}
    for task, payload in results_of(folder).items():
        splits = payload["maeb"]["task"]["eval_splits"]
        entries = payload["scores"][splits[0]]
        out[task] = sum(e["main_score"] for e in entries) / len(entries)
    return out


def repeated_downloads(hub: HubServer) -> dict[str, int]:
    """Files fetched more than once (by the file path the request names), over all runs so far."""
    counts = Counter(_file_of(r.path) for r in hub.downloads())
    return {f: n for f, n in counts.items() if n > 1}


def _file_of(path: str) -> str:
    """The repository file a download names: /…/resolve/REV/FILE, or the CDN's ?file=…&repo=…."""
    if path.startswith("/cdn/"):
        query = dict(p.split("=", 1) for p in path.split("?", 1)[1].split("&"))
        from urllib.parse import unquote

        return f"{unquote(query['repo'])}:{unquote(query['file'])}"
    head, _, rest = path.partition("/resolve/")
    return f"{head.removeprefix('/datasets').lstrip('/')}:{rest.split('/', 1)[1]}"


def unpinned_requests(hub: HubServer, site: Site) -> list[str]:
    """Hub requests for a repository that name a revision other than the one served (e.g. main)."""
    pins = {repo: rev for repo, rev, _ in site.datasets + site.models}
    out = []
    for r in hub.requests():
        match = re.match(r"^/(?:api/)?(?:datasets/|models/)?([^/]+/[^/]+)/(?:resolve|tree|revision|paths-info)/([^/?]+)", r.path)
        if match and match.group(1) in pins and match.group(2) != pins[match.group(1)]:
            out.append(f"{r.method} {r.path}")
    return out


def summary_line(stderr: str, model: str) -> str:
    return next((line for line in stderr.splitlines() if line.startswith(f"{model}: ")), "")


def skipped_count(line: str) -> int:
    match = re.search(r"(\d+) skipped \(model lacks a side\)", line)
    return int(match.group(1)) if match else 0


def check(runs: list[str], work: Path, log=print) -> list[str]:
    """Build, serve, run and compare (see the module docstring); the problems found."""
    problems: list[str] = []
    pairs = [tuple(run.split("=", 1)) for run in runs]
    specs = {s.name: s for _, b in pairs for s in catalog.benchmark_specs(catalog.find_benchmark(b))}
    started = time.perf_counter()
    site = build_site(work, list(specs.values()), sorted({m for m, _ in pairs}))
    log(f"built {len(site.datasets)} dataset and {len(site.models)} model repositories in {time.perf_counter() - started:.0f} s")
    evaluated: dict[tuple[str, str], dict[str, float]] = {}
    with site.serve(HubServer()) as hub:
        for model, bench in pairs:
            name = catalog.find_model(model).name
            wanted = {s.name for s in catalog.benchmark_specs(catalog.find_benchmark(bench))}
            cwd = work / "runs" / f"{name.replace('/', '__')}-{bench}"
            before = len(hub.requests())
            proc, seconds = maeb_run(
                ["run", "--model", model, "--benchmark", bench, "--quiet"], maeb_env(work, hub.endpoint), cwd
            )
            line = summary_line(proc.stderr, name)
            made = hub.requests()[before:]
            log(
                f"{model} --benchmark {bench}: exit {proc.returncode} in {seconds:.0f} s; {len(made)} requests, "
                f"{sum(1 for r in made if r in hub.downloads())} file downloads, "
                f"{sum(r.sent for r in made if r.method == 'GET') / 1e6:.1f} MB; {line.removeprefix(name + ': ')}"
            )
            results = results_of(cwd / "results")
            if proc.returncode != 0:
                problems.append(f"{model} {bench}: exit {proc.returncode}: {proc.stderr.strip().splitlines()[-3:]}")
            missing = wanted - set(results)
            if len(missing) != skipped_count(line):
                problems.append(f"{model} {bench}: no result for {sorted(missing)} ({skipped_count(line)} skipped)")
            for task, payload in results.items():
                if payload["dataset_revision"] != specs[task].data.revision:
                    problems.append(f"{task}: result names revision {payload['dataset_revision']}")
            evaluated[(model, bench)] = main_scores(cwd / "results")
        again = repeated_downloads(hub)
        if again:
            problems.append(f"files downloaded more than once: {again}")
        unpinned = unpinned_requests(hub, site)
        if unpinned:
            problems.append(f"requests for another revision than the pinned one: {unpinned[:5]}")
        log(
            f"all online runs: {len(hub.requests())} requests, {len(hub.downloads())} file downloads "
            f"({sum(r.sent for r in hub.downloads()) / 1e6:.1f} MB), none repeated: {not again}, unhandled: {len(hub.unhandled())}"
        )
        if hub.unhandled():
            problems.append(f"requests the test hub does not speak: {[r.path for r in hub.unhandled()][:5]}")
        # offline: the largest run again from HF_HOME alone
        (model, bench), first_scores = max(evaluated.items(), key=lambda kv: len(kv[1]))
        hub.clear_log()
        cwd = work / "runs" / "offline-rerun"
        env = maeb_env(work, hub.endpoint, HF_HUB_OFFLINE="1", MAEB_CACHE_DIR=str(work / "maeb-cache-offline"))
        proc, seconds = maeb_run(["run", "--model", model, "--benchmark", bench, "--quiet"], env, cwd)
        scores = main_scores(cwd / "results")
        log(
            f"HF_HUB_OFFLINE=1 rerun of {model} --benchmark {bench}: exit {proc.returncode} in {seconds:.0f} s; "
            f"{len(hub.requests())} requests; {len(scores)} tasks, scores equal: {scores == first_scores}"
        )
        if proc.returncode != 0 or hub.requests():
            problems.append(
                f"offline rerun: exit {proc.returncode}, {len(hub.requests())} requests; {proc.stderr.strip().splitlines()[-3:]}"
            )
        if scores != first_scores:
            differ = sorted(t for t in set(scores) | set(first_scores) if scores.get(t) != first_scores.get(t))
            problems.append(f"offline rerun scores differ on {differ}")
    log(f"hub check: {len(problems)} problems in {time.perf_counter() - started:.0f} s")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", nargs="+", default=list(RUNS), metavar="MODEL=BENCHMARK")
    parser.add_argument("--work", type=Path, help="work folder (default: a new temporary one); built repositories are reused")
    args = parser.parse_args(argv)
    if args.work is None:
        import tempfile

        args.work = Path(tempfile.mkdtemp(prefix="maeb-hub-check-"))
    print(f"work folder: {args.work}", flush=True)
    problems = check(args.runs, args.work.resolve(), log=lambda m: print(m, flush=True))
    for problem in problems:
        print(f"problem: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
