"""The test hub (tests/hub/server.py) answers huggingface_hub's own client calls as the hub does:
repository info at a revision, trees, paths-info, commits, file downloads through the CDN redirect,
and the hub's errors as the client's real exceptions. In this process, with `endpoint=` given."""

from __future__ import annotations

import http.client
from urllib.parse import urlsplit

import pytest
from huggingface_hub import HfApi, HfFileSystem, hf_hub_download
from huggingface_hub.errors import (
    EntryNotFoundError,
    GatedRepoError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from .hub.server import HubServer

SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def hub(tmp_path):
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    (repo / "README.md").write_text("---\nconfigs:\n- config_name: default\n  data_files: data/*.parquet\n---\n")
    (repo / "data" / "train-00000.parquet").write_bytes(b"PAR1" + bytes(range(256)) * 40)
    (repo / "notes.txt").write_text("small file\n")
    with HubServer() as server:
        server.add("dataset", "org/data", SHA, repo)
        server.add("dataset", "org/gated", SHA, repo, gated=True, tokens={"hf_good"})
        yield server


def test_info_tree_paths_and_commits_at_the_pinned_revision(hub):
    api = HfApi(endpoint=hub.endpoint)
    for revision in (SHA, "main"):
        assert api.dataset_info("org/data", revision=revision).sha == SHA
    files = {e.path for e in api.list_repo_tree("org/data", repo_type="dataset", revision=SHA, recursive=True)}
    assert files == {"README.md", "notes.txt", "data", "data/train-00000.parquet"}
    top = {e.path for e in api.list_repo_tree("org/data", repo_type="dataset", revision=SHA)}
    assert top == {"README.md", "notes.txt", "data"}
    infos = api.get_paths_info("org/data", ["data/train-00000.parquet", "nope.txt"], repo_type="dataset", revision=SHA)
    assert [(i.path, i.size, i.lfs is not None) for i in infos] == [("data/train-00000.parquet", 4 + 256 * 40, True)]
    assert [c.commit_id for c in api.list_repo_commits("org/data", repo_type="dataset", revision=SHA)] == [SHA]
    fs = HfFileSystem(endpoint=hub.endpoint)
    assert fs.glob(f"datasets/org/data@{SHA}/data/*.parquet") == [f"datasets/org/data@{SHA}/data/train-00000.parquet"]
    with fs.open(f"datasets/org/data@{SHA}/data/train-00000.parquet", "rb") as handle:
        handle.seek(4)
        assert handle.read(3) == bytes([0, 1, 2])
    assert hub.unhandled() == []


def test_downloads_name_the_commit_and_large_files_come_through_the_cdn(hub, tmp_path):
    small = hf_hub_download(
        "org/data", "notes.txt", repo_type="dataset", revision="main", endpoint=hub.endpoint, cache_dir=tmp_path
    )
    large = hf_hub_download(
        "org/data", "data/train-00000.parquet", repo_type="dataset", revision=SHA, endpoint=hub.endpoint, cache_dir=tmp_path
    )
    assert f"/snapshots/{SHA}/" in small and f"/snapshots/{SHA}/" in large  # the commit the server reported
    assert open(large, "rb").read()[:4] == b"PAR1"
    statuses = [
        (r.method, r.status, r.path.split("?")[0].rsplit("/", 1)[-1]) for r in hub.requests() if r.method in ("HEAD", "GET")
    ]
    assert ("HEAD", 302, "train-00000.parquet") in statuses and ("GET", 200, "notes.txt") in statuses
    assert any(r.path.startswith("/cdn/") and r.method == "GET" for r in hub.requests())
    hub.clear_log()  # a commit-pinned file already cached: no request at all
    hf_hub_download(
        "org/data", "data/train-00000.parquet", repo_type="dataset", revision=SHA, endpoint=hub.endpoint, cache_dir=tmp_path
    )
    assert hub.requests() == []


def test_errors_are_the_clients_own_exceptions(hub, tmp_path):
    def get(repo, name="notes.txt", revision=SHA, token=False):  # False: no token, whatever this machine has
        return hf_hub_download(
            repo, name, repo_type="dataset", revision=revision, endpoint=hub.endpoint, cache_dir=tmp_path, token=token
        )

    with pytest.raises(RepositoryNotFoundError):
        get("org/missing")
    with pytest.raises(RevisionNotFoundError):
        get("org/data", revision="f" * 40)
    with pytest.raises(EntryNotFoundError):
        get("org/data", "absent.txt")
    with pytest.raises(GatedRepoError) as anonymous:
        get("org/gated")
    with pytest.raises(GatedRepoError) as refused:
        get("org/gated", token="hf_other")
    assert (anonymous.value.response.status_code, refused.value.response.status_code) == (401, 403)
    assert open(get("org/gated", "README.md")).read().startswith("---")  # a gated repository's card is public
    assert open(get("org/gated", token="hf_good")).read() == "small file\n"


def test_the_cdn_answers_odd_ranges_as_a_server_must(hub):
    # a range whose last byte precedes its first was a 206 with no body; a malformed one crashed the handler
    body = b"PAR1" + bytes(range(256)) * 40
    origin = urlsplit(hub.endpoint)
    conn = http.client.HTTPConnection(origin.hostname, origin.port, timeout=10)
    conn.request("HEAD", f"/datasets/org/data/resolve/{SHA}/data/train-00000.parquet")
    answer = conn.getresponse()
    answer.read()
    cdn = urlsplit(answer.getheader("Location"))
    expected = {
        "bytes=5-2": (200, body),
        "bytes=abc": (200, body),
        "bytes=0-1,5-6": (200, body),
        "bytes=-5": (206, body[-5:]),
        "bytes=3-": (206, body[3:]),
        "bytes=0-999999": (206, body),
        f"bytes={len(body)}-": (416, b""),
    }
    for header, (status, data) in expected.items():
        conn = http.client.HTTPConnection(cdn.hostname, cdn.port, timeout=10)
        conn.request("GET", f"{cdn.path}?{cdn.query}", headers={"Range": header})
        got = conn.getresponse()
        assert (header, got.status, got.read()) == (header, status, data)
