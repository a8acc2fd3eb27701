#!/usr/bin/env python3
"""How long Holistic Trace Analysis (HTA) takes to parse one PyTorch profiler trace, and how much
memory it needs: the reference that BENCHMARKS.md ("PyTorch profiler traces") holds Sightline to.

usage: python3 benches/hta_parse.py TRACE [--runs N] [--json]

TRACE is a Kineto trace (`.pt.trace.json` or `.json.gz`). Each measurement runs in a fresh Python
process, so that its peak RSS (`ru_maxrss`) is its own and nothing is cached between runs:

- `json.load`: Python's standard JSON parser on the (decompressed) file, nothing else;
- `HTA TraceAnalysis(trace_dir=DIR)`: what a user of HTA runs. HTA wants a folder of per-rank
  files, so DIR is a temporary folder holding a symbolic link to TRACE under its own name. HTA
  takes the rank from `"rank": N` in the file (`distributedInfo`); a trace without one (a
  single-process capture such as `kineto_workloads.py many`) is read line by line to the end
  looking for it, then parsed as rank 0 — that scan is part of HTA's time, as for its users;
- `HTA TraceAnalysis(trace_files={0: TRACE})`: the same parse with the rank given, no scan.

Times are wall-clock seconds around the call (imports excluded). Needs
`pip install HolisticTraceAnalysis` (0.5.0 was measured).
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

MEASURES = ("json", "hta_dir", "hta_files")
LABELS = {
    "json": "json.load",
    "hta_dir": "HTA TraceAnalysis(trace_dir=DIR)",
    "hta_files": "HTA TraceAnalysis(trace_files={0: TRACE})",
}


def measure_one(what: str, trace: str) -> dict:
    """Runs one measurement in this process and returns its numbers."""
    if what == "json":
        import gzip

        t = time.perf_counter()
        with gzip.open(trace, "rb") if trace.endswith(".gz") else open(trace, "rb") as f:
            data = json.load(f)
        seconds = time.perf_counter() - t
        detail = f"{len(data.get('traceEvents', []))} events"
    else:
        import logging

        logging.disable(logging.WARNING)
        from hta.trace_analysis import TraceAnalysis

        with tempfile.TemporaryDirectory(prefix="hta-parse-") as folder:
            link = os.path.join(folder, os.path.basename(trace))
            os.symlink(os.path.abspath(trace), link)
            t = time.perf_counter()
            if what == "hta_dir":
                analysis = TraceAnalysis(trace_dir=folder)
            else:
                analysis = TraceAnalysis(trace_files={0: link}, trace_dir=folder)
            seconds = time.perf_counter() - t
            frames = analysis.t.traces
            detail = ", ".join(f"rank {r}: {len(df)} rows" for r, df in sorted(frames.items()))
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {"what": what, "seconds": seconds, "peak_rss_mib": peak_kib / 1024, "detail": detail}


def versions() -> str:
    out = [f"Python {sys.version.split()[0]}"]
    try:
        from importlib.metadata import version

        for package in ("HolisticTraceAnalysis", "pandas", "numpy"):
            out.append(f"{package} {version(package)}")
    except Exception as e:  # a missing package is reported by the measurement itself
        out.append(f"({e})")
    return ", ".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--runs", type=int, default=1, help="runs of each measurement (median)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--one", choices=MEASURES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not os.path.isfile(args.trace):
        print(f"{args.trace}: no such file", file=sys.stderr)
        return 2
    if args.one:
        print(json.dumps(measure_one(args.one, args.trace)))
        return 0

    results = []
    for what in MEASURES:
        runs = []
        for _ in range(max(1, args.runs)):
            child = subprocess.run(
                [sys.executable, os.path.abspath(__file__), args.trace, "--one", what],
                capture_output=True,
                text=True,
            )
            if child.returncode != 0:
                print(f"{LABELS[what]} failed:\n{child.stderr}", file=sys.stderr)
                return 1
            runs.append(json.loads(child.stdout.strip().splitlines()[-1]))
        results.append(
            {
                "measure": LABELS[what],
                "seconds": statistics.median(r["seconds"] for r in runs),
                "seconds_runs": [round(r["seconds"], 2) for r in runs],
                "peak_rss_mib": max(r["peak_rss_mib"] for r in runs),
                "detail": runs[-1]["detail"],
            }
        )
    size = os.path.getsize(args.trace)
    if args.json:
        print(json.dumps({"trace": args.trace, "bytes": size, "versions": versions(),
                          "results": results}, indent=1))
        return 0
    print(f"{args.trace} ({size / 1e6:.1f} MB on disk); {versions()}")
    print(f"{'Measure':44} {'Seconds':>8} {'Peak RSS':>10}  Runs / result")
    for r in results:
        runs = " ".join(f"{s:.2f}" for s in r["seconds_runs"])
        print(f"{r['measure']:44} {r['seconds']:8.2f} {r['peak_rss_mib']:7.0f} MiB  [{runs}] {r['detail']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
