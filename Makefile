# Two commands on a fresh machine: `make demo` (the iris regret study) and `make test`.
# Each makes the local virtual environment .venv on first use: `make demo` installs ocolearn alone
# (its dependencies), `make test` and the targets below add the test extras (pytest, ruff, ...).
# `make records`: every experiment's record (experiments/records/), figure and number (docs/experiments.md).
# `make regenerate`: `make records` and `make bench`.
# `make bench`: the CPU benchmarks' records (benchmarks/records/) and the speed numbers (docs/benchmarks.md);
# `make bench-gpu` on a machine with a GPU (and jax with CUDA); `make readme` rewrites the tables
# from the committed records alone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: demo test test-all lint format bench bench-gpu records readme regenerate clean docs

# Three test workers on two cores: tests wait on compilers and subprocesses too (the whole suite 4:44
# against 5:02 with two, 2026-11-24).
TEST_WORKERS ?= 3
# `make test` leaves out the tests marked slow (long runs, whole studies, the longer tests that
# start processes: pyproject.toml's markers) unless CI is set, as CI services set it and .ci/run
# does: CI runs every test. `make test-all` runs every test here.
TEST_SELECTION := $(if $(filter-out 0 false,$(CI)),,-m "not slow")
POLARITY_DATA ?= ../shared/data/review_polarity/txt_sentoken
BENCH_OUT ?= benchmarks/records

# uv (from PyPI, into the venv) installs the test environment in 20 s where pip takes 45 s on two
# cores, both byte-compiling every package (uv on all cores); pip alone where uv cannot be installed.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv \
		&& $(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode -e . \
		|| $(BIN)/python -m pip install --quiet --disable-pip-version-check -e .
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode -e '.[test]' \
		|| $(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(TEST_STAMP)

# `make docs`: the documentation site, docs/_build/html (open index.html), from a fresh environment
# (-E: the reference pages are generated from the code, which Sphinx does not track), warnings as
# errors. It installs the docs extra (sphinx, myst-parser, furo; scikit-learn for the estimators' page) into .venv.
DOCS_STAMP := $(VENV)/.docs-installed
$(DOCS_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv \
		&& $(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode -e '.[docs]' \
		|| $(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(BIN)/python -m sphinx -E -W --keep-going -b html docs docs/_build/html

demo: $(STAMP)
	$(BIN)/python experiments/iris_regret.py --out runs/iris_regret

test: $(TEST_STAMP)
	$(BIN)/ruff format --check ocolearn tests experiments benchmarks
	$(BIN)/ruff check ocolearn tests experiments benchmarks
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal $(TEST_SELECTION)

test-all:
	$(MAKE) test CI=true

format: $(TEST_STAMP)
	$(BIN)/ruff format ocolearn tests experiments benchmarks
	$(BIN)/ruff check --fix ocolearn tests experiments benchmarks

bench: $(TEST_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python benchmarks/bench_ogd.py --out $(BENCH_OUT)
	$(BIN)/python benchmarks/bench_sweep.py --out $(BENCH_OUT)
	$(BIN)/python benchmarks/bench_classifiers.py --out $(BENCH_OUT)
	$(BIN)/python benchmarks/bench_stream.py --out $(BENCH_OUT)
	$(BIN)/python benchmarks/bench_projected_rounds.py --out $(BENCH_OUT)
	$(BIN)/python benchmarks/bench_sparse_steps.py --out $(BENCH_OUT)
	$(BIN)/python benchmarks/bench_sparse_sweep.py --out $(BENCH_OUT)
	$(BIN)/python benchmarks/bench_startup.py --out $(BENCH_OUT)
	$(BIN)/python benchmarks/tables.py

bench-gpu:
	python benchmarks/bench_ogd.py --device gpu --no-peers --out $(BENCH_OUT)
	python benchmarks/bench_sweep.py --device gpu --no-peers --configs 256 4096 65536 --out $(BENCH_OUT)
	python benchmarks/bench_classifiers.py --device gpu --no-peers --out $(BENCH_OUT)

records: $(TEST_STAMP)
	$(BIN)/python experiments/reproduce.py --polarity-data $(POLARITY_DATA)

# everything a run produces: experiment records and figures, CPU benchmark records, documented numbers
regenerate: records bench

readme: $(TEST_STAMP)
	$(BIN)/python benchmarks/tables.py
	$(BIN)/python experiments/reproduce.py --readme-only

clean:
	rm -rf $(VENV) runs .pytest_cache docs/_build
