#!/usr/bin/env python3
"""uWebSockets (through socketify) as the fan-out peer: every connection subscribes to one topic on open, and each
message it receives is published to that topic, the sender included — what the libwebsockets mirror does, on the
pub/sub that is uWebSockets' reference fan-out. Usage: uws_relay.py PORT (prints "listening on PORT" when ready)."""
import sys

from socketify import App, CompressOptions

port = int(sys.argv[1])
app = App()


def on_open(ws):
    ws.subscribe("all")


def on_message(ws, message, opcode):
    app.publish("all", message, opcode)  # the app's publish reaches the sender too (a socket's would skip it)


app.ws("/*", {
    "compression": CompressOptions.DISABLED,
    "max_payload_length": 64 * 1024,
    "idle_timeout": 120,
    "max_backpressure": 64 * 1024 * 1024,  # a slow reader buffers rather than loses: the tool counts every delivery
    "close_on_backpressure_limit": False,
    "open": on_open,
    "message": on_message,
})
app.listen(port, lambda config: print(f"listening on {port}", flush=True))
app.run()
