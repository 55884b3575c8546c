#!/usr/bin/env python3
"""openai_load.py: the same streaming load against any OpenAI-compatible server, so that tg's
`llm --serve` and llama.cpp's `llama-server` can be compared in one run (serve_bench measures
tg's engine alone).

    openai_load.py http://127.0.0.1:8080 1 2 4 8     # client counts

For each count N, N clients at once each stream one completion of 32 greedy tokens from a
short prompt of their own ("Request i says"); prints the aggregate generated tokens per second
(all tokens / wall time, first request sent to last finished) and the worst time to first
token. Standard library only.
"""
import json
import sys
import threading
import time
import urllib.request

TOKENS = 32


def stream_one(base, i, out):
    body = json.dumps({"prompt": f"Request {i} says", "max_tokens": TOKENS, "temperature": 0, "stream": True,
                       "ignore_eos": True}).encode()
    req = urllib.request.Request(base + "/v1/completions", data=body, headers={"Content-Type": "application/json"})
    t0 = time.monotonic()
    first, pieces = None, 0
    with urllib.request.urlopen(req, timeout=600) as resp:
        for raw in resp:
            line = raw.decode("utf-8", "replace").strip()
            if not line.startswith("data: {"):
                continue
            chunk = json.loads(line[6:])
            choices = chunk.get("choices") or []
            if choices and choices[0].get("text"):
                pieces += 1
                if first is None:
                    first = time.monotonic() - t0
    out[i] = (pieces, first or 0.0, time.monotonic() - t0)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    base = sys.argv[1].rstrip("/")
    for n in map(int, sys.argv[2:]):
        out = [None] * n
        t0 = time.monotonic()
        threads = [threading.Thread(target=stream_one, args=(base, i, out)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - t0
        if any(r is None for r in out):
            sys.exit(f"{n} clients: a request failed")
        # Streamed text chunks, not tokens: servers send one chunk per token, except where a
        # token ends inside a UTF-8 character; the total asked for is what both generate.
        tokens = n * TOKENS
        print(f"{n} clients: aggregate {tokens / wall:.2f} tok/s, {tokens} tokens in {wall:.2f} s; "
              f"worst first token {max(r[1] for r in out):.3f} s; chunks streamed {sum(r[0] for r in out)}", flush=True)


if __name__ == "__main__":
    main()
