"""maeb.run.options: the run's options are written once (RunOptions), and the `run` subcommand's flags
and maeb.evaluate()'s keywords are generated from them, so neither can lack an option, offer one
that is not a field, or default to another value without saying why."""

from __future__ import annotations

import inspect
from dataclasses import MISSING, fields, replace
from pathlib import Path

import pytest

import maeb
import maeb.api
import maeb.run.options
import maeb.run.runner
from maeb.cli.commands import build_parser, main
from maeb.core.context import RunContext
from maeb.core.environment import ENDPOINT_VARIABLES
from maeb.encoders.chat import Endpoint
from maeb.run.flags import CLI_GROUPS, JUDGE_PARTS, judge_from_flags
from maeb.run.options import RunOptions, api_name, default_of
from maeb.run.summary import RunSummary

# the run subcommand's flags that are not options of the run: what to run, how to report, where (Ray),
# and the judge's parts (one field, `judge`, is built from them)
SELECTION_FLAGS = {"model", "model_revision", "tasks", "benchmarks", "task_types", "languages", "eval_splits"}
# allow_code: every subcommand's permission to import modules specs name (maeb.core.trust), not a run option
INVOCATION_FLAGS = {"verbose", "dry_run", "ray", "ray_workers", "help", "allow_code"}
JUDGE_FLAGS = {"judge_url", "judge_model", "judge_key_env", "judge_timeout", "judge_retries", "judge_budget"}
EVALUATE_NON_OPTIONS = {"model", "tasks", "name", "revision"}


def run_parser():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sub.choices["run"]


def test_every_option_has_a_type_a_default_and_a_help():
    for f in fields(RunOptions):
        assert f.type and f.metadata["help"].strip(), f.name
        default_of(f)  # a default (a value or a factory)
        for front in ("cli", "api"):
            if f"{front}_default" in f.metadata:  # a front's other default says why
                assert f.metadata["why"].strip(), f.name


def test_the_command_line_offers_each_option_and_nothing_else():
    run = run_parser()
    dests = {a.dest for a in run._actions}
    options = {f.name for f in fields(RunOptions) if f.metadata["cli"] is not None}
    # the endpoints come from the environment (--option base_url=... names one)
    assert options == {f.name for f in fields(RunOptions)} - {"endpoints"}
    # the judge is a field made of parts: a flag per part of its Endpoint, declared with the field
    assert dests == options - {"judge"} | SELECTION_FLAGS | INVOCATION_FLAGS | JUDGE_FLAGS
    parsed = run.parse_args(["-m", "x", "-t", "y"])
    assert judge_from_flags(parsed) is None
    endpoint = {f.name: (None if f.default is MISSING else f.default) for f in fields(Endpoint)}
    for flag, part, _ in JUDGE_PARTS:  # the flags' defaults are the Endpoint's own (none for its URL and model)
        assert getattr(parsed, flag.lstrip("-").replace("-", "_")) == endpoint[part], flag
    for f in fields(RunOptions):
        if f.metadata["cli"] is not None and "parts" not in f.metadata["cli"]:
            raw = getattr(parsed, f.name)  # (an appending flag's [] is the field's empty tuple or dict)
            value = raw if raw is None else getattr(RunOptions(**{f.name: raw}), f.name)
            assert value == default_of(f, "cli"), f.name


def test_evaluate_takes_each_option_and_nothing_else():
    # written out in evaluate()'s own signature (editors and type checkers read the source, not a generated
    # __signature__), in RunOptions' order, each with the field's evaluate() default and type
    assert "__signature__" not in vars(maeb.api.evaluate)
    params = inspect.signature(maeb.api.evaluate).parameters
    options = {api_name(f): f for f in fields(RunOptions)}
    assert [p for p in params if p not in EVALUATE_NON_OPTIONS] == list(options)
    assert set(params) == EVALUATE_NON_OPTIONS | set(options)
    for name, f in options.items():
        assert params[name].default == default_of(f, "api"), name
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert params[name].annotation == f.metadata.get("api_type", f.type), name
    with pytest.raises(TypeError, match="unexpected keyword argument 'batchsize'"):
        maeb.evaluate("mfcc", [], batchsize=8)


def test_the_run_flags_are_in_help_sections_by_what_a_reader_came_to_do():
    run = run_parser()
    sections = {g.title: {a.dest for a in g._group_actions} for g in run._action_groups}
    assert list(sections)[2:] == list(CLI_GROUPS.values())  # (after argparse's own two)
    assert sections["options"] == {"help", "allow_code"}  # (every subcommand's) and nothing else outside a section
    assert {f.metadata["cli"]["group"] for f in fields(RunOptions) if f.metadata["cli"]} <= set(CLI_GROUPS)
    assert SELECTION_FLAGS <= sections["what to run"] and JUDGE_FLAGS | {"judge_concurrency"} <= sections[CLI_GROUPS["judge"]]
    assert sections["Ray"] == {"ray", "ray_workers"} and all(list(sections.values())[1:])  # (no positional)


