"""Partition tests (docs/PARTITIONS.md): three nodes and Redis in network namespaces, a seeded schedule of cuts
(node ↔ Redis, both ways and one way), kills and restarts while clients on every node send intents; then the
checker: no two different patches or states at one (epoch, version), every acked append in the final state, every
client's stream gap-free and valid (the client checks each patch and every message against docs/asyncapi.yaml),
holds ended with a known reason and none left running. LIVECONTROLS_PARTITION_SEED picks the schedule (default 1);
Benchmarks/partitions.py runs many."""
from __future__ import annotations

import os

import pytest

from partitions import namespaces_available

why_not = namespaces_available()


@pytest.mark.skipif(why_not is not None, reason=why_not or "")
def test_a_seeded_schedule_of_partitions_kills_and_restarts_keeps_every_promise():
    from partition_run import run_schedule
    seed = int(os.environ.get("LIVECONTROLS_PARTITION_SEED", "1"))
    result = run_schedule(seed, seconds=15)
    assert not result.violations, f"seed {seed}: {result.violations}\nschedule: {result.events}"
    assert result.acked > 20, f"seed {seed}: only {result.acked} of {result.intents} intents acked"
