# One place for set-up, the main job and the checks. `make lite` is the README's main command.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

.PHONY: install install-dev debian lite regen-lite test test-fast lint bench clean parity-env parity parity-quick hub-check hub-check-all docs-env docs docs-serve regen quick-check test-heavy test-all

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

# torch first, pinned to the CPU wheel on this machine's disk, so the range in pyproject keeps it
# constraints.txt pins every version, so a fresh clone computes the vectors the reference run did
install: $(PY)
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -c constraints.txt ".[offline,plots]"
	$(PIP) install -q --no-deps -c constraints.txt resemblyzer==0.1.4 openwakeword==0.5.1

install-dev: $(PY)
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -c constraints.txt -e ".[offline,test]"
	$(PY) scripts/editable_root.py  # `python -m maeb` works from the folder that holds a clone named maeb
	$(PIP) install -q --no-deps -c constraints.txt resemblyzer==0.1.4 openwakeword==0.5.1
	# family packages the tests build random-weight models of; --no-deps: they declare torchaudio
	$(PIP) install -q --no-deps torch-vggish-yamnet==0.2.1 wav2clip==0.1.0

debian:
	bash scripts/install_debian.sh

# the README's main job: offline models on MAEB-lite into runs/maeb-lite, leaderboard printed, the
# run checked in stages against the committed reference (results/maeb-lite: inputs, encoders against
# the reference vectors, evaluators on the reference vectors), then its figures drawn whatever the
# check said; make exits with the check's status
lite: install debian
	@status=0; $(PY) -m maeb lite --check || status=$$?; \
	plotted=0; $(PY) -m maeb plot runs/maeb-lite --benchmark MAEB-lite --out runs/maeb-lite/figures --format pdf png || plotted=$$?; \
	if [ $$status -ne 0 ]; then echo "make lite: the check failed (exit $$status): its last lines name the stage and what to send"; fi; \
	if [ $$plotted -ne 0 ]; then echo "make lite: drawing the figures failed (exit $$plotted)"; [ $$status -ne 0 ] || status=$$plotted; fi; \
	echo "make lite: the page to explore (figures inline): open $(CURDIR)/runs/maeb-lite/leaderboard.html in a browser"; \
	echo "make lite: figures for a paper (PDF, PNG, 7 in wide): $(CURDIR)/runs/maeb-lite/figures/ (python -m maeb plot --width column for 3.3 in)"; \
	exit $$status

# the committed MAEB-lite reference regenerated: scores with 32 replays per cell, every model's vectors,
# the evaluator bands under every OpenBLAS kernel this CPU runs (about 25 minutes on 2 cores)
REGEN_WORK ?= /tmp/maeb-lite-reference
regen-lite: install debian
	$(PY) scripts/lite_reference.py --work $(REGEN_WORK)

# pytest-xdist workers for the suite: one per core of CI's 2-core machine (PYTEST_WORKERS=0 runs it in
# one process). --dist loadfile: each test file runs whole on one worker, so its module fixtures are
# built once (tests/conftest.py: the workers share one MAEB-lite build and take turns with Ray clusters)
PYTEST_WORKERS ?= 2
XDIST = -n $(PYTEST_WORKERS) --dist loadfile

# what CI runs on a fresh clone (35 minutes the last CI run, installs included; 52 on a loaded 2-core
# machine): lint, types, the suite in .venv without the tests marked heavy on $(PYTEST_WORKERS) workers,
# its 12 slowest tests printed, then the end-to-end parity tests in the oracle environment
test: install-dev debian parity-env
	$(PY) -m ruff check maeb tests scripts
	$(PY) -m mypy maeb
	$(PY) -m pytest -q $(XDIST) -m "not heavy" --durations=12
	$(PARITY_PY) -m pytest -q tests/parity

# the tests marked heavy (about 20 minutes on 2 cores): MAEB-lite and MMAG-lite orderings from whole
# runs of the offline models, the real recordings of ../shared/data, Ray's failure drills and its
# equality on Whisper; run before a release and after touching encoders, the runner or Ray
test-heavy: install-dev debian
	$(PY) -m pytest -q $(XDIST) -m heavy --durations=12

# everything: `make test`, then the heavy tests
test-all: test test-heavy

# the development loop (after make install-dev): the suite without the tests marked slow (over about
# 15 s each: real models, real data, Ray, MAEB-lite runs)
test-fast:
	$(PY) -m pytest -q $(XDIST) -m "not slow" --durations=12

