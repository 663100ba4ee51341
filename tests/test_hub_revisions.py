"""Hub revisions and answers: `main` (or no revision) resolves to a commit online and from the cache
offline; a transient 5xx is retried with backoff and said, a lasting one fails as itself."""

from __future__ import annotations

import pytest

# item 11: the commit "main" stood for


def test_main_and_no_revision_resolve_to_the_commit_online_and_from_the_cache_offline(tmp_path, monkeypatch):
    from huggingface_hub import constants

    from maeb.data import hub as maeb_hub
    from maeb.results.write import task_result
    from maeb.spec.taskspec import parse_spec

    from .hub.server import HubServer

    sha = "89abcdef0123456789abcdef0123456789abcdef"
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("---\nconfigs:\n- config_name: default\n  data_files: x.parquet\n---\n")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    with HubServer() as server:
        server.add("dataset", "org/data", sha, repo)
        monkeypatch.setattr(constants, "ENDPOINT", server.endpoint)
        assert maeb_hub.resolved_commit("org/data", "main") == sha
        assert maeb_hub.resolved_commit("org/data", None) == sha
    refs = tmp_path / "hub-cache" / "datasets--org--data" / "refs"
    refs.mkdir(parents=True)
    (refs / "main").write_text(sha)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert maeb_hub.resolved_commit("org/data", "main") == sha  # offline: the ref the download wrote
    assert maeb_hub.resolved_commit(str(repo), None) is None  # a local folder has no commit
    raw = {"name": "T", "type": "classification", "data": {"source": "hub", "path": "org/data", "revision": "main"}}
    spec = parse_spec(raw, "test spec", tmp_path)
    from maeb.run.task import resolved_revision

    assert resolved_revision(spec, {}) == sha  # what the runner puts in the result's data notes
    written = task_result(spec, {}, 0.0, {"data": {"resolved_revision": sha}})
    assert written["dataset_revision"] == sha and task_result(spec, {}, 0.0, {"data": {}})["dataset_revision"] == "main"


# item 12: a transient hub 5xx


class _Answered500(Exception):
    class response:  # noqa: N801  (what huggingface_hub's HTTP errors carry)
        status_code = 500


def _flaky_hub(monkeypatch, failures: int):
    import datasets

    from maeb.data import hub as maeb_hub

    calls, waits = [], []

    def load_dataset(*args, **kwargs):
        calls.append(args)
        if len(calls) <= failures:
            raise _Answered500("500 Server Error: Internal Server Error for url: .../api/datasets/org/data")
        return datasets.Dataset.from_dict({"label": [0, 1]})

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    monkeypatch.setattr(maeb_hub, "prepare", lambda: None)
    monkeypatch.setattr(maeb_hub, "cached_default_config", lambda repo, revision: None)
    monkeypatch.setattr(maeb_hub.time, "sleep", waits.append)
    return calls, waits


def test_a_transient_hub_500_is_retried_with_backoff_and_said(monkeypatch, caplog):
    from maeb.data.sources import load_hub_split

    calls, waits = _flaky_hub(monkeypatch, failures=2)
    with caplog.at_level("WARNING", logger="maeb"):
        table = load_hub_split("org/data", "main", None, "test", ())
    assert len(calls) == 3 and waits == [1.0, 2.0] and table.columns["label"] == [0, 1]
    said = [r.getMessage() for r in caplog.records if "HTTP 500" in r.getMessage()]
    assert said[0] == "org/data@main split test: the hub answered HTTP 500; retrying in 1 s (retry 1 of 4)"


def test_a_hub_that_keeps_answering_500_fails_clearly_not_as_no_hub_access(monkeypatch):
    from maeb.core.errors import DataError
    from maeb.data.sources import load_hub_split

    calls, waits = _flaky_hub(monkeypatch, failures=99)
    with pytest.raises(DataError) as told:
        load_hub_split("org/data", "main", None, "test", ())
    assert len(calls) == 5 and waits == [1.0, 2.0, 4.0, 8.0]
    line = str(told.value)
    assert "answered HTTP 500 for dataset org/data@main on each of 5 tries" in line and "Without hub access" not in line