def test_the_fronts_default_alike_except_where_a_field_says_why():
    differ = {
        f.name
        for f in fields(RunOptions)
        if not (default_of(f, "cli") == default_of(f, "api") == default_of(f)) and f.name not in ("cache_dir", "endpoints")
    }
    # output_dir: evaluate() writes only when asked; strict_modalities and raise_error: the command line runs
    # benchmarks and goes on past a failed task of several (cache_dir: None at both fronts, read when the run starts);
    # options: None at evaluate(), not one dict shared by every call
    assert differ == {"output_dir", "strict_modalities", "raise_error", "options"}
    cache = next(f for f in fields(RunOptions) if f.name == "cache_dir")
    assert default_of(cache, "cli") is None and default_of(cache, "api") is None
    endpoints = next(f for f in fields(RunOptions) if f.name == "endpoints")  # (no flag: read from the environment)
    assert default_of(endpoints, "api") is None and endpoints.metadata["cli"] is None


# one non-default value per option: (command-line tokens, evaluate() value, the field's value from each)
def samples(tmp_path: Path) -> dict:
    judge = Endpoint("http://127.0.0.1:9/v1", "j")
    return {
        "output_dir": (["--output-dir", str(tmp_path / "o")], tmp_path / "o", tmp_path / "o", tmp_path / "o"),
        "cache_dir": (["--cache-dir", str(tmp_path / "c")], str(tmp_path / "c"), tmp_path / "c", tmp_path / "c"),
        "device": (["--device", "cuda"], "cuda", "cuda", "cuda"),
        "batch_size": (["--batch-size", "8"], 8, 8, 8),
        "batch_seconds": (["--batch-seconds", "2.5"], 2.5, 2.5, 2.5),
        "precision": (["--precision", "bf16"], "bf16", "bf16", "bf16"),
        "call_batch_size": (["--call-batch-size", "4"], 4, 4, 4),
        "workers": (["--workers", "2"], 2, 2, 2),
        "on_bad_audio": (["--on-bad-audio", "skip"], "skip", "skip", "skip"),
        "on_leak": (["--on-leak", "error"], "error", "error", "error"),
        "overwrite": (["--overwrite"], True, True, True),
        "show_progress": (["--quiet"], False, False, False),
        "strict_modalities": (["--strict"], False, True, False),
        "options": (["--option", 'window="clip"'], {"window": "clip"}, {"window": "clip"}, {"window": "clip"}),
        "protocol": (["--protocol", "paper"], "paper", "paper", "paper"),
        "resampler": (["--resampler", "soxr-hq"], "soxr-hq", "soxr-hq", "soxr-hq"),
        "judge": (["--judge-url", judge.base_url, "--judge-model", "j"], judge, judge, judge),
        "judge_concurrency": (["--judge-concurrency", "3"], 3, 3, 3),
        "lite_dir": (["--lite-dir", str(tmp_path / "l")], tmp_path / "l", tmp_path / "l", tmp_path / "l"),
        "mmag_lite_dir": (["--mmag-lite-dir", str(tmp_path / "m")], tmp_path / "m", tmp_path / "m", tmp_path / "m"),
        "perturb": (["--perturb", "gain:db=-20"], "gain:db=-20", ("gain:db=-20",), ("gain:db=-20",)),
        "long_audio": (["--long-audio", "mean"], "mean", "mean", "mean"),
        "layers": (["--layers", "0,2"], "0,2", "0,2", "0,2"),
        "duration_buckets": (["--duration-buckets", "10,30"], "10,30", (10.0, 30.0), (10.0, 30.0)),
        "per_item": (["--per-item"], True, True, True),
        "controls": (["--controls", "shuffled"], "shuffled", ("shuffled",), ("shuffled",)),
        "raise_error": (["--raise-error"], False, True, False),
        "stability_replays": (["--stability-replays", "0"], 0, 0, 0),
        "debug": (["--debug"], True, True, True),
        # (no flag: the command line takes them from the environment, test_the_environment_is_read_by_the_fronts_only)
        "endpoints": ([], {"MAEB_TTA_URL": "http://t"}, {}, {"MAEB_TTA_URL": "http://t"}),
    }


