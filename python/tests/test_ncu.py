"""``sightline.ncu(R).raw()`` against ``sightline summary R --report ncu_raw --print-units base``:
the same columns, the units row as ``attrs["units"]``, and every number equal to the printed one
within its printed precision (the page prints thousands separators and two decimals), for the
fixture report and the shared ones."""

import pytest

import sightline
from compare import assert_frame_matches_csv
from conftest import FIXTURES, SHARED, count, csv_rows, run_cli, trace_id

REPORTS = [FIXTURES / "ncu_kt_pair.ncu-repz"]
if (SHARED / "ncu").is_dir():
    REPORTS += sorted(p for p in (SHARED / "ncu").iterdir() if p.name.endswith((".ncu-rep", ".ncu-repz", ".ncu-rep.gz")))


@pytest.mark.parametrize("path", REPORTS, ids=trace_id)
def test_raw_page_equals_the_command_line(path):
    text = run_cli("summary", path, "--report", "ncu_raw", "--print-units", "base").stdout.decode()
    rows = csv_rows(text)
    df = sightline.ncu(path).raw()
    assert list(df.attrs["units"].values()) == rows[1]
    n = assert_frame_matches_csv(df, [rows[0]] + rows[2:], path.name, separators=True, all_fixed=True)
    assert n == len(sightline.ncu(path)) > 0
    count("ncu reports compared")
    count("ncu kernels compared", n)


def test_a_trace_is_not_an_ncu_report():
    with pytest.raises(sightline.SightlineError, match="not an Nsight Compute report"):
        sightline.ncu(FIXTURES / "moe.sqlite")


# Units as ncu scales them on the small reports; base units (the same rows) on every report.
PAGES = [(p, "base") for p in REPORTS] + [(p, "auto") for p in REPORTS if p.stat().st_size < 20 << 20]
# The raw page's fixed columns (ID … CC, without NVTX): every row of a details table has them;
# the NUMA table (5 columns) and the NVLink note (1) do not.
FIXED = 13


def split_page(rows):
    """A page's table (header, then its rows padded to the header's width: ncu ends a metric
    row before the rule columns) and its other lines (not blank)."""
    width = len(rows[0])
    table = [rows[0]] + [row + [""] * (width - len(row)) for row in rows[1:] if FIXED <= len(row) <= width]
    return table, [row for row in rows[1:] if row and not FIXED <= len(row) <= width]


@pytest.mark.parametrize("path,units", PAGES, ids=lambda x: trace_id(x) if not isinstance(x, str) else x)
def test_details_and_summary_pages_equal_the_command_line(path, units):
    r = sightline.ncu(path)
    for page, df in (("ncu_details", r.details(print_units=units)), ("ncu_summary", r.summary(print_units=units))):
        text = run_cli("summary", path, "--report", page, "--format", "csv", "--print-units", units).stdout.decode()
        table, other = split_page(csv_rows(text))
        n = assert_frame_matches_csv(df, table, f"{path.name} {page} {units}", separators=True)
        assert n > 0
        assert df.attrs["other_lines"] == other
        if page == "ncu_details":
            assert df["Metric Value"].notna().sum() > n // 2, "metric rows lost their values"
        count(f"ncu {page} pages compared")
        count(f"ncu {page} rows compared", n)


def test_details_of_one_launch_equal_the_command_line():
    path = FIXTURES / "ncu_kt_pair.ncu-repz"
    text = run_cli("summary", path, "--report", "ncu_details", "--format", "csv", "--kernel", "gemm", "--launch", "1")
    df = sightline.ncu(path).details(kernel="gemm", launch=1)
    table, _ = split_page(csv_rows(text.stdout.decode()))
    assert_frame_matches_csv(df, table, "details of one launch", separators=True)
    assert df["ID"].nunique() == 1
    with pytest.raises(sightline.SightlineError, match="details and source pages"):
        sightline.ncu(path)._page("ncu_summary", "auto", "gemm", None)


