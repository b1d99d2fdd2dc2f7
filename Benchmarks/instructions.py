#!/usr/bin/env python3
"""Instructions per delivery of the fan-out path, counted by callgrind: stable where wall clock is not.

Each binary (stripped first: valgrind 3.19 cannot read Swift's DWARF 5) runs under `valgrind --tool=callgrind` with
the bench config while `livecontrols-bench fanout` drives it, once for a short and once for a long window; the
difference in instructions over the difference in deliveries is the marginal cost of one delivery (start-up and
joins cancel out). `--scenario latency` counts the latency scenario instead (one intent at a time, so every write
carries one message: the path a quiet room's change takes). Usage:
Benchmarks/instructions.py NAME=BINARY [NAME=BINARY…] [--subscribers 100] [--scenario fanout|latency]
"""
import argparse
import pathlib
import re
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import compare  # noqa: E402


def count(binary: str, seconds: int, subscribers: int, workdir: pathlib.Path, scenario: str = "fanout") -> tuple[int, int]:
    out = workdir / f"callgrind.{pathlib.Path(binary).name}.{seconds}"
    proc, port = compare.start(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, "--port", "0",
                                "--log-level", "error", "--rate", "1000000", "--burst", "1000000", "--max-connections", "20000",
                                *compare.shares_off(binary), "--config", str(compare.REPO / "Benchmarks" / "bench-config.json")],
                               lambda line: (m := re.search(r"127\.0\.0\.1:(\d+)/", line)) and int(m.group(1)))
    window = ["--window", "16"] if scenario == "fanout" else []
    result = compare.run_tool(scenario, port, proc.pid, False, ["--subscribers", str(subscribers), *window, "--seconds", str(seconds)])
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=120)
    totals = subprocess.run(["callgrind_annotate", str(out)], capture_output=True, text=True).stdout
    instructions = int(re.search(r"([\d,]+) \(100.0%\)\s+PROGRAM TOTALS", totals).group(1).replace(",", ""))
    return instructions, result["deliveries"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binaries", nargs="+", metavar="NAME=BINARY")
    ap.add_argument("--subscribers", type=int, default=100)
    ap.add_argument("--scenario", choices=["fanout", "latency"], default="fanout")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = pathlib.Path(tmp)
        what = f"N={args.subscribers} W=16" if args.scenario == "fanout" else f"latency N={args.subscribers}"
        print(f"| build | instructions per delivery, {what} |\n|---|---|")
        for spec in args.binaries:
            name, binary = spec.split("=", 1)
            stripped = workdir / name
            subprocess.run(["strip", "-o", str(stripped), binary], check=True)
            (short, d_short), (long, d_long) = (count(str(stripped), s, args.subscribers, workdir, args.scenario) for s in (3, 12))
            print(f"| {name} | {(long - short) / (d_long - d_short):,.0f} |", flush=True)


if __name__ == "__main__":
    main()