@pytest.fixture
def captured(monkeypatch):
    """The RunOptions each front hands the runner (the run itself replaced by a recorder)."""
    seen = []

    def record(meta, specs, options, *args, **kwargs):
        seen.append(options)
        return RunSummary()

    # (the fronts resolve the run and build offline data in maeb.api.prepared: here the options pass as they are)
    monkeypatch.setattr(maeb.api, "prepared", lambda meta, specs, options, ray=False, dry_run=False: options)
    monkeypatch.setattr(maeb.run.runner, "run", record)
    monkeypatch.setattr(maeb.api, "run", record)
    for variable in ("MAEB_LITE_DIR", "MMAG_LITE_DIR", "MAEB_JUDGE_URL", "MAEB_DEBUG", *ENDPOINT_VARIABLES):
        monkeypatch.delenv(variable, raising=False)
    return seen


def cli_options(captured, tokens=()) -> RunOptions:
    # two tasks, so raise_error keeps the command line's default for several
    assert main(["run", "-m", "mfcc", "-t", "LiteSpokenDigits", "LiteMusicKey", *tokens]) == 0
    return captured.pop()


def api_options(captured, **keywords) -> RunOptions:
    maeb.evaluate("mfcc", [], **keywords)
    return captured.pop()


def test_each_option_is_reachable_from_both_fronts_and_changes_only_itself(tmp_path, captured):
    table = samples(tmp_path)
    assert set(table) == {f.name for f in fields(RunOptions)}  # a new option needs a sample here
    cli_base, api_base = cli_options(captured), api_options(captured)
    for f in fields(RunOptions):
        if f.name not in ("cache_dir", "endpoints"):  # (None at the fronts: filled from the environment)
            assert getattr(cli_base, f.name) == default_of(f, "cli" if f.name != "raise_error" else None) or (
                f.name == "raise_error" and cli_base.raise_error is False
            ), f.name
            api_default = default_of(f, "api")  # (options: None at evaluate() is the field's empty dict)
            assert getattr(api_base, f.name) == (default_of(f) if f.name == "options" else api_default), f.name
    by_name = {f.name: f for f in fields(RunOptions)}
    for name, (tokens, value, from_cli, from_api) in table.items():
        got_cli = cli_options(captured, tokens)
        got_api = api_options(captured, **{api_name(by_name[name]): value})
        assert getattr(got_cli, name) == from_cli, name
        assert getattr(got_api, name) == from_api, name
        changed_cli = {f.name for f in fields(RunOptions) if getattr(got_cli, f.name) != getattr(cli_base, f.name)}
        changed_api = {f.name for f in fields(RunOptions) if getattr(got_api, f.name) != getattr(api_base, f.name)}
        assert changed_cli == ({name} if tokens else set()) and changed_api == {name}, name


def test_a_single_task_stops_at_once_on_the_command_line(captured):
    assert main(["run", "-m", "mfcc", "-t", "LiteSpokenDigits", "--quiet"]) == 0
    assert captured.pop().raise_error is True


def test_the_data_folders_variables_are_read_by_the_fronts_only(tmp_path, captured, monkeypatch):
    monkeypatch.setenv("MAEB_LITE_DIR", str(tmp_path / "lite"))
    monkeypatch.setenv("MMAG_LITE_DIR", str(tmp_path / "mmag"))
    for options in (cli_options(captured), api_options(captured)):
        assert (options.lite_dir, options.mmag_lite_dir) == (tmp_path / "lite", tmp_path / "mmag")
    assert api_options(captured, lite_dir=tmp_path / "mine").lite_dir == tmp_path / "mine"
    # below the fronts nothing reads them: options built directly, and the run's context, go by what they are told
    assert RunOptions(cache_dir=tmp_path / "c").lite_dir is None
    assert RunContext(cache_dir=tmp_path / "c").variables() == {
        "MAEB_LITE_DIR": str(tmp_path / "c" / "maeb-lite"),
        "MMAG_LITE_DIR": str(tmp_path / "c" / "mmag-lite"),
    }


def test_a_run_parses_its_perturbation_and_window_once(tmp_path, tone_folder, monkeypatch):
    """resolve() derives the chain and the window policy; the runner and its helpers read them
    (before RunOptions, one run parsed the chain three times and the window policy more)."""
    import maeb.audio.perturb
    import maeb.audio.windows

    from .test_cli import write_model, write_task

    calls = {"chain": 0, "window": 0}
    chain_parse, window_parse = maeb.audio.perturb.Chain.parse.__func__, maeb.audio.windows.parse

    def count_chain(cls, specs):
        calls["chain"] += 1
        return chain_parse(cls, specs)

    def count_window(text):
        calls["window"] += 1
        return window_parse(text)

    monkeypatch.setattr(maeb.audio.perturb.Chain, "parse", classmethod(count_chain))
    monkeypatch.setattr(maeb.audio.windows, "parse", count_window)
    tasks = [write_task(tmp_path, tone_folder, name) for name in ("ToneA", "ToneB")]
    results = maeb.evaluate(
        str(write_model(tmp_path)), [str(t) for t in tasks], cache_dir=tmp_path / "cache", progress=False, perturb="gain:db=-6"
    )
    assert [r.task for r in results] == ["ToneA", "ToneB"] and results[0].info["perturbation"]
    assert calls == {"chain": 1, "window": 1}
    calls.update(chain=0, window=0)  # the dry run too: it prints the window policy of the resolved run
    tokens = ["run", "-m", str(write_model(tmp_path)), "-t", *map(str, tasks), "--dry-run", "--long-audio", "mean"]
    assert main([*tokens, "--cache-dir", str(tmp_path / "cache"), "--quiet"]) == 0
    assert calls == {"chain": 0, "window": 1}


