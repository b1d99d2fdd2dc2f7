"""Fair shares per client address: connections held at once, rooms created per minute; behind a trusted proxy the
address is the one its X-Forwarded-For names."""
import pytest

from redis_server import cluster, redis_server  # noqa: F401  (fixtures)

from rawws import RawClient


def refused(client: RawClient) -> int | None:
    with pytest.raises(ConnectionAbortedError) as closed:
        client.read_json()
    return closed.value.args[0]


def test_one_address_holds_at_most_its_share_of_connections(start_server):
    s = start_server("--max-connections-per-address", "3")
    held = [RawClient(s.port) for _ in range(3)]
    for c in held:
        assert c.read_json()["type"] == "welcome"
    assert refused(RawClient(s.port)) == 1013
    held.pop().close()
    s.wait_for_log("disconnected", count=2)  # the refused one and this one have closed (logged at debug)
    again = RawClient(s.port)
    assert again.read_json()["type"] == "welcome", "a closed connection gives its place back"


def test_behind_a_trusted_proxy_each_forwarded_address_has_its_own_share(start_server):
    s = start_server("--max-connections-per-address", "1", "--trusted-proxy", "127.0.0.0/8")
    a = RawClient(s.port, headers={"X-Forwarded-For": "203.0.113.7"})
    b = RawClient(s.port, headers={"X-Forwarded-For": "198.51.100.1, 203.0.113.9"})  # the proxy's own hop is last
    assert a.read_json()["type"] == "welcome" and b.read_json()["type"] == "welcome"
    assert refused(RawClient(s.port, headers={"X-Forwarded-For": "203.0.113.7"})) == 1013


def test_x_forwarded_for_from_an_untrusted_peer_is_ignored(start_server):
    s = start_server("--max-connections-per-address", "1")
    a = RawClient(s.port, headers={"X-Forwarded-For": "203.0.113.7"})
    assert a.read_json()["type"] == "welcome"
    assert refused(RawClient(s.port, headers={"X-Forwarded-For": "203.0.113.8"})) == 1013


def test_an_address_creates_at_most_its_share_of_rooms_per_minute(start_server):
    s = start_server("--room-creations-per-minute", "3")
    c, other = s.client(), s.client()
    for i in range(3):
        assert c.join(f"mine-{i}")["type"] == "snapshot"
    refusal = other.join("mine-3")  # the same address, another connection
    assert refusal["type"] == "error" and refusal["code"] == "room_limit" and "your address" in refusal["message"]
    assert other.join("mine-0")["type"] == "snapshot", "joining a room that exists takes nothing"
    assert other.join("demo")["type"] == "snapshot"


@pytest.mark.parametrize("value", ["not-an-address", "10.0.0.0/33", "::1/129"])
def test_a_bad_trusted_proxy_is_refused_at_start(value):
    import subprocess

    from livecontrols_server import BINARY
    done = subprocess.run([BINARY, "--port", "0", "--trusted-proxy", value], capture_output=True, text=True, timeout=20)
    assert done.returncode != 0 and "--trusted-proxy" in done.stderr


def test_in_cluster_mode_joining_rooms_that_exist_takes_nothing_from_the_share(cluster):  # noqa: F811
    [node] = cluster(1, "--room-creations-per-minute", "2")
    c = node.client()
    assert c.join("made-0")["type"] == "snapshot"
    for _ in range(5):  # joins of rooms that exist (made-0, and the config's demo), again and again
        for room in ("made-0", "demo"):
            other = node.client()
            assert other.join(room)["type"] == "snapshot"
            other.close()
    assert c.join("made-1")["type"] == "snapshot", "one creation is left of two"
    refusal = c.join("made-2")
    assert refusal["type"] == "error" and refusal["code"] == "room_limit"
