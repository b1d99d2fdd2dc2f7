"""web/livecontrols.js outside a browser (issue 37): Node's WebSocket (Node 22's global, Node 20's behind
--experimental-websocket) joins, sends an intent and gets its ack with the state patched; a refusal rejects with the
server's code."""
import json
import shutil
import subprocess

import pytest

from livecontrols_server import REPO


def node_with_websocket():
    node = shutil.which("node")
    if node is None:
        return None
    for flags in ([], ["--experimental-websocket"]):
        probe = subprocess.run([node, *flags, "-e", "process.exit(typeof WebSocket === 'function' ? 0 : 1)"], capture_output=True)
        if probe.returncode == 0:
            return [node, *flags]
    return None


def test_the_js_client_runs_in_node(server):
    node = node_with_websocket()
    if node is None:
        pytest.skip("no Node with a WebSocket (Node 22, or Node 20 with --experimental-websocket)")
    result = subprocess.run([*node, str(REPO / "Tests" / "node" / "client.mjs"), server.ws_url], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["value"] == 7 and seen["me"] == "Node" and seen["version"] > 0
    assert seen["refused"]["code"] == "out_of_range"
    assert seen["people"] >= 1
