"""A tiny run of the load tool (Benchmarks/), so it keeps building and measuring correctly."""
import json
import subprocess

from livecontrols_server import REPO

TOOL_DIR = REPO / "Benchmarks"


def test_load_tool_fanout_smoke_run_loses_nothing(start_server):
    server = start_server("--rate", "1000000", "--burst", "1000000")
    subprocess.run(["swift", "build", "--package-path", str(TOOL_DIR), "--scratch-path", str(TOOL_DIR / ".build")],
                   check=True, capture_output=True, timeout=600)
    tool = TOOL_DIR / ".build" / "debug" / "livecontrols-bench"
    out = subprocess.run([str(tool), "fanout", "--port", str(server.port), "--subscribers", "20", "--window", "4",
                          "--seconds", "1", "--server-pid", str(server.proc.pid)],
                         capture_output=True, text=True, timeout=120, check=True).stdout.strip().splitlines()
    result = json.loads(out[-1])
    assert result["server"] == "livecontrols" and result["lost"] == 0
    assert result["deliveries"] == result["sent"] * 20 > 0
    assert result["latencyMicros"]["p50"] > 0
