# Two commands do all set-up: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 5006

.PHONY: run test install browser screenshots clean results

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	# torch pinned to the CPU build that a GPU-less machine can install; a GPU box keeps its own.
	$(BIN)/pip install -q "torch==2.13.0" || $(BIN)/pip install -q torch
	# llama.cpp is built for a portable x86-64 baseline: a native build crashes on some CPUs.
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" $(BIN)/pip install -q "llama-cpp-python[server]>=0.3"
	$(BIN)/pip install -q -e ".[dev,llm,ray]"
	touch $(STAMP)

install: $(STAMP)

# Debian's Chromium for the browser tests (never a downloaded browser build).
browser:
	@command -v chromium >/dev/null 2>&1 || ( (apt-get update -qq && apt-get install -y -qq chromium) >/dev/null 2>&1 \
	  || echo "chromium not installed: browser tests will be skipped" )

# Serves on $(HOST) (127.0.0.1); any other address is refused unless ALLOW_REMOTE=1 (no login!) or
# a login is passed to panel:
#   make run HOST=0.0.0.0 PANEL_ARGS="--basic-auth users.json --cookie-secret S --allow-websocket-origin=HOSTNAME:5006"
run: $(STAMP)
	$(BIN)/python -m workbench.ui.serving --address $(HOST) --port $(PORT) $(if $(ALLOW_REMOTE),--allow-remote) -- $(PANEL_ARGS)

# Two test processes (one per core of a small machine); a file's tests stay in one process, the
# long files start first (tests/suite_order.py); the 100 longest tests are listed at the end.
test: $(STAMP) browser
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --durations=100

# docs/results.md from benchmarks/results/*.json (tests/test_results_page.py checks it is current).
results: $(STAMP)
	$(BIN)/python benchmarks/results_page.py

# Regenerates the README screenshots (benchmarks/results/screenshots/) from the browser tests;
# an ordinary test run writes its screenshots to a temporary directory only.
screenshots: $(STAMP) browser
	WORKBENCH_SCREENSHOTS_DIR=benchmarks/results/screenshots $(BIN)/python -m pytest -q tests/ui/test_browser.py

clean:
	rm -rf $(VENV) build *.egg-info