lint:
	$(PY) -m ruff check maeb tests scripts
	$(PY) -m ruff format --check maeb tests scripts

bench:
	$(PY) scripts/bench_engine.py
	$(PY) scripts/bench_leaderboard.py

clean:
	rm -rf build dist *.egg-info .pytest_cache site

# the documentation site (docs/, mkdocs.yml) into site/: only the site's own packages (pinned by
# constraints.txt), not maeb's, so a fresh clone builds it in a minute. --strict: a broken link,
# reference or nav entry fails the build (tests/test_docs_site.py builds it the same way)
DOCS_PACKAGES := mkdocs mkdocs-material mkdocstrings mkdocstrings-python ruff  # ruff: mkdocstrings formats signatures with it
docs-env: $(PY)
	$(PIP) install -q -c constraints.txt $(DOCS_PACKAGES)

docs: docs-env
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

# serve the site on 127.0.0.1:8000, rebuilt on every edit
docs-serve: docs-env
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs serve --dev-addr 127.0.0.1:8000

# a contributor's check before a pull request (after make install-dev; on 2 cores 60 s quiet with a cold
# mypy cache, 25 s warm, 6.4 min once on a loaded machine): the generated pages current, lint, types,
# and the tests a model family or task type touches; add the tests of what you changed, which run
# whole, slow ones included: make quick-check TESTS="tests/test_families_mine.py"
QUICK_TESTS := tests/test_family_records.py tests/test_families_registry.py tests/test_architecture.py \
	tests/test_docstrings.py tests/test_describe.py tests/test_docs_site.py tests/test_packaging.py
quick-check:
	$(PY) scripts/regen_docs.py --check
	$(PY) -m ruff check maeb tests scripts
	$(PY) -m ruff format --check maeb tests scripts
	$(PY) -m mypy maeb
	$(PY) -m pytest -q $(XDIST) -m "not slow" $(QUICK_TESTS)
	$(if $(TESTS),$(PY) -m pytest -q --durations=5 $(TESTS))

# rebuild every generated page (architecture drawing, spec reference, hub layouts, CLI reference)
# after adding a module, family, task type, spec field or flag; needs `make install-dev`
regen:
	$(PY) scripts/regen_docs.py

# end-to-end parity with mteb 2.26.24 (tests/parity, scripts/parity.py): mteb runs in .venv-parity,
# which adds torchaudio's Python code, torchcodec and FFmpeg to .venv's packages; maeb runs in .venv
PARITY_PY := .venv-parity/bin/python

parity-env: install-dev
	bash scripts/parity_env.sh

# every family x task, every metric compared (about 10 minutes on 2 cores), then the quick selection
# again with both sides under two other CPUs' kernels (scripts/parity.py --imitate: torch, MKL,
# CTranslate2 and OpenBLAS together; a cell that moves is judged by its measured band); options
# through PARITY_ARGS, e.g. make parity PARITY_ARGS="--keep --json parity.json --families clap"
parity: parity-env
	$(PARITY_PY) scripts/parity.py $(PARITY_ARGS)
	$(PARITY_PY) scripts/parity.py --quick --imitate avx2
	$(PARITY_PY) scripts/parity.py --quick --imitate generic

# the quick selection as a pytest (about 2 minutes), plus the resampler parity tests
parity-quick: parity-env
	$(PARITY_PY) -m pytest -q tests/parity

# the README's command against a hub of our own on 127.0.0.1 (tests/hub): every repository of MAEB
# and MAEB(audio-only) in its card's layout, whisper-medium and a CLAP as tiny random checkpoints
# under their real names; each repository downloaded once, then an HF_HUB_OFFLINE=1 rerun that
# makes no request and gives the same scores; first the slow cases of tests/test_hub_e2e.py (a model
# repository downloaded once and loaded offline, a download killed midway). Options through HUB_ARGS (e.g. --work DIR keeps and
# reuses the built repositories)
hub-check: install-dev
	$(PY) -m pytest -q -m slow tests/test_hub_e2e.py
	$(PY) -m tests.hub.check $(HUB_ARGS)

# the same on MAEB+ (98 tasks) with the CLAP (both sides, so no task is skipped); slow
hub-check-all: install-dev
	$(PY) -m tests.hub.check --runs "clap-htsat-unfused=MAEB+" $(HUB_ARGS)
