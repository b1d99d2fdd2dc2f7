"""A tiny run of the load tool (Benchmarks/), so it keeps building and measuring correctly."""
import json
import subprocess

import pytest

from livecontrols_server import REPO

TOOL_DIR = REPO / "Benchmarks"


def build_tool():
    subprocess.run(["swift", "build", "--package-path", str(TOOL_DIR), "--scratch-path", str(TOOL_DIR / ".build")],
                   check=True, capture_output=True, timeout=600)
    return TOOL_DIR / ".build" / "debug" / "livecontrols-bench"


@pytest.mark.parametrize("intent", ["set", "vote", "splice", "broadcast"])
def test_load_tool_fanout_smoke_run_loses_nothing(start_server, intent):
    """Each intent of Benchmarks/views.py on its config (`set` is compare.py's fan-out, on a stepper)."""
    server = start_server("--rate", "1000000", "--burst", "1000000", "--config", str(TOOL_DIR / "views-config.json"))
    tool = build_tool()
    out = subprocess.run([str(tool), "fanout", "--port", str(server.port), "--subscribers", "20", "--window", "4",
                          "--seconds", "1", "--server-pid", str(server.proc.pid), "--intent", intent],
                         capture_output=True, text=True, timeout=120, check=True).stdout.strip().splitlines()
    result = json.loads(out[-1])
    assert result["server"] == "livecontrols" and result["lost"] == 0 and result["errors"] == 0
    assert result["deliveries"] == result["sent"] * 20 > 0
    assert result["latencyMicros"]["p50"] > 0


def test_load_tool_scale_smoke_run_reaches_every_client_in_every_room(start_server):
    """The scale scenario (Benchmarks/scale.py): clients spread over rooms and source addresses, one change per room."""
    server = start_server("--rate", "1000000", "--burst", "1000000", "--config", str(TOOL_DIR / "bench-config.json"))
    tool = build_tool()
    out = subprocess.run([str(tool), "scale", "--port", str(server.port), "--template", "bench", "--connections", "60",
                          "--rooms", "3", "--rounds", "2", "--source-addresses", "127.0.0.2,127.0.0.3",
                          "--server-pid", str(server.proc.pid)],
                         capture_output=True, text=True, timeout=120, check=True).stdout.strip().splitlines()
    result = json.loads(out[-1])
    assert result["connections"] == 60 and result["rooms"] == 3
    assert result["lost"] == 0 and result["deliveries"] == 2 * 60


def test_load_tool_drag_smoke_run_delivers_the_last_value_unrefused(start_server):
    """The drag scenario (Benchmarks/drag.py) against the server's default rate limit: 120 sets a second for 1.5 s."""
    server = start_server("--config", str(TOOL_DIR / "drag-config.json"))
    tool = build_tool()
    out = subprocess.run([str(tool), "drag", "--port", str(server.port), "--subscribers", "10", "--rate", "120",
                          "--seconds", "1.5", "--server-pid", str(server.proc.pid)],
                         capture_output=True, text=True, timeout=120, check=True).stdout.strip().splitlines()
    result = json.loads(out[-1])
    assert result["rateLimited"] == 0 and result["lastValueEverywhere"] is True
    assert result["sets"] >= 150 and result["patchesPerWatcher"] < result["sets"]