def _source_blocks(text):
    """ncu's Source page (``--print-source sass``) as a list of (kernel name, header, rows)."""
    blocks = []
    for row in csv_rows(text):
        if row and row[0] == "Kernel Name":
            blocks.append([row[1], None, []])
        elif blocks and blocks[-1][1] is None:
            blocks[-1][1] = row
        elif blocks:
            blocks[-1][2].append(row)
    return blocks


# Its PyTorch and cuBLAS kernels (SASS only), and our own kernels built with -lineinfo and
# captured with the Source Counters.
SOURCE_REPORTS = [FIXTURES / "ncu_kt_pair.ncu-repz"]
if (SHARED / "ncu").is_dir():
    SOURCE_REPORTS += [SHARED / "ncu" / "ncu_lineinfo.ncu-rep.gz"]


@pytest.mark.parametrize("path", SOURCE_REPORTS, ids=trace_id)
def test_source_page_equals_the_command_line(path, monkeypatch):
    # The package finds the disassembler the nvidia-cuda-nvdisasm package installed into this
    # environment (tests/python_package.rs installs it) and names it for the command line too.
    monkeypatch.delenv("SIGHTLINE_NVDISASM", raising=False)
    found = sightline._find_nvdisasm()
    assert found, "no nvdisasm for NcuReport.source: pip install nvidia-cuda-nvdisasm"
    monkeypatch.setenv("SIGHTLINE_NVDISASM", found)
    r = sightline.ncu(path)
    compared = 0
    # Each call disassembles its kernel afresh (nvdisasm starts in a third of a second): twelve
    # launches spread over the report, its first and last among them.
    launches = sorted({round(i * (len(r) - 1) / 11) for i in range(12)})
    for launch in launches:
        text = run_cli("summary", path, "--report", "ncu_source", "--launch", launch, "--format", "csv")
        blocks = _source_blocks(text.stdout.decode())
        df = r.source(launch=launch)
        if not blocks:
            assert len(df) == 0
            continue
        # ncu prints a kernel's block once per source message of its module: the copies are equal.
        name, header, rows = blocks[0]
        assert all(b[1:] == [header, rows] for b in blocks[1:])
        assert set(df["Kernel Name"]) == {name}
        assert df["ID"].nunique() == 1
        ours = df[header].copy()
        ours["Address"] = [f"0x{a:x}" for a in ours["Address"]]
        assert_frame_matches_csv(ours, [header] + rows, f"{path.name} launch {launch}")
        compared += 1
        count("ncu source kernels compared")
        count("ncu source instructions compared", len(rows))
    assert compared > 0
    # One frame for several kernels: each kernel's rows, in ID order.
    both = r.source(launch=None)
    assert list(both["ID"].unique()) == sorted(both["ID"].unique())


def test_source_needs_a_kernel_that_exists():
    with pytest.raises(sightline.SightlineError, match="no kernel"):
        sightline.ncu(FIXTURES / "ncu_kt_pair.ncu-repz").source(kernel="no_such_kernel")


JOINS = [(FIXTURES / "kt_pair.pt.trace.json.gz", FIXTURES / "ncu_kt_pair.ncu-repz")]
if (SHARED / "ncu").is_dir():
    JOINS += [
        (SHARED / "ncu" / "nsys_moe.sqlite", SHARED / "ncu" / "ncu_moe_dram.ncu-rep.gz"),
        (SHARED / "ncu" / "nsys_train.sqlite", SHARED / "ncu" / "ncu_train_gemm.ncu-rep.gz"),
    ]


@pytest.mark.parametrize("pair", JOINS, ids=lambda p: p[1].name)
def test_attach_ncu_equals_ncu_join(pair):
    trace, report = pair
    text = run_cli("summary", trace, "--ncu", report, "--report", "ncu_join", "--format", "csv")
    t = sightline.open(trace)
    df = t.attach_ncu(report)
    n = assert_frame_matches_csv(df, csv_rows(text.stdout.decode()), f"{trace.name} + {report.name}")
    assert df["Matched"].dtype == bool and df.attrs["matched"] == int(df["Matched"].sum()) > 0
    assert f"{df.attrs['matched']} of {n} profiled kernels matched" in text.stderr.decode()
    assert t.ncu is not None and len(t.ncu) == n
    count("ncu joins compared")
    count("ncu join rows compared", n)
