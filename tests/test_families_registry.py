"""The generated registry against mteb 2.26.24's: every audio model registered with mteb's facts,
the 67 published models marked, model_meta.json readable by mteb's zero-shot flag; `list
models --published` and `check-model`."""

from __future__ import annotations

import csv
import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from maeb.cli.commands import main
from maeb.spec import catalog

from .conftest import SHARED

# their specs and entries name modules of their own (module:Class), which maeb imports only when allowed
pytestmark = pytest.mark.usefixtures("allow_code")

ROOT = Path(__file__).resolve().parents[1]
ISSUE_37 = """BidirLM/BidirLM-Omni-2.5B-Embedding EximiusLabs/fusion-embedding-1-2b-preview EximiusLabs/fusion-embedding-2-2b-preview
Haon-Chen/e5-omni-3B Haon-Chen/e5-omni-7B OpenMuQ/MuQ-MuLan-large Qwen/Qwen2.5-Omni-3B Qwen/Qwen2.5-Omni-7B
Qwen/Qwen3-Omni-30B-A3B-Instruct Qwen/Qwen3-Omni-30B-A3B-Thinking Tevatron/OmniEmbed-v0.1 asapp/sew-d-base-plus-400k-ft-ls100h
asapp/sew-d-mid-400k-ft-ls100h asapp/sew-d-tiny-100k-ft-ls100h encord-team/ebind-full facebook/mms-1b-all facebook/mms-1b-fl102
facebook/mms-1b-l1107 facebook/wav2vec2-lv-60-espeak-cv-ft facebook/wav2vec2-xls-r-2b-21-to-en google/vggish google/yamnet
jinaai/jina-embeddings-v5-omni-nano jinaai/jina-embeddings-v5-omni-small lyrebird/wav2clip matthewagi/HeAR-s1.1
microsoft/msclap-2022 microsoft/msclap-2023 microsoft/speecht5_multimodal microsoft/unispeech-sat-base-100h-libri-ft
microsoft/wavlm-base-plus-sd microsoft/wavlm-base-plus-sv microsoft/wavlm-base-sd microsoft/wavlm-base-sv
speechbrain/cnn14-esc50 speechbrain/m-ctc-t-large vitouphy/wav2vec2-xls-r-300m-phoneme""".split()

mteb = pytest.importorskip("mteb")


@pytest.fixture(scope="module")
def audio_metas():
    return {m.name: m for m in mteb.get_model_metas() if "audio" in (m.modalities or [])}


def test_registry_is_a_superset_of_mteb_audio_models_with_their_facts(audio_metas):
    models = catalog.models()
    assert len(audio_metas) >= 100 and not set(audio_metas) - set(models)
    for name, theirs in audio_metas.items():
        ours = models[name]
        dim = max(theirs.embed_dim) if isinstance(theirs.embed_dim, (list, tuple)) else theirs.embed_dim
        assert (ours.revision, ours.n_parameters, ours.embed_dim, ours.license) == (
            str(theirs.revision),
            theirs.n_parameters,
            dim,
            theirs.license,
        ), name
        expected = None if theirs.training_datasets is None else tuple(sorted(theirs.training_datasets))
        assert ours.training_datasets == expected and ours.adapted_from == theirs.adapted_from, name
        assert ours.release_date == (str(theirs.release_date) if theirs.release_date else None), name


def test_generated_files_are_up_to_date():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "import_models.py"), "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_published_models_are_the_30_reference_models_and_the_issues_37():
    published = {m.name for m in catalog.models().values() if m.published}
    assert len(ISSUE_37) == 37 and set(ISSUE_37) <= published and len(published) == 67
    reference = {m.name for m in catalog.models().values() if m.published and m.name not in ISSUE_37}
    assert {"openai/whisper-medium", "facebook/encodec_24khz", "LCO-Embedding/LCO-Embedding-Omni-7B"} <= reference


@pytest.mark.skipif(not (SHARED / "reference" / "mteb_results" / "main_scores.csv").exists(), reason="../shared is absent")
def test_every_model_with_a_published_maeb_score_is_marked_published():
    tasks = set(catalog.task_names())
    with open(SHARED / "reference" / "mteb_results" / "main_scores.csv", newline="") as handle:
        scored = {row["model"].replace("__", "/", 1) for row in csv.DictReader(handle) if row["task"] in tasks}
    models = catalog.models()
    assert len(scored) >= 30
    assert {name for name in scored if not models[name].published} == set()


