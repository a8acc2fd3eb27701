#!/usr/bin/env python3
"""A PyTorch profiler trace's kernels as a pandas DataFrame: the `sightline` Python package
against Holistic Trace Analysis (HTA), side by side in one run (BENCHMARKS.md, "Python package
against HTA and nsys stats").

usage: python3 benches/hta_kernels.py TRACE [--runs N] [--sightline-python PY] [--hta-python PY]

Each run of each measure is a fresh Python process under `/usr/bin/time -f "%e s %M KB"` (wall
time and peak RSS of the whole process: interpreter start, imports, parse, the frame):

- `sightline`: `import sightline; t = sightline.open(T); df = t.sql("select * from kernels")`,
  in the package's environment (default target/python-venv);
- `HTA trace_files`: `TraceAnalysis(trace_files={0: LINK}, trace_dir=DIR,
  include_last_profiler_step=True)`, then rank 0's frame (`ta.t.get_trace(0)`), its kernel rows
  (`stream >= 0`, `correlation >= 0`, category "kernel") and their names resolved through
  `ta.t.symbol_table`: the frame python/tests/test_hta.py compares with ours. DIR is a temporary
  folder holding a link LINK to the trace; HTA's environment defaults to target/hta-venv (the
  one that test makes: HTA 0.5.0, pandas < 3);
- `HTA trace_dir`: the same with `TraceAnalysis(trace_dir=DIR, …)`, what HTA's documentation
  shows; HTA then finds the rank by reading the file line by line for `"rank": N` (to its end
  when, as here, there is no `distributedInfo`).

The runs alternate (sightline, HTA trace_files, HTA trace_dir, sightline, …). Before each run the
machine must be quiet: no `rustc` running, a 1-minute load average under 1.5 and the CPUs less
than 10 % busy over 2 s; otherwise it waits (polling every 20 s) and says so. After each run it
prints the CPU seconds other processes used during it (all CPUs' busy time from /proc/stat less
the run's own user + system time), to show what shared the machine. Each side prints its kernel
count, checked equal.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SIGHTLINE = """
import sys, sightline
t = sightline.open(sys.argv[1])
df = t.sql("select * from kernels")
print(len(df))
"""

HTA = """
import logging, os, sys, tempfile
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis
trace, how = os.path.abspath(sys.argv[1]), sys.argv[2]
with tempfile.TemporaryDirectory() as folder:
    link = os.path.join(folder, os.path.basename(trace))
    os.symlink(trace, link)
    if how == "trace_files":
        ta = TraceAnalysis(trace_files={0: link}, trace_dir=folder, include_last_profiler_step=True)
    else:
        ta = TraceAnalysis(trace_dir=folder, include_last_profiler_step=True)
    df = ta.t.get_trace(0)
    names = ta.t.symbol_table.get_sym_table()
    kernel = [i for i, s in enumerate(names) if s.lower() == "kernel"]
    kernels = df.loc[(df["stream"] >= 0) & (df["correlation"] >= 0) & df["cat"].isin(kernel),
                     ["name", "ts", "dur"]].copy()
    kernels["name"] = [names[i] for i in kernels["name"]]
print(len(kernels))
"""


def busy_seconds():
    """CPU seconds spent busy (not idle, not waiting on I/O) by all the CPUs since boot."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def quiet():
    """Waits until no rustc runs, the 1-minute load average is under 1.5 and the CPUs were less
    than 10 % busy over the last 2 s; returns the load average."""
    while True:
        rustc = subprocess.run(["pgrep", "-c", "rustc"], capture_output=True, text=True).stdout.strip()
        load = float(Path("/proc/loadavg").read_text().split()[0])
        before = busy_seconds()
        time.sleep(2)
        busy = (busy_seconds() - before) / 2 / os.cpu_count()
        if rustc in ("", "0") and load < 1.5 and busy < 0.1:
            return load
        print(f"  waiting: rustc processes {rustc or 0}, load average {load}, CPUs {busy:.0%} busy",
              file=sys.stderr, flush=True)
        time.sleep(20)


def timed(argv):
    """(seconds, peak KB, stdout, CPU seconds other processes used meanwhile) of one fresh process
    under /usr/bin/time."""
    busy = busy_seconds()
    done = subprocess.run(["/usr/bin/time", "-f", "%e s %M KB %U %S", *argv], capture_output=True, text=True)
    busy = busy_seconds() - busy
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv[:3])}… failed:\n{done.stderr}")
    seconds, kb, user, system = re.findall(r"^([\d.]+) s (\d+) KB ([\d.]+) ([\d.]+)$", done.stderr, re.M)[-1]
    return float(seconds), int(kb), done.stdout.strip(), busy - float(user) - float(system)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sightline-python", default=str(REPO / "target/python-venv/bin/python"))
    parser.add_argument("--hta-python", default=str(REPO / "target/hta-venv/bin/python"))
    args = parser.parse_args()

    measures = {
        "sightline": [args.sightline_python, "-c", SIGHTLINE, args.trace],
        "HTA trace_files": [args.hta_python, "-c", HTA, args.trace, "trace_files"],
        "HTA trace_dir": [args.hta_python, "-c", HTA, args.trace, "trace_dir"],
    }
    runs = {m: [] for m in measures}
    print(f"{args.trace}: {os.path.getsize(args.trace) / 1e6:.1f} MB on disk, {args.runs} runs each")
    for n in range(args.runs):
        for what, argv in measures.items():
            load = quiet()
            seconds, kb, said, others = timed(argv)
            runs[what].append((seconds, kb, said, load))
            print(f"  run {n + 1} {what:16} {seconds:7.2f} s {kb / 1024:8.1f} MiB  kernels {said}"
                  f"  (load average before {load:.2f}; other processes meanwhile {others:.1f} CPU s)",
                  flush=True)
    kernels = {r[2] for rs in runs.values() for r in rs}
    if len(kernels) != 1:
        sys.exit(f"the kernel counts differ: {kernels}")
    median = {m: statistics.median(r[0] for r in rs) for m, rs in runs.items()}
    peak = {m: max(r[1] for r in rs) / 1024 for m, rs in runs.items()}
    print(f"\n{'':16} {'median':>8} {'runs':>22} {'peak RSS':>10}   ×sightline (time, memory)")
    for m, rs in runs.items():
        all_runs = ", ".join(f"{r[0]:.2f}" for r in rs)
        print(f"{m:16} {median[m]:7.2f}s {all_runs:>22} {peak[m]:6.0f} MiB   "
              f"{median[m] / median['sightline']:5.1f}x  {peak[m] / peak['sightline']:5.1f}x")
    print(f"{kernels.pop()} kernels on every side; load average after: "
          f"{' '.join(Path('/proc/loadavg').read_text().split()[:3])}")


if __name__ == "__main__":
    main()
