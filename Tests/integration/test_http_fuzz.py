"""The HTTP fuzzer (`http_fuzz.py`; scripts/fuzz runs it longer) for a bounded time in every test run: random
pipelined requests in random segments never leave a connection hanging nor stop the server serving."""
import os
import time

from http_fuzz import KEY, fuzz


def test_random_http_input_never_hangs_the_server(start_server):
    s = start_server("--api-key", KEY, "--rate", "100000", "--burst", "100000")
    seed = int(os.environ.get("HTTP_FUZZ_SEED", time.time()))
    assert fuzz(s.port, float(os.environ.get("HTTP_FUZZ_SECONDS", "20")), seed, log=lambda line: print(line)) > 0, f"seed {seed}"