def test_model_meta_json_gives_mteb_its_zero_shot_flag():
    from mteb.models import ModelMeta as MtebMeta

    meta = catalog.find_model("facebook/wav2vec2-xls-r-300m")
    written = meta.to_mteb()
    fields = set(MtebMeta.model_fields)
    theirs = MtebMeta(**{k: v for k, v in written.items() if k in fields and k != "loader"}, loader=None)
    assert "VoxPopuliLanguageID" in written["training_datasets"]
    assert theirs.is_zero_shot_on(["VoxPopuliLanguageID"]) is False and theirs.is_zero_shot_on(["GTZANGenre"]) is True
    unknown = catalog.find_model("Qwen/Qwen2.5-Omni-3B").to_mteb()
    assert unknown["training_datasets"] is None  # not annotated: mteb shows "unknown", not "zero-shot"


def test_list_published_counts_what_runs_here(capsys):
    assert main(["list", "models", "--published"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 68 and lines[-1].startswith("67 models with published MAEB results; ")
    runnable = int(lines[-1].split("; ")[1].split()[0])
    not_here = [line for line in lines[:-1] if "not runnable here" in line]
    assert runnable == 67 - len(not_here) and all(", published" in line for line in lines[:-1])
    if importlib.util.find_spec("msclap") is None:
        assert any(line.startswith("microsoft/msclap-2023") for line in not_here)


def write_entry(folder: Path, family: str, name: str = "me/tiny-wav2vec2", dim: int = 16) -> Path:
    path = folder / "local.toml"
    path.write_text(
        f'[[model]]\nname = "{name}"\nfamily = "{family}"\nrevision = "0"\nembed_dim = {dim}\nmodalities = ["audio"]\n'
    )
    return path


@pytest.mark.slow
def test_check_model_passes_a_tiny_entry_written_from_the_readme(tmp_path, capsys):
    code = main(["check-model", str(write_entry(tmp_path, "hf-ssl")), "--tiny"])
    out = capsys.readouterr().out
    assert code == 0, out
    for check in ("load", "audio determinism", "audio batching", "config covers frames", "task classification", "task reranking"):
        assert f"PASS  {check}" in out
    assert "0 failed" in out.splitlines()[-1]


class ForgetfulEncoder:
    """An encoder whose `gain` option changes its vectors but not its config(), and whose
    vectors change from call to call: check-model must catch both."""

    sample_rate, max_seconds, min_samples, batching = 16000, None, 0, "padded"

    def __init__(self, meta, device="cpu", gain=1.0):
        self.gain, self.calls = gain, 0

    def config(self):
        return {"kind": "forgetful"}

    def embed_audio(self, clips):
        self.calls += 1
        return np.stack([[self.gain * float(np.mean(c**2)), float(len(c)) + self.calls] for c in clips]).astype(np.float32)


def test_check_model_fails_an_encoder_that_hides_an_option_or_drifts(tmp_path, capsys):
    family = "tests.test_families_registry:ForgetfulEncoder"
    entry = write_entry(tmp_path, family, "me/forgetful", dim=2)
    assert main(["check-model", str(entry), "--no-tasks"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  config covers gain" in out and "FAIL  audio determinism" in out and "PASS  audio vectors" in out
    assert main(["check-model", str(write_entry(tmp_path, family, "me/f", dim=16)), "--no-tasks"]) == 1
    assert "dimension 2, the entry says 16" in capsys.readouterr().out


def test_check_model_without_tiny_variant_says_so(capsys):
    assert main(["check-model", "microsoft/msclap-2023", "--tiny"]) == 2
    assert "has no tiny variant" in capsys.readouterr().err


def test_install_hints_name_what_really_installs_a_family():
    """Each family's extra exists and asks for at least the versions the family requires (so the
    install hint installs something `list models` then accepts); no-deps packages say so."""
    import tomllib
    from pathlib import Path

    from packaging.requirements import Requirement

    from maeb.encoders import install_hint
    from maeb.encoders.family import FAMILY_REGISTRY

    extras = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    records = [f for f in FAMILY_REGISTRY.values() if f.extra]
    for family, extra in ((f.name, f.extra) for f in records):
        assert extra in extras, family
        shipped = {r.name: r.specifier for r in map(Requirement, extras[extra])}
        for needed in map(Requirement, FAMILY_REGISTRY[family].requires):
            if needed.name in shipped:
                assert {str(c) for c in needed.specifier} <= {str(c) for c in shipped[needed.name]}, (family, str(needed))
    assert "--no-deps resemblyzer==0.1.4" in install_hint("resemblyzer") and all(
        f.extra for f in FAMILY_REGISTRY.values() if f.no_deps
    )
