"""Cluster mode over TLS (`rediss://`, `rediss-sentinel://`): nodes share rooms through a Redis that speaks only TLS
and asks for client certificates; a Redis whose certificate does not check out is never used (the node says why
and is not ready); sentinels and servers all on TLS, followed through a failover."""
from __future__ import annotations

import signal
import subprocess

from livecontrols_server import BINARY
from redis_server import RedisServer
from sentinel_setup import start_sentinel_redis, stop_sentinel_redis
from test_cluster import intent_until_acked, readiness, wait_for
from test_sentinel import join_when_available, send_until_acked
from tls_certificates import tls_certificates  # noqa: F401  (fixture)


def test_nodes_share_rooms_through_a_redis_on_tls_with_client_certificates(start_server, connect, tls_certificates):  # noqa: F811
    redis = RedisServer(tls=tls_certificates, client_auth=True).start()
    try:
        assert redis.command("CONFIG", "SET", "requirepass", "pw") == "OK"  # AUTH on top of TLS
        url = f"rediss://:pw@localhost:{redis.port}"  # checked against the certificate's DNS name
        a_node, b_node = (start_server("--redis", url, "--node-id", name, "--lease-ms", "1000", *tls_certificates.node_args())
                          for name in ("a", "b"))
        a, b = connect(a_node), connect(b_node)
        a.join()
        b.join()
        ack = intent_until_acked(b, "quantity", "set", {"value": 42})
        a.wait_version(ack["version"])  # through Redis pub/sub, over TLS
        assert a.state()["controls"]["quantity"]["value"] == 42
        assert readiness(a_node) == 200 and readiness(b_node) == 200
        assert f"redis=rediss://:***@localhost:{redis.port}" in a_node.stderr()

        # Without the client certificate this Redis refuses the handshake: not ready, and the log says so.
        ca_only = ["--redis-tls-ca-cert-file", tls_certificates.path("ca.crt")]
        refused = start_server("--redis", url, "--node-id", "c", "--lease-ms", "1000", *ca_only)
        wait_for(lambda: readiness(refused) == 503, 10, "a node without a client certificate is not ready")
        refused.wait_for_log("Redis not reachable")
    finally:
        redis.cleanup()


def test_a_redis_whose_certificate_does_not_check_out_is_never_used(start_server, connect, tls_certificates):  # noqa: F811
    redis = RedisServer(tls=tls_certificates).start()
    try:
        # The test CA is in no system trust store; and with the CA, a name the certificate does not carry.
        untrusted = start_server("--redis", redis.url, "--node-id", "u", "--lease-ms", "1000")
        misnamed = start_server("--redis", redis.url, "--node-id", "m", "--lease-ms", "1000",
                                "--redis-tls-ca-cert-file", tls_certificates.path("ca.crt"), "--redis-tls-server-name", "redis.example")
        plain = start_server("--redis", f"redis://127.0.0.1:{redis.port}", "--node-id", "p", "--lease-ms", "1000")
        for node in (untrusted, misnamed, plain):
            wait_for(lambda: readiness(node) == 503, 10, "a node that cannot use Redis is not ready")
        untrusted.wait_for_log("the server's certificate was refused: self-signed certificate in certificate chain")
        misnamed.wait_for_log("the server's certificate was refused: hostname mismatch (checked for redis.example)")
        client = connect(untrusted)
        assert client.join()["code"] == "unavailable"
        assert redis.command("DBSIZE") == 0, "nothing was written through a connection that did not verify"
    finally:
        redis.cleanup()


def test_tls_flags_are_checked_before_the_server_starts(tls_certificates):  # noqa: F811
    ca = tls_certificates.path("ca.crt")
    for args, text in [
        (["--redis", "redis://127.0.0.1:1", "--redis-tls-ca-cert-file", ca], "need a TLS URL"),
        (["--redis", "rediss://127.0.0.1:1", "--redis-tls-ca-cert-file", "/nonexistent/ca.pem"],
         "cannot read the CA certificates in /nonexistent/ca.pem"),
        (["--redis", "rediss://127.0.0.1:1", "--redis-tls-cert-file", tls_certificates.path("client.crt")], "go together"),
        (["--redis", "rediss://127.0.0.1:1", "--redis-tls-cert-file", tls_certificates.path("client.crt"),
          "--redis-tls-key-file", tls_certificates.path("server.key")], "does not match the key"),
    ]:
        done = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=20)
        assert done.returncode == 64, done
        assert text in done.stderr, done.stderr


def test_sentinels_and_servers_on_tls_are_followed_through_a_failover(start_server, connect, tls_certificates):  # noqa: F811
    master, replicas, sentinel = start_sentinel_redis(tls_certificates)
    try:
        a_node, b_node = (start_server("--redis", sentinel.url(), "--node-id", f"n{i}", "--lease-ms", "1000",
                                       "--redis-wait-replicas", "1", *tls_certificates.node_args()) for i in range(2))
        a, b = connect(a_node), connect(b_node)
        a.join()
        b.join()
        assert b.intent("quantity", "set", {"value": 42})["type"] == "ack"
        a.wait_state(lambda s: s["controls"]["quantity"]["value"] == 42)
        a_node.wait_for_log(f"master=127.0.0.1:{master.port}")

        master.proc.send_signal(signal.SIGKILL)
        wait_for(lambda: sentinel.master_port() in [r.port for r in replicas], 30, "the sentinel failed over")
        fresh = connect(b_node)
        join_when_available(fresh)
        ack = send_until_acked(fresh, "quantity", "set", {"value": 43}, timeout=20)
        assert ack["type"] == "ack"
        fresh.wait_state(lambda s: s["controls"]["quantity"]["value"] == 43)
        b_node.wait_for_log("Redis master changed (a failover)")
    finally:
        stop_sentinel_redis(master, replicas, sentinel)
