"""docs/asyncapi.yaml: a valid AsyncAPI 3.0 document (checked offline against the official JSON Schema), whose
references resolve, whose examples match their own schemas, and which names every message, error code, control
kind, intent and cause kind that docs/PROTOCOL.md and the server's sources name.

The official schema is `schemas/3.0.0-without-$id.json` of asyncapi/spec-json-schemas (Apache-2.0; the bundled form,
without `$id`, so it validates offline; no PyPI package ships it), read from `../shared/vendor-data/asyncapi-3.0.0.json`
beside the repository as the Compose schema is (test_compose.py), or from the path in LIVECONTROLS_ASYNCAPI_SCHEMA."""
from __future__ import annotations

import json
import re

import os
import pathlib

import jsonschema
import pytest

import protocol_schema
from livecontrols_server import REPO
from protocol_schema import ProtocolViolation, check, check_client_message, check_server_message, document, resolve

ASYNCAPI_SCHEMA = pathlib.Path(os.environ.get("LIVECONTROLS_ASYNCAPI_SCHEMA")
                               or REPO.parent / "shared" / "vendor-data" / "asyncapi-3.0.0.json")
PROTOCOL = (REPO / "docs" / "PROTOCOL.md").read_text()
SOURCES = REPO / "Sources"


def section(start: str, end: str) -> str:
    """The text of PROTOCOL.md from the heading line `start` up to the next heading line `end`."""
    begin = PROTOCOL.index("\n" + start + "\n")
    return PROTOCOL[begin:PROTOCOL.index("\n" + end, begin + 1)]


def table_names(text: str) -> set[str]:
    """The backticked names in the first column of the markdown table rows of `text`."""
    names = set()
    for line in text.splitlines():
        if line.startswith("| `"):
            names |= set(re.findall(r"`([^`]+)`", line.split("|")[1]))
    return names


def consts(union: str, key: str) -> set:
    """The `const` of `key` in each branch of a union schema."""
    branches = resolve(f"#/components/schemas/{union}")["oneOf"]
    return {(resolve(b["$ref"]) if "$ref" in b else b)["properties"][key]["const"] for b in branches}


