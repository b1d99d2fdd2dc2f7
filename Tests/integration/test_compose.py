"""docker-compose.yml is valid against the Compose specification's JSON Schema (no Docker engine here)."""
import json
import pathlib

import jsonschema
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = REPO.parent / "shared" / "vendor-data" / "compose-spec.json"


def test_compose_file_validates_against_the_compose_schema():
    schema = json.loads(SCHEMA.read_text())
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    jsonschema.validate(compose, schema)


def test_compose_builds_the_dockerfile_and_publishes_the_port():
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    service = compose["services"]["livecontrols"]
    assert (REPO / service["build"]["context"] / service["build"].get("dockerfile", "Dockerfile")).exists()
    assert any("8080" in str(p) for p in service["ports"])
