"""``Trace.sql(query)`` against ``sightline sql TRACE QUERY --format csv``: the same columns and
rows, integers as int64, names as categoricals; and the errors the command line gives."""

import pytest

import sightline
from compare import assert_frame_matches_csv
from conftest import FIXTURES, SHARED, count, csv_rows, fixture_pytorch, run_cli, shared_traces, trace_id

QUERIES = [
    "select * from kernels",
    "select * from memcpy",
    "select * from api order by start limit 2000",
    "select * from ranges",
    "select * from gpus",
    "select * from gaps",
    "select name, count(*) as n, sum(end - start) as total_ns, avg(end - start) as avg_ns "
    "from kernels group by name order by total_ns desc",
]

TRACES = [FIXTURES / "moe.sqlite", FIXTURES / "stress.sqlite", FIXTURES / "cpu_side.sqlite"]
TRACES += fixture_pytorch()[:3] + [p for p in shared_traces() if p.name.startswith(("NVIDIA_Fuser", "kt_train."))]


@pytest.mark.parametrize("path", TRACES, ids=trace_id)
def test_queries_equal_the_command_line(path):
    t = sightline.open(path)
    for query in QUERIES:
        done = run_cli("sql", path, query, "--format", "csv", check=False)
        if done.returncode != 0:
            with pytest.raises(sightline.SightlineError):
                t.sql(query)
            count("queries refused on both sides")
            continue
        rows = assert_frame_matches_csv(t.sql(query), csv_rows(done.stdout.decode()), f"{path.name}: {query}")
        count("queries compared")
        count("query rows compared", rows)


def test_kernels_are_typed():
    df = sightline.open(FIXTURES / "moe.sqlite").sql("select * from kernels")
    assert len(df) > 0
    assert str(df["start"].dtype) == "int64"
    assert str(df["end"].dtype) == "int64"
    assert str(df["name"].dtype) == "category"
    assert (df["end"] >= df["start"]).all()


def test_arrow_output():
    # tests/python_package.rs installs pyarrow; elsewhere this test needs it installed.
    pa = pytest.importorskip("pyarrow")
    t = sightline.open(FIXTURES / "moe.sqlite")
    df = t.sql("select * from kernels")
    table = t.sql("select * from kernels", output="arrow")
    assert isinstance(table, pa.Table)
    assert table.column_names == list(df.columns)
    assert table.num_rows == len(df) > 0
    assert table.column("start").to_pylist() == df["start"].tolist()
    assert table.schema.field("start").type == pa.int64()


@pytest.mark.parametrize(
    "query",
    ["select * from no_such_view", "delete from kernels", "create table x(a int)", "attach database 'x.db' as x"],
)
def test_sql_errors_are_the_command_lines(query):
    path = FIXTURES / "moe.sqlite"
    done = run_cli("sql", path, query, check=False)
    assert done.returncode != 0
    t = sightline.open(path)
    with pytest.raises(sightline.SightlineError) as raised:
        t.sql(query)
    # The command line's own words (it prefixes `sightline: `).
    assert f"sightline: {raised.value}" in done.stderr.decode()
    # The trace is still usable after an error.
    assert len(t.sql("select * from kernels limit 3")) == 3
    count("refused queries compared")
