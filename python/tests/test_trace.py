"""Opening, describing and the errors of ``sightline.open``, and ``Trace.gaps`` against
``sightline gaps --format csv``."""

import pytest

import sightline
from compare import assert_frame_matches_csv
from conftest import FIXTURES, count, csv_rows, fixture_pytorch, run_cli


def test_repr_says_format_gpus_and_counts():
    t = sightline.open(FIXTURES / "moe.sqlite")
    kernels = len(t.sql("select * from kernels"))
    text = repr(t)
    assert "Nsight Systems export" in text and f"{kernels} kernels" in text
    html = t._repr_html_()
    assert "<table>" in html and str(kernels) in html
    assert t.format == "nsys"
    assert sightline.open(fixture_pytorch()[0]).format == "pytorch"


def test_reports_lists_the_registry():
    names = sightline.reports()
    assert "cuda_gpu_kern_sum" in names and "torch_ops" in names
    # The same list `summary --help` documents... and every name opens as a report.
    t = sightline.open(FIXTURES / "moe.sqlite")
    for name in names:
        t.report(name)


@pytest.mark.parametrize("min_ns,causes", [(100_000, False), (1_000, True)])
@pytest.mark.parametrize("trace", ["moe.sqlite", "stress.sqlite", "kt_pair.pt.trace.json.gz"])
def test_gaps_equal_the_command_line(trace, min_ns, causes):
    path = FIXTURES / trace
    args = ["gaps", path, "--format", "csv", "--min", str(min_ns)] + (["--causes"] if causes else [])
    text = run_cli(*args).stdout.decode()
    df = sightline.open(path).gaps(min_ns=min_ns, causes=causes)
    assert_frame_matches_csv(df, csv_rows(text), f"{trace} gaps")
    count("gap lists compared")


def test_errors_carry_sightlines_message(tmp_path):
    missing = tmp_path / "missing.sqlite"
    with pytest.raises(sightline.SightlineError, match="file not found"):
        sightline.open(missing)
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes((FIXTURES / "moe.sqlite").read_bytes()[:5000])
    done = run_cli("summary", damaged, check=False)
    assert done.returncode != 0
    with pytest.raises(sightline.SightlineError) as raised:
        sightline.open(damaged)
    # The same words the command line says.
    assert str(raised.value) in done.stderr.decode()
    with pytest.raises(sightline.SightlineError, match="unknown report"):
        sightline.open(FIXTURES / "moe.sqlite").report("no_such_report")
    with pytest.raises(sightline.SightlineError, match="unknown option"):
        sightline.open(FIXTURES / "moe.sqlite").report("cuda_gpu_kern_sum", nonsense=True)