def test_the_environment_is_read_by_the_fronts_only(tmp_path, captured, monkeypatch):
    """$MAEB_DEBUG and the endpoint variables reach the run as RunOptions fields from both fronts
    (and below them, options built directly go by what they are told)."""
    monkeypatch.setenv("MAEB_DEBUG", "1")
    monkeypatch.setenv("MAEB_API_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MAEB_TTA_URL", "http://127.0.0.1:9/tta")
    monkeypatch.setenv("MAEB_CACHE_DIR", str(tmp_path / "env-cache"))
    for options in (cli_options(captured), api_options(captured)):
        assert options.debug is True and options.cache_dir == tmp_path / "env-cache"
        assert options.endpoints == {"MAEB_API_URL": "http://127.0.0.1:9/v1", "MAEB_TTA_URL": "http://127.0.0.1:9/tta"}
    assert api_options(captured, endpoints={}).endpoints == {}  # given, not replaced
    built = RunOptions(cache_dir=tmp_path / "c")
    assert built.debug is False and built.endpoints == {}


def test_a_model_class_takes_its_endpoint_from_the_run_not_the_environment(monkeypatch):
    from maeb.core.errors import ModelError
    from maeb.encoders import load_encoder
    from maeb.spec.catalog import find_model

    meta = find_model("openai:served-audio-model")
    monkeypatch.setenv("MAEB_API_URL", "http://127.0.0.1:9/from-env")
    with pytest.raises(ModelError, match="MAEB_API_URL"):  # below the fronts the variable is not read
        load_encoder(meta)
    told = load_encoder(meta, endpoints={"MAEB_API_URL": "http://127.0.0.1:9/v1", "MAEB_API_MODEL": "m"})
    assert told.config()["endpoint"] == {"base_url": "http://127.0.0.1:9/v1", "model": meta.options["model"]}  # the entry's
    bare = replace(meta, options={k: v for k, v in meta.options.items() if k != "model"})
    assert (
        load_encoder(bare, endpoints={"MAEB_API_URL": "http://h/v1", "MAEB_API_MODEL": "m"}).config()["endpoint"]["model"] == "m"
    )
    given = load_encoder(meta, endpoints={"MAEB_API_URL": "http://x/v1"}, base_url="http://127.0.0.1:9/opt")
    assert given.config()["endpoint"]["base_url"] == "http://127.0.0.1:9/opt"  # the entry's option wins, as before


# the modules that may read os.environ: the fronts' reader, and the few that read a variable for a reason
# of their own (each says why); every other module of maeb/ is below the fronts and is told its settings
ENVIRONMENT_READERS = {
    "maeb/core/environment.py": "the variables maeb honours, read for the fronts (command line, evaluate(), maeb lite)",
    "maeb/cli/run.py": "the command line (a front): `maeb run` quiets the datasets library's bars by its variable",
    "maeb/data/hub.py": "sets and restores HF_HUB_OFFLINE around a run, for the hub libraries imported later",
    "maeb/run/numeric_env.py": "records the BLAS/thread variables in a result's numeric fingerprint",
    "maeb/encoders/chat.py": "an API key, by the variable the endpoint names, read when a request is sent (never stored)",
    "maeb/audiogen/adapters.py": "an API key, by the variable the entry names, read when a request is sent",
}


def _reads_environment(tree) -> list[int]:
    import ast

    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb", "putenv", "unsetenv"):
            if isinstance(node.value, ast.Name) and node.value.id == "os":
                lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            if any(a.name in ("environ", "getenv", "environb") for a in node.names):
                lines.append(node.lineno)
    return lines


def test_no_module_below_the_fronts_reads_the_environment():
    import ast

    root = Path(maeb.__file__).parent
    offenders = {}
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root.parent).as_posix()
        lines = _reads_environment(ast.parse(path.read_text(encoding="utf-8")))
        if lines and name not in ENVIRONMENT_READERS:
            offenders[name] = lines
    assert offenders == {}, f"read the variable at a front (maeb.core.environment) and pass it down: {offenders}"
    assert _reads_environment(ast.parse("import os\nx = os.environ.get('A')\n")) == [2]  # the scan sees a read
