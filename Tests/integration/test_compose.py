"""docker-compose.yml: valid against the Compose specification's JSON Schema, and the cluster it describes
(Redis with AOF, two LiveControls nodes on it, nginx in front). No Docker engine here: the file is only read."""
import json
import os
import pathlib

import jsonschema
import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = pathlib.Path(os.environ.get("LIVECONTROLS_COMPOSE_SCHEMA") or REPO.parent / "shared" / "vendor-data" / "compose-spec.json")
NODES = ("node-a", "node-b")


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load((REPO / "docker-compose.yml").read_text())


def compose_schema() -> dict:
    """The Compose specification's JSON Schema, which the repository does not hold: it lies beside it, in
    ../shared/vendor-data/ (or LIVECONTROLS_COMPOSE_SCHEMA); a clone without it skips the checks that need it."""
    if not SCHEMA.is_file():
        pytest.skip(f"{SCHEMA} is not there: the Compose specification's JSON Schema (compose-spec/compose-spec, schema/compose-spec.json)")
    return json.loads(SCHEMA.read_text())


def flag(command, name):
    """The value after `name` in a command list, or None."""
    return command[command.index(name) + 1] if name in command else None


def published(service):
    """Host ports of a service's `ports` (short "HOST:CONTAINER" or long syntax)."""
    ports = []
    for p in service.get("ports", []):
        if isinstance(p, dict):
            ports.append(str(p["published"]))
        else:
            parts = str(p).split(":")
            assert len(parts) >= 2, f"{p!r} publishes no fixed host port"
            ports.append(parts[-2])
    return ports


def test_compose_file_validates_against_the_compose_schema(compose):
    schema = compose_schema()
    jsonschema.validate(compose, schema)


def test_redis_keeps_its_data_with_aof_on_a_named_volume(compose):
    redis = compose["services"]["redis"]
    assert redis["image"].split(":")[0] == "redis" and redis["image"].split(":")[1].startswith("7")
    command = redis["command"]
    assert flag(command, "--appendonly") == "yes"
    assert flag(command, "--appendfsync") in ("always", "everysec")
    volume = next(v for v in redis["volumes"] if str(v).endswith(":/data"))
    assert volume.split(":")[0] in compose["volumes"], "Redis data must be a named volume"
    assert redis["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]


def test_two_nodes_share_redis_with_distinct_ids(compose):
    ids = set()
    for name in NODES:
        node = compose["services"][name]
        command = node["command"]
        assert flag(command, "--redis") == "redis://redis:6379"
        assert flag(command, "--host") == "0.0.0.0"
        assert "--data-dir" not in command, "--data-dir and --redis exclude each other"
        ids.add(flag(command, "--node-id"))
        assert node["depends_on"]["redis"]["condition"] == "service_healthy"
        build = node["build"]
        assert (REPO / build["context"] / build.get("dockerfile", "Dockerfile")).exists()
    assert len(ids) == len(NODES) and None not in ids


def test_nodes_publish_their_ports_and_check_readiness(compose):
    for name, port in zip(NODES, ("8081", "8082")):
        node = compose["services"][name]
        container_port = flag(node["command"], "--port") or "8080"
        assert published(node) == [port]
        assert str(node["ports"][0]).endswith(":" + container_port)
        # Open mode with a public /metrics: published on loopback only, never on every interface (issue 41).
        assert str(node["ports"][0]).startswith("127.0.0.1:"), node["ports"]
        test = node["healthcheck"]["test"]
        assert test[0] == "CMD" and test[-1] == f"http://localhost:{container_port}/readyz"


def test_load_balancer_fronts_both_nodes_with_websocket_upgrades(compose):
    lb = compose["services"]["lb"]
    assert published(lb) == ["8080"]
    for name in NODES:
        assert lb["depends_on"][name]["condition"] == "service_healthy"
    mount = next(v for v in lb["volumes"] if "nginx.conf" in v)
    config = (REPO / mount.split(":")[0]).read_text()
    for name in NODES:
        assert f"server {name}:8080" in config
    for directive in ("proxy_http_version 1.1;", "proxy_set_header Upgrade $http_upgrade;",
                      "proxy_set_header Connection $connection_upgrade;", "proxy_read_timeout"):
        assert directive in config


def test_the_sentinel_override_adds_a_replica_three_sentinels_and_points_the_nodes_at_them():
    override = yaml.safe_load((REPO / "deploy" / "compose.sentinel.yml").read_text())
    jsonschema.validate(override, compose_schema())
    services = override["services"]
    replicas = [name for name in services if name.startswith("redis-replica-")]
    assert len(replicas) == 2, "after a failover the promoted replica still has one to wait for"
    for name in replicas:
        assert flag(services[name]["command"], "--replicaof") == "redis"
        assert flag(services[name]["command"], "--min-replicas-to-write") == "1", "a promoted replica keeps refusing lone writes"
    sentinels = [name for name in services if name.startswith("sentinel-")]
    assert len(sentinels) == 3
    for name in sentinels:
        script = services[name]["command"][-1]
        assert "sentinel monitor livecontrols redis 6379 2" in script and "--sentinel" in script
        assert services[name]["volumes"] == [f"{name}:/data"], "a sentinel keeps what it learned across restarts"
    for node in NODES:
        command = services[node]["command"]
        url = flag(command, "--redis")
        assert url == "redis-sentinel://" + ",".join(f"{s}:26379" for s in sentinels) + "/livecontrols"
        assert flag(command, "--redis-wait-replicas") == "1"
        assert flag(command, "--node-id") == node
    assert flag(services["redis"]["command"], "--min-replicas-to-write") == "1"
