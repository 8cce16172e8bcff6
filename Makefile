# heta-eval: two commands for a new user
#   make eval DATASET=scifact     install (once) and run the main job
#   make install TORCH=cuda       install with the default index's (CUDA) torch instead
#   make eval RAY=auto            the same on a Ray cluster (local | auto | HOST:PORT)
#   make test                     run the test suite (make test-system: its system tests)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DATASET ?= scifact
MODES ?= keyword_search,vector_search,hybrid_search
OUT ?= results/$(DATASET)

# Where this repository sits next to the shared real data (no internet), use it for the
# datasets it holds; anywhere else the dataset is downloaded and verified on first use.
SHARED_DATA := $(abspath ../shared/datasets)
ifeq ($(origin HETA_EVAL_DATA), undefined)
  ifneq ($(wildcard $(SHARED_DATA)/beir/$(DATASET)/corpus.jsonl),)
    export HETA_EVAL_DATA := $(SHARED_DATA)/beir
  endif
  # scifact-claims reads the SciFact release layout; its adapter accepts the folder itself.
  ifeq ($(DATASET),scifact-claims)
    ifneq ($(wildcard $(SHARED_DATA)/scifact-release/corpus.jsonl),)
      export HETA_EVAL_DATA := $(SHARED_DATA)/scifact-release
    endif
  endif
endif

# torch goes in first. A version pin does not choose the build: from PyPI, torch for Linux is
# the CUDA build and its nvidia-* packages (several GB). TORCH=cpu (the default) asks
# PyTorch's CPU wheel index first (about 190 MB) and falls back to the default index where
# that index does not answer (an offline mirror that serves the CPU wheel itself);
# TORCH=cuda takes the default index's build.
TORCH ?= cpu
TORCH_VERSION := 2.13.0
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu

.PHONY: install torch test test-system lint eval repro bench bench-quick figures clean

$(BIN)/heta-eval: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip
	$(MAKE) --no-print-directory torch
	# Every extra (kb, compare, ray) plus the test and bench tools: the checkout runs it all.
	$(BIN)/pip install -e '.[all,test,bench]'
	touch $@

# Into an existing $(VENV). The index answers when its torch page can be read in 10 s.
torch:
ifeq ($(TORCH),cuda)
	$(BIN)/pip install torch==$(TORCH_VERSION)
else ifeq ($(TORCH),cpu)
	@if $(BIN)/python -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1].rstrip('/') + '/torch/', timeout=10)" '$(TORCH_CPU_INDEX)' 2>/dev/null \
	    && $(BIN)/pip install --index-url '$(TORCH_CPU_INDEX)' torch==$(TORCH_VERSION); then \
	  echo "torch $(TORCH_VERSION): CPU build from $(TORCH_CPU_INDEX)"; \
	else \
	  echo "torch $(TORCH_VERSION): $(TORCH_CPU_INDEX) did not serve it; taking the default index's build"; \
	  $(BIN)/pip install torch==$(TORCH_VERSION); \
	fi
else
	$(error TORCH is cpu (the default) or cuda, got '$(TORCH)')
endif

install: $(BIN)/heta-eval

# The suite but its system tests (those that start a real multi-process system: the two-node
# Ray cluster, a fresh clone running every documented command, signals mid-encode, numba's
# cache across processes, a dev-size report); test-system runs those (CI: with CI_SYSTEM=1).
# One test worker per CPU, at most four (each holds torch and a model: about 2.5 GB), each
# taking a whole test file at a time; TEST_WORKERS=0 runs the suite in this one process.
TEST_WORKERS ?= auto
test: install
	$(BIN)/python -m pytest -q -m "not system" -n $(TEST_WORKERS) --maxprocesses=4 --dist loadfile --durations=15

test-system: install
	$(BIN)/python -m pytest -q -m system --durations=10

lint: install
	$(BIN)/ruff check heta_eval adapters tests bench
	$(BIN)/ruff format --check heta_eval adapters tests bench

eval: install
	$(BIN)/heta-eval run --dataset $(DATASET) --modes $(MODES) --output $(OUT) $(if $(RAY),--ray $(RAY))

# Reproduce the reference numbers on SciFact (BM25 flat 0.6789 / R@100 0.9253 / R@1000 0.9767,
# MTEB all-MiniLM-L6-v2 0.6451) through the real pipeline, then check them against the
# checked-in references (BM25 must be OK: |delta| <= 1e-4; docs/bm25.md).
repro: install
	$(BIN)/heta-eval run --dataset scifact --modes keyword_search,vector_search --output results/repro-scifact
	$(BIN)/heta-eval check results/repro-scifact --mode keyword_search --system bm25-flat --metric ndcg@10 --metric recall@100 --metric recall@1000 --require-ok
	$(BIN)/heta-eval check results/repro-scifact --mode vector_search --system all-MiniLM-L6-v2 --metric ndcg@10

# Speed against the peers (bench/README.md): writes bench/results.json and bench/results.md.
# Not part of `make test`; bench-quick is the scaled-down run (about 4 minutes on a shared
# 2-core machine) and writes bench/out/quick/results.{json,md} instead.
bench: install
	$(BIN)/python bench/run_all.py

bench-quick: install
	$(BIN)/python bench/run_all.py --quick

# The figures the README and docs quote, measured on this CPU: make bench, then SciFact through
# every encoding route; kept as this kind of CPU's record (bench/records/<kind>.json), and the
# docs' generated tables rewritten from every kind's record (bench/figures.py; about an hour on
# 2 cores). FIGURES=--render rewrites the tables only; FIGURES=--skip-bench keeps the bench rows.
figures: install
	$(BIN)/python bench/figures.py $(FIGURES)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

# Does chunking lose evidence? Evidence recall@5 by mode and chunk size on SciFact claims.
.PHONY: claims-report
claims-report: install
	$(BIN)/python bench/claims_chunking.py $(if $(wildcard $(SHARED_DATA)/scifact-release/corpus.jsonl),--data-dir $(SHARED_DATA)/scifact-release)

# The Lucene oracle (docs/bm25.md): our analyzer and BM25 against Anserini 0.22.1 on Java
# (java and javac 11+; the pyserini wheel is fetched once). Not part of `make test`. Token
# streams of a BEIR corpus and its queries, every code point in the probe contexts, then
# Anserini's flat and multifield runs against ours, scored. LUCENE_DATA: a BEIR dataset folder.
LUCENE_DATA ?= $(SHARED_DATA)/beir/scifact
.PHONY: lucene-oracle
lucene-oracle: install
	$(BIN)/python -m tools.lucene_oracle.oracle tokens $(LUCENE_DATA)/corpus.jsonl $(LUCENE_DATA)/queries.jsonl
	$(BIN)/python -m tools.lucene_oracle.oracle codepoints
	$(BIN)/python -m tools.lucene_oracle.oracle bm25 $(LUCENE_DATA)
