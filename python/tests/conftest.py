"""Shared by the package's tests: the repository, the command line used as the oracle, and the
traces compared.

The oracle is the ``sightline`` binary built from the same checkout (``SIGHTLINE_BIN``, set by
``tests/python_package.rs``; else ``target/release/sightline``): the tests may run it, the package
never does. Digests go to a scratch cache so that neither side reads the other's.
"""

import csv
import io
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
SHARED = REPO.parent / "shared" / "traces"


def sightline_bin():
    return Path(os.environ.get("SIGHTLINE_BIN", REPO / "target" / "release" / "sightline"))


@pytest.fixture(scope="session", autouse=True)
def scratch_cache(tmp_path_factory):
    os.environ["SIGHTLINE_CACHE_DIR"] = str(tmp_path_factory.mktemp("sightline-cache"))


def run_cli(*args, check=True):
    """The command line's stdout (UTF-8); raises with its stderr when it fails and ``check``."""
    done = subprocess.run(
        [str(sightline_bin()), *map(str, args)], capture_output=True, env=os.environ.copy()
    )
    if check and done.returncode != 0:
        raise AssertionError(f"sightline {' '.join(map(str, args))}: {done.stderr.decode()}")
    return done


def csv_rows(text):
    return list(csv.reader(io.StringIO(text)))


def fixture_exports():
    """Every nsys export and report among the fixtures (the nccl ranks too)."""
    paths = sorted(FIXTURES.glob("*.sqlite")) + sorted((FIXTURES / "nccl").glob("*.sqlite"))
    return paths + sorted(FIXTURES.glob("*.nsys-rep"))


def fixture_pytorch():
    """Every PyTorch profiler trace among the fixtures."""
    return sorted(p for p in FIXTURES.rglob("*.pt.trace.json*") if "golden" not in p.parts)


def shared_traces():
    """Every nsys export and PyTorch trace of ../shared/traces (when it is beside the checkout)."""
    if not SHARED.is_dir():
        print("../shared/traces not present: only the fixtures are checked")
        return []
    return sorted(SHARED.glob("*.sqlite")) + sorted((SHARED / "pytorch").glob("*.json.gz"))


def all_traces():
    return fixture_exports() + fixture_pytorch() + shared_traces()


def trace_id(path):
    return str(Path(path).relative_to(REPO.parent)) if REPO.parent in Path(path).parents else str(path)


# What was compared, printed at the end of the run (the Rust test repeats it).
COUNTS = {}


def count(what, n=1):
    COUNTS[what] = COUNTS.get(what, 0) + n


def pytest_terminal_summary(terminalreporter):
    if COUNTS:
        terminalreporter.write_line("compared: " + "; ".join(f"{k}: {v}" for k, v in sorted(COUNTS.items())))
