"""``Trace.sql("select * from kernels")`` against Holistic Trace Analysis' kernel frame on every
PyTorch profiler trace of ``tests/fixtures`` and of ``../shared/traces/pytorch`` (22 traces,
57,884 kernels when ../shared is beside the checkout; 10 traces and 35,850 kernels without it):
the same number of kernels, the same names (as a multiset), and, kernel by kernel in start order,
the same start and duration once ours are rounded as HTA rounds them.

HTA 0.5 (HolisticTraceAnalysis, the anchor the issue names) needs pandas < 3 and this environment
has pandas 3, so HTA runs in a scratch virtual environment beside this one
(``target/hta-venv``), made and filled by pip on the first run (about a minute) and reused after;
``hta_kernels.py`` runs there, once for all the traces (about 25 s on the 2-core development
machine). No trace is left out: HTA 0.5 reads all 22 (each as rank 0 through ``trace_files=``, see
``hta_kernels.py``). Without pip access to HTA the test fails, saying so.
"""

import collections
import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import sightline
from conftest import SHARED, count, fixture_pytorch, trace_id

HTA_VENV = Path(sys.prefix).parent / "hta-venv"
# 0.5.0 is the release whose parser the rounding rule below was read from (`round_down_time_stamps`
# in hta/common/trace_parser.py), and the one tests/critical_path.rs runs; HTA needs pandas < 3.
HTA_PACKAGES = ["holistictraceanalysis==0.5.0", "pandas<3"]
HTA_SCRIPT = Path(__file__).with_name("hta_kernels.py")

# Traces HTA cannot read, with the reason: none. (Traces of rank N > 0, and traces with no
# `distributedInfo`, are read by naming the rank: see hta_kernels.py.)
HTA_CANNOT_READ = {}


def pytorch_traces():
    shared = sorted((SHARED / "pytorch").glob("*.json.gz")) if SHARED.is_dir() else []
    return fixture_pytorch() + shared


def _hta_python():
    """HTA's venv's Python, made (``python -m venv`` + pip) when ``import hta`` fails there."""
    python = HTA_VENV / "bin" / "python"

    def importable():
        return python.exists() and subprocess.run([python, "-c", "import hta"], capture_output=True).returncode == 0

    if importable():
        return python
    made = subprocess.run([sys.executable, "-m", "venv", HTA_VENV], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.fail(f"python -m venv {HTA_VENV} failed: {made.stderr}")
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *HTA_PACKAGES]
    got = subprocess.run(pip, capture_output=True, text=True)
    if got.returncode != 0 or not importable():
        pytest.fail(
            f"HTA is this test's oracle and could not be installed: `pip install {' '.join(HTA_PACKAGES)}` "
            f"into {HTA_VENV} failed (no access to the package registry?):\n{got.stdout}{got.stderr}"
        )
    return python


@pytest.fixture(scope="session")
def hta_frames(tmp_path_factory):
    """{trace: (what hta_kernels.py said, HTA's kernel rows)}: HTA run once for every trace."""
    python = _hta_python()
    traces = pytorch_traces()
    out = tmp_path_factory.mktemp("hta-kernels")
    done = subprocess.run(
        [python, HTA_SCRIPT, out, *map(str, traces)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{HTA_SCRIPT.name} failed:\n{done.stderr}"
    said = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(said) == len(traces), f"{HTA_SCRIPT.name} answered for {len(said)} of {len(traces)} traces:\n{done.stderr}"
    print(f"HTA: {said[0]['versions']}")
    frames = {}
    for i, (trace, result) in enumerate(zip(traces, said)):
        rows = None
        if "error" not in result:
            rows = pd.read_csv(out / f"{i}.csv", dtype={"name": str}, keep_default_na=False)
        frames[trace] = (result, rows)
    return frames


def hta_rounded(start_ns, end_ns):
    """Our kernel's (start, duration) in whole µs as HTA 0.5 makes them.

    HTA keeps whole µs. A trace whose `ts` are fractional (Kineto since PyTorch 2.3 writes them to
    the ns: `"ts": 4738408380714.665, "dur": 5.985`) goes through `round_down_time_stamps`
    (hta/common/trace_parser.py): start = ceil(ts), end = floor(ts + dur) in float64 µs, dur =
    end - start. Neither rounding nor truncating the duration: a 5.985 µs kernel is 4 or 5 µs
    depending on where it starts, and a kernel under 1 µs that crosses no whole µs is 0 µs, or
    -1 µs when it starts and ends inside the same µs. A trace with whole-µs `ts` (older Kineto,
    HTA's own samples) keeps `ts` and `dur` as written, which the same formulas give back. Our
    start and end are the trace's text in ns, exactly; ``start_ns / 1000`` on Python ints is the
    correctly rounded float64, the float Python's JSON parser makes of the same text, so the
    float sum is HTA's to the bit.
    """
    ts_us = start_ns / 1000
    start_us = math.ceil(ts_us)
    return start_us, math.floor(ts_us + (end_ns - start_ns) / 1000) - start_us


@pytest.mark.parametrize("trace", pytorch_traces(), ids=trace_id)
def test_kernels_equal_htas_kernel_frame(trace, hta_frames):
    result, hta = hta_frames[trace]
    if trace.name in HTA_CANNOT_READ:
        assert "error" in result, f"HTA now reads {trace.name}: drop it from HTA_CANNOT_READ"
        count("traces HTA cannot read")
        return
    assert "error" not in result, f"HTA failed on {trace_id(trace)}:\n{result.get('traceback')}"

    ours = sightline.open(trace).sql("select * from kernels")
    where = trace_id(trace)
    assert len(ours) == len(hta), f"{where}: {len(ours)} kernels, HTA {len(hta)}"
    names_ours = collections.Counter(ours["name"].astype(str))
    names_hta = collections.Counter(hta["name"])
    assert names_ours == names_hta, (
        f"{where}: names differ: only ours {list((names_ours - names_hta).items())[:3]}, "
        f"only HTA's {list((names_hta - names_ours).items())[:3]}"
    )

    # Paired in start order. HTA's ts count from its own origin (`_align_all_ranks` subtracts the
    # trace's earliest ts, `min_ts`); kernels starting in the same µs (other streams) are ordered
    # by correlation id, which both sides keep as written.
    rounded = [hta_rounded(s, e) for s, e in zip(ours["start"].tolist(), ours["end"].tolist())]
    ours_rows = sorted(
        (start, corr, name, dur)
        for (start, dur), corr, name in zip(rounded, ours["correlation"].tolist(), ours["name"].astype(str))
    )
    hta_rows = sorted(
        (int(ts) + result["min_ts"], int(corr), name, float(dur))
        for ts, corr, name, dur in zip(hta["ts"], hta["correlation"], hta["name"], hta["dur"])
    )
    differ = [(a, b) for a, b in zip(ours_rows, hta_rows) if a != b]
    assert not differ, (
        f"{where}: {len(differ)} of {len(hta_rows)} kernels differ from HTA's "
        f"(start µs, correlation, name, dur µs; ours, HTA's): {differ[:3]}"
    )
    count("HTA traces compared")
    count("HTA kernels compared", len(hta_rows))
