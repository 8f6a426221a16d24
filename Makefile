# Two commands on a fresh machine: `make demo` (the iris regret study) and `make test`.
# Each makes the local virtual environment .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint format bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python experiments/iris_regret.py --out runs/iris_regret

test: $(STAMP)
	$(BIN)/ruff format --check ocolearn tests experiments benchmarks
	$(BIN)/ruff check ocolearn tests experiments benchmarks
	$(BIN)/python -m pytest

format: $(STAMP)
	$(BIN)/ruff format ocolearn tests experiments benchmarks
	$(BIN)/ruff check --fix ocolearn tests experiments benchmarks

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python benchmarks/bench_ogd.py
	$(BIN)/python benchmarks/bench_sweep.py
	$(BIN)/python benchmarks/bench_classifiers.py
	$(BIN)/python benchmarks/bench_stream.py
	$(BIN)/python benchmarks/tables.py

clean:
	rm -rf $(VENV) runs .pytest_cache
