"""Every protocol message checked against docs/asyncapi.yaml (the AsyncAPI 3.0 document of the WebSocket protocol).

The document is loaded once per process. Its schemas are validated as JSON Schema draft-07 (the AsyncAPI schema
format is a superset of it), with two readings of our own:

- `integer` is an integer as the server writes it: `4.0` is not one (Python reads it as a float), as the server
  refuses it;
- a `oneOf` with a `discriminator` (the AsyncAPI keyword: the name of the property that tells the branches apart)
  checks only the branch whose `const` the instance names, so a mismatch names the field that is wrong, not
  "valid under none of 12 schemas".

`check_client_message` and `check_server_message` raise `ProtocolViolation` (an AssertionError) with the message
type, where in the message, where in the schema, and the offending message.

`jsonschema` takes about a millisecond per message, too slow for the tests that send tens of thousands, so a
message is first checked with `jsonschema_rs` (installed with schemathesis; a few microseconds) against the same
schema with its references inlined: one it finds valid, and that has no whole-number float (`jsonschema_rs` takes
`4.0` for an integer), is done. Every other message, and every message when `jsonschema_rs` is missing, goes
through `jsonschema`, which decides and words the violation.
"""
from __future__ import annotations

import functools
import json
import pathlib
from typing import Any, Callable

import jsonschema
import yaml
from jsonschema import ValidationError, validators
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

try:
    import jsonschema_rs
except ImportError:  # pragma: no cover - installed with schemathesis (Tests/requirements.txt)
    jsonschema_rs = None

SPEC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "asyncapi.yaml"
BASE = "urn:livecontrols:asyncapi"


class ProtocolViolation(AssertionError):
    pass


@functools.cache
def document() -> dict:
    return yaml.safe_load(SPEC.read_text())


def _kind_intents() -> dict[str, str]:
    """Each control kind (`ControlState`'s branches: `XState` with `kind` const) → its intents' schema (`XIntent`)."""
    schemas = document()["components"]["schemas"]
    kinds = {}
    for branch in schemas["ControlState"]["oneOf"]:
        name = branch["$ref"].rsplit("/", 1)[1]
        kinds[schemas[name]["properties"]["kind"]["const"]] = name.removesuffix("State") + "Intent"
    return kinds


KIND_INTENTS = _kind_intents()


def resolve(pointer: str) -> Any:
    """The part of the document at a local `$ref` (`#/components/schemas/Name`) or JSON pointer."""
    node: Any = document()
    for token in pointer.lstrip("#").strip("/").split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


def branch_by(union: dict, key: str, value: Any) -> tuple[int, dict] | None:
    """The branch of `union["oneOf"]` whose `properties[key].const` is `value`: (index, branch as written)."""
    for i, branch in enumerate(union["oneOf"]):
        target = resolve(branch["$ref"]) if "$ref" in branch else branch
        if target.get("properties", {}).get(key, {}).get("const", object()) == value:
            return i, branch
    return None


def _one_of(validator, one_of, instance, schema):
    key = schema.get("discriminator")
    if key and isinstance(instance, dict) and key in instance:
        found = branch_by(schema, key, instance[key])
        if found is None:
            choices = [(resolve(b["$ref"]) if "$ref" in b else b)["properties"][key]["const"] for b in one_of]
            yield ValidationError(f"{key} {instance[key]!r} is none of {choices}", validator="discriminator")
        else:
            yield from validator.descend(instance, found[1], schema_path=found[0])
        return
    yield from jsonschema.Draft7Validator.VALIDATORS["oneOf"](validator, one_of, instance, schema)


Validator = validators.extend(
    jsonschema.Draft7Validator,
    validators={"oneOf": _one_of},
    type_checker=jsonschema.Draft7Validator.TYPE_CHECKER.redefine(
        "integer", lambda _, x: isinstance(x, int) and not isinstance(x, bool)),
)


@functools.cache
def _registry() -> Registry:
    return Registry().with_resource(BASE, Resource.from_contents(document(), default_specification=DRAFT7))


@functools.cache
def validator(pointer: str) -> Validator:
    """A validator for the schema at `pointer` (`#/components/schemas/PatchMessage`), its `$ref`s resolved offline."""
    return Validator({"$ref": BASE + pointer}, registry=_registry())


@functools.cache
def inlined(pointer: str) -> Any:
    """The schema at `pointer` with every `$ref` replaced by what it names (the document has no recursive ones)."""
    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            return inlined(node["$ref"]) if "$ref" in node else {k: walk(v) for k, v in node.items()}
        return [walk(v) for v in node] if isinstance(node, list) else node
    return walk(resolve(pointer))


