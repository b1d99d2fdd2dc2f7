#!/usr/bin/env python3
"""Runs many partition schedules (Tests/integration/partition_run.py) and writes the results to docs/PARTITIONS.md.

    sudo python3 Benchmarks/partitions.py --schedules 100            # seeds 1…100, 15 s of faults each
    sudo python3 Benchmarks/partitions.py --seed 37                  # one schedule again, by its seed

Needs root (network namespaces) and a debug build (`swift build`; LIVECONTROLS_BIN for another binary)."""
from __future__ import annotations

import argparse
import datetime
import pathlib
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "Tests" / "integration"))

from partition_run import run_schedule  # noqa: E402
from partitions import namespaces_available  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--schedules", type=int, default=100, help="how many schedules (seeds 1…N)")
    parser.add_argument("--seed", type=int, help="run this one seed only (nothing is written)")
    parser.add_argument("--seconds", type=float, default=15, help="faults per schedule")
    parser.add_argument("--out", default=str(REPO / "docs" / "PARTITIONS.md"))
    args = parser.parse_args()
    if why := namespaces_available():
        print(f"cannot run: {why}", file=sys.stderr)
        return 2
    seeds = [args.seed] if args.seed is not None else list(range(1, args.schedules + 1))
    results, started = [], time.monotonic()
    for seed in seeds:
        result = run_schedule(seed, seconds=args.seconds)
        results.append(result)
        status = "ok" if not result.violations else "VIOLATED: " + "; ".join(result.violations)
        print(f"seed {seed}: {result.intents} intents, {result.acked} acked, {result.patches} patches — {status}", flush=True)
    failed = [r for r in results if r.violations]
    if args.seed is None:
        write(pathlib.Path(args.out), results, args.seconds, time.monotonic() - started)
    return 1 if failed else 0


def write(path: pathlib.Path, results, seconds: float, elapsed: float):
    failed = [r for r in results if r.violations]
    # The description above the result is written by hand (docs/PARTITIONS.md); it stays as it is.
    intro = path.read_text().split("\n## Last run", 1)[0].rstrip("\n") if path.exists() else "# Partition tests"
    lines = [
        intro,
        "",
        f"## Last run ({datetime.date.today().isoformat()}, commit {commit()}, {len(results)} schedules of {seconds:g} s, "
        f"{elapsed / 60:.0f} min)",
        "",
        "| schedules | violated | intents sent | acked | distinct patches checked |",
        "|---|---|---|---|---|",
        f"| {len(results)} | {len(failed)} | {sum(r.intents for r in results):,} | {sum(r.acked for r in results):,} | "
        f"{sum(r.patches for r in results):,} |",
        "",
    ]
    if failed:
        lines += ["Violations:", ""] + [f"- seed {r.seed}: {'; '.join(r.violations)} (schedule: {', '.join(r.events)})"
                                        for r in failed] + [""]
    else:
        lines += ["No schedule violated a check.", ""]
    lines += ["Intents not acked were refused with `unavailable` (a room changing hands, Redis out of reach) or lost",
              "with their connection; the checks are about what was acked and what clients saw, not availability.", ""]
    # What was written by hand about earlier runs stays, below the new result.
    earlier = path.read_text().split("\n## Earlier runs\n", 1) if path.exists() else []
    if len(earlier) == 2:
        lines += ["## Earlier runs", earlier[1].rstrip("\n"), ""]
    path.write_text("\n".join(lines))


def commit() -> str:
    """The commit the run's build came from (its working tree: a + when it has changes), for the record."""
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
    return (head or "unknown") + ("+" if dirty else "")


if __name__ == "__main__":
    sys.exit(main())