def test_the_document_reads_as_an_asyncapi_3_0_object_model():
    """The `asyncapi3` package (PyPI, Apache-2.0): AsyncAPI 3.0's object model in pydantic, an implementation of the
    specification independent of ours; it refuses what 3.0 does not allow (an `action` other than send/receive, an
    unknown key, a wrong type)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the package's own field-name warnings
        from asyncapi3.models.asyncapi import AsyncAPI3
    model = AsyncAPI3.model_validate(document())
    assert model.asyncapi == "3.0.0"
    assert set(model.operations) and set(model.channels) and set(model.components.messages)


def test_the_document_is_valid_asyncapi_3_0():
    if not ASYNCAPI_SCHEMA.is_file():
        # Files `fetch` brings may not be committed here: the official schema lives beside the repository, in the
        # steering repo's shared/vendor-data/, once it is placed there.
        pytest.skip(f"{ASYNCAPI_SCHEMA} is not there: the AsyncAPI 3.0.0 JSON Schema, schemas/3.0.0-without-$id.json of "
                    "asyncapi/spec-json-schemas (commit 7dd3990d9fff9df76e81c8d2ab544e0000f29aff, SHA-256 "
                    "acefdddecb7909e2e6335f49b5acf222cf6170e303e51ab7824123981d7adfa0)")
    schema = json.loads(ASYNCAPI_SCHEMA.read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    # The vendored schema has no $id and only internal references: nothing is fetched.
    assert not re.search(r'"\$ref":\s*"(?!#)', ASYNCAPI_SCHEMA.read_text().split('"examples"')[0])
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(document()), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message[:300]}" for e in errors[:10])
    assert document()["asyncapi"] == "3.0.0"


def test_every_reference_resolves():
    refs = []

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                refs.append(node["$ref"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(document())
    assert len(refs) > 100
    for ref in refs:
        assert ref.startswith("#/"), f"{ref}: only references inside the document"
        assert resolve(ref) is not None, ref
    for name in document()["components"]["schemas"]:
        protocol_schema.validator(f"#/components/schemas/{name}").check_schema(resolve(f"#/components/schemas/{name}"))


def test_every_message_has_examples_that_match_its_payload():
    messages = document()["components"]["messages"]
    channel = document()["channels"]["live"]["messages"]
    assert set(messages) == set(channel), "the channel lists every message"
    for name, message in messages.items():
        assert message.get("examples"), f"message {name} has no example"
        pointer = message["payload"]["$ref"]
        # Its `type` is its key, or its `name` where one type goes both ways (`broadcast`, keyed `broadcasted` from the server).
        assert resolve(pointer)["properties"]["type"]["const"] == message.get("name", name)
        for example in message["examples"]:
            check(example["payload"], pointer, f"example {example['name']!r} of {name}")
    for operation in document()["operations"].values():
        for ref in operation["messages"] + operation.get("reply", {}).get("messages", []):
            assert ref["$ref"].startswith("#/channels/live/messages/") and resolve(ref["$ref"])


def test_the_error_codes_are_those_of_protocol_md_and_of_error_code_swift():
    enum = set(resolve("#/components/schemas/ErrorCode")["enum"])
    documented = table_names(section("### `error`", "## Presence"))
    assert enum == documented
    swift = set(re.findall(r'case \w+ = "(\w+)"', (SOURCES / "LiveControlsProtocol" / "ErrorCode.swift").read_text()))
    api_only = swift - enum
    api_section = section("## Server API", "## Webhooks")
    assert enum <= swift and api_only == {c for c in swift - enum if f"`{c}`" in api_section}, api_only


def test_protocol_md_names_no_message_type_the_document_lacks():
    client = set(re.findall(r"`(\w+)`", "".join(re.findall(r"\n### (.*)", section("## Client → server", "## Server")))))
    server = set(re.findall(r"`(\w+)`", "".join(re.findall(r"\n### (.*)", section("## Server → client", "## Presence")))))
    assert client == {"join", "intent", "presence", "claim", "unclaim", "broadcast", "undo", "redo", "leave"}, client
    assert client == consts("ClientMessage", "type")
    assert server == consts("ServerMessage", "type")
    unknown_type = next(line for line in PROTOCOL.splitlines() if line.startswith("| `unknown_type`"))
    assert set(re.findall(r"`(\w+)`", unknown_type.split("|")[2])) - {"type"} == client


def test_every_control_kind_and_intent_matches_the_sources_and_protocol_md():
    kinds = consts("ControlState", "kind")
    assert kinds == set(protocol_schema.KIND_INTENTS)
    for path in (SOURCES / "LiveControlsEngine").glob("*.swift"):
        text = path.read_text()
        kind = re.search(r'static let kind = "(\w+)"', text)
        if not kind:
            continue
        intents = set(re.findall(r'"(\w+)"', re.search(r"static let intents = \[(.*?)\]", text).group(1)))
        schema = consts(protocol_schema.KIND_INTENTS[kind.group(1)], "intent")
        assert schema == intents, f"{kind.group(1)}: {schema} ≠ {intents} ({path.name})"
        heading = f"### {kind.group(1)}"
        documented = table_names(section(heading, "#").split("\nIntents:\n")[1].split("\n\n")[0])
        assert schema == documented, f"{kind.group(1)}: {schema} ≠ PROTOCOL.md {documented}"
        kinds.discard(kind.group(1))
    assert not kinds, f"kinds without a source: {kinds}"


def test_cause_kinds_and_hold_end_reasons_are_those_of_protocol_md():
    patch = section("### `patch`", "### `ack`")
    cause_table, reasons_table = patch.split("| `cause.kind`")[1], patch.split("| reason |")[1]
    assert consts("Cause", "kind") == table_names(cause_table.split("\n\n")[0])
    hold_end = set(resolve("#/components/schemas/HoldEnd")["properties"]["reason"]["enum"])
    assert hold_end == table_names(reasons_table.split("\n\n")[0])


@pytest.mark.parametrize("message", [
    {"type": "intent", "id": 1, "room": "demo", "control": "quantity", "intent": "set", "args": {"value": 2.0}},
    {"type": "intent", "id": 1, "room": "demo", "control": "quantity", "intent": "press", "args": {"direction": "up"}},
    {"type": "join", "room": "has space"},
    {"type": "presence", "room": "demo", "data": [1]},
    {"type": "subscribe", "room": "demo"},
])
def test_the_checks_refuse_a_malformed_client_message(message):
    with pytest.raises(ProtocolViolation):
        check_client_message(message, lambda room, control: "stepper")


def test_the_checks_know_the_control_kind_of_an_intent():
    goto = {"type": "intent", "id": "g", "room": "demo", "control": "c", "intent": "goto", "args": {"position": "2024-02"}}
    check_client_message(goto)
    check_client_message(goto, lambda room, control: "pager")
    with pytest.raises(ProtocolViolation, match="a stepper has no intent 'goto'"):
        check_client_message(goto, lambda room, control: "stepper")


def test_the_checks_name_the_field_a_server_message_gets_wrong():
    state = {"controls": {"q": {"kind": "stepper", "label": "Q", "value": 1.5, "min": 0, "max": 9, "step": 1, "wrap": False,
                                "canNext": True, "canPrev": True, "holding": None, "claims": {}}}, "presence": {}}
    snapshot = {"type": "snapshot", "room": "r", "epoch": "e", "version": 1, "state": state}
    with pytest.raises(ProtocolViolation, match=r"\['state'\]\['controls'\]\['q'\]\['value'\]"):
        check_server_message(snapshot)
    state["controls"]["q"]["value"] = 1
    check_server_message(snapshot)


def test_the_fast_path_agrees_with_jsonschema():
    assert protocol_schema.jsonschema_rs, "jsonschema_rs is installed with schemathesis (Tests/requirements.txt)"
    for message in document()["components"]["messages"].values():
        pointer = message["payload"]["$ref"]
        for example in message["examples"]:
            assert protocol_schema.fast_valid(example["payload"], pointer) and not protocol_schema.errors(example["payload"], pointer)
            bad = {**example["payload"], "unexpected": 1}
            assert not protocol_schema.fast_valid(bad, pointer) and protocol_schema.errors(bad, pointer)


def json_blocks(text: str) -> list:
    """The JSON values of the ```json blocks of `text`: a block that parses whole, else each line that does."""
    values = []
    for block in re.findall(r"```json\n(.*?)```", text, re.S):
        try:
            values.append(json.loads(block))
        except ValueError:
            for line in block.splitlines():
                try:
                    values.append(json.loads(line))
                except ValueError:
                    pass  # an elided example ({...}, …)
    return values


def test_the_examples_of_protocol_md_match_the_document():
    client_types = consts("ClientMessage", "type")
    exchange = section("## Example exchange", "## Writing a client")
    messages = [json.loads(line[2:]) for line in exchange.splitlines() if line.startswith(("→ {", "← {"))]
    messages += json_blocks(section("## Client → server", "## Presence"))
    assert len(messages) > 25
    for message in messages:
        # `broadcast` goes both ways: the server's names its sender (`from`).
        from_client = message["type"] in client_types and "from" not in message
        (check_client_message if from_client else check_server_message)(message)
    states = [s for s in json_blocks(section("## Controls", "## Access")) if "kind" in s and "…" not in json.dumps(s, ensure_ascii=False)]
    assert {s["kind"] for s in states} == {"stepper", "list", "wizard", "pager", "toggle", "timer", "range", "poll", "text"}, "the form's example is shortened"
    for state in states:
        check({**state, "claims": {}}, "#/components/schemas/ControlState", f"PROTOCOL.md's {state['kind']} example")