@functools.cache
def fast_validator(pointer: str):
    """A `jsonschema_rs` validator for the schema at `pointer`, or None without `jsonschema_rs`."""
    return jsonschema_rs.Draft7Validator(inlined(pointer)) if jsonschema_rs else None


def _has_whole_float(node: Any) -> bool:
    if isinstance(node, float):
        return node.is_integer()
    if isinstance(node, dict):
        return any(_has_whole_float(v) for v in node.values())
    return isinstance(node, list) and any(_has_whole_float(v) for v in node)


def fast_valid(instance: Any, pointer: str) -> bool:
    """True when `jsonschema_rs` finds `instance` valid and its verdict is the same as ours (no whole-number float)."""
    fast = fast_validator(pointer)
    return fast is not None and not _has_whole_float(instance) and fast.is_valid(instance)


def _short(instance: Any, limit: int = 600) -> str:
    text = json.dumps(instance, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


def errors(instance: Any, pointer: str) -> list[ValidationError]:
    return list(validator(pointer).iter_errors(instance))


def check(instance: Any, pointer: str, what: str) -> None:
    """Raises ProtocolViolation when `instance` does not match the schema at `pointer`."""
    if fast_valid(instance, pointer):
        return
    found = errors(instance, pointer)
    if found:
        raise _violation(what, instance, pointer, jsonschema.exceptions.best_match(found))


def _violation(what: str, instance: Any, pointer: str, e: ValidationError) -> ProtocolViolation:
    where = "".join(f"[{p!r}]" for p in e.absolute_path) or "(the whole message)"
    keywords = "/".join(str(p) for p in e.absolute_schema_path if p != "$ref")
    return ProtocolViolation(f"{what} does not match docs/asyncapi.yaml: {e.message} at {where} "
                             f"(schema {pointer}: {keywords}): {_short(instance)}")


def _message_schema(union: str, message: Any, direction: str) -> str:
    if not isinstance(message, dict):
        raise ProtocolViolation(f"{direction} message is not a JSON object: {_short(message)}")
    found = branch_by(resolve(f"#/components/schemas/{union}"), "type", message.get("type"))
    if found is None:
        raise ProtocolViolation(f"{direction} message has no known type ({message.get('type')!r}): {_short(message)}")
    return found[1]["$ref"]


def check_client_message(message: Any, kind_of: Callable[[str, str], str | None] | None = None) -> None:
    """A message a client sends. For an intent whose control's kind `kind_of(room, control)` knows, `args` must match
    that kind's intent of that name; otherwise one of any kind."""
    pointer = _message_schema("ClientMessage", message, "client")
    what = f"client {message['type']}"
    kind = kind_of(message["room"], message["control"]) if kind_of and message["type"] == "intent" else None
    union = f"#/components/schemas/{KIND_INTENTS[kind]}" if kind in KIND_INTENTS else None
    branch = branch_by(resolve(union), "intent", message["intent"]) if union else None
    if fast_valid(message, pointer) and (union is None or branch and fast_valid(message, f"{union}/oneOf/{branch[0]}")):
        return
    found = errors(message, pointer)
    if message["type"] != "intent":
        if found:
            raise _violation(what, message, pointer, jsonschema.exceptions.best_match(found))
        return
    envelope = [e for e in found if e.validator != "anyOf"]
    if envelope:
        raise _violation(what, message, pointer, jsonschema.exceptions.best_match(envelope))
    if union:
        if branch is None:
            raise ProtocolViolation(f"{what}: a {kind} has no intent {message['intent']!r} (docs/asyncapi.yaml "
                                    f"{union}): {_short(message)}")
        check(message, f"{union}/oneOf/{branch[0]}", f"{what} {message['intent']!r} on a {kind}")
    elif found:
        raise ProtocolViolation(f"{what}: intent {message['intent']!r} with these args is no kind's intent "
                                f"(docs/asyncapi.yaml #/components/schemas/*Intent): {_short(message)}")


def check_server_message(message: Any) -> None:
    """A message the server sent: its type's schema, the room document's controls by kind, causes by kind."""
    pointer = _message_schema("ServerMessage", message, "server")
    check(message, pointer, f"server {message['type']}")


def check_state_parts(state: dict, ops: list[dict]) -> None:
    """After a patch: the controls and members its ops touched still match their schemas."""
    controls, members = set(), set()
    for op in ops:
        parts = op["path"].split("/")
        if len(parts) > 2:
            name = parts[2].replace("~1", "/").replace("~0", "~")
            (controls if parts[1] == "controls" else members if parts[1] == "presence" else set()).add(name)
    for c in controls:
        if c in state.get("controls", {}):
            check(state["controls"][c], "#/components/schemas/ControlState", f"control {c!r} after a patch")
    for m in members:
        if m in state.get("presence", {}):
            check(state["presence"][m], "#/components/schemas/Member", f"presence member {m!r} after a patch")
