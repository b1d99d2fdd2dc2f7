"""A room whose snapshot is larger than a connection's outgoing queue (--outbox-bytes) stays joinable: the snapshot
goes out alone, as the answer to the join (with its id), to a fresh join, a member's resync, and the joins after them."""


def join_answer(client, request_id: str) -> dict:
    client.send({"type": "join", "room": "demo", "id": request_id})
    return client.recv(lambda m: m.get("id") == request_id)


def test_a_snapshot_larger_than_the_outbox_is_delivered_and_the_room_stays_joinable(start_server):
    s = start_server("--outbox-bytes", "1048576", "--rate", "1000", "--burst", "1000")
    writer = s.client(timeout=30)
    writer.join()
    for i in range(24):  # ~1.4 MB of list items: more than the 1 MiB outbox
        assert writer.intent("person", "append", {"value": {"name": "x" * 60000, "age": i}})["type"] == "ack"
    fresh = s.client(timeout=30)
    snapshot = join_answer(fresh, "j1")
    assert snapshot["type"] == "snapshot" and len(snapshot["state"]["controls"]["person"]["sections"][-1]["items"]) >= 24
    assert join_answer(fresh, "j2")["type"] == "snapshot", "a member's resync, answered as asked"
    fresh.close()
    late = s.client(timeout=30)
    assert join_answer(late, "j3")["type"] == "snapshot", "a join after them"
    assert writer.intent("quantity", "next")["type"] == "ack"
