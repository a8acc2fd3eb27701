"""Sightline from Python: the same engine as the ``sightline`` command line, linked in.

``sightline.open(path)`` loads any trace the command line opens (an nsys export or report, a
PyTorch profiler trace, a JAX profile) with the GIL released; ``Trace.sql`` runs a query over the
views of ``sightline sql``, ``Trace.report`` computes a report of ``summary --report NAME``,
``Trace.analyze`` a rule of ``analyze --rule NAME``, ``sightline.ncu(path).raw()`` reads an
Nsight Compute report's raw page, and ``sightline.ranks(paths)`` analyses a run of ranks as
``sightline ranks`` does. Every answer is a pandas DataFrame. The logic is all in Rust
(``sightline._sightline``); this layer only converts.
"""

import html as _html
import os as _os

from . import _sightline
from ._frame import frame as _frame
from ._sightline import SightlineError

__all__ = ["NcuReport", "SightlineError", "Run", "Trace", "ncu", "open", "ranks", "reports", "rules", "__version__"]
__version__ = _sightline.version()


def reports():
    """The names ``Trace.report`` takes, in the order ``summary --report all`` prints them."""
    return list(_sightline.reports())


def rules():
    """The names ``Trace.analyze`` takes, in the order ``analyze --rule all`` runs them."""
    return list(_sightline.rules())


def open(path):  # noqa: A001 - the package's verb, as ``sightline TRACE`` opens one
    """Loads the trace at ``path`` (raises ``SightlineError`` with Sightline's message)."""
    return Trace(_sightline.open(_os.fspath(path)))


def ranks(paths, collectives=None, align="recorded", cache=True):
    """The traces of one run's ranks (a list of paths, a folder of them, or a folder of
    digests), aligned on one clock as ``sightline ranks`` aligns them."""
    if isinstance(paths, (str, bytes, _os.PathLike)):
        paths = [paths]
    paths = [_os.fspath(p) for p in paths]
    return Run(_sightline.ranks(paths, collectives, align, bool(cache)))


def ncu(path):
    """Loads an Nsight Compute report (``.ncu-rep``, ``.ncu-rep.gz``, ``.ncu-repz``)."""
    return NcuReport(_sightline.ncu(_os.fspath(path)))


def _spec(name, options):
    """``name:opt[=value]…`` as ``summary --report`` takes it: ``True`` is a flag."""
    parts = [name]
    for key, value in options.items():
        if value is None or value is False:
            continue
        parts.append(key if value is True else f"{key}={value}")
    return ":".join(parts)


class Trace:
    """A loaded trace. Immutable; queries and reports may run from several threads."""

    def __init__(self, handle):
        self._handle = handle
        info, warnings = _sightline.trace_info(handle)
        self._info = dict(info)
        self._warnings = list(warnings)

    @property
    def path(self):
        return self._info["path"]

    @property
    def format(self):
        """``nsys``, ``pytorch``, ``xplane`` or ``ncu``."""
        return self._info["kind"]

    @property
    def warnings(self):
        """What the loader skipped or repaired (``summary`` prints these on stderr)."""
        return list(self._warnings)

    def info(self):
        """Format, path, span, GPUs and event counts, as a dict."""
        return {k: v for k, v in self._info.items() if k != "kind"}

    def sql(self, query, output="pandas", limit=None, timeout_s=30.0):
        """Runs a read-only query over the views of ``sightline sql`` (``kernels``, ``memcpy``,
        ``memset``, ``api``, ``ranges``, ``threads``, ``gpus``, ``gaps``, …). Integers are
        int64 (nullable ``Int64`` where a value is NULL), reals float64, text categorical.
        ``output="arrow"`` gives a ``pyarrow.Table`` (pyarrow must be installed)."""
        df = _frame(_sightline.trace_sql(self._handle, query, limit, float(timeout_s)))
        return _output(df, output)

    def report(self, name, output="pandas", **options):
        """The report ``name`` (see ``sightline.reports()``) as ``sightline summary TRACE
        --report NAME --format csv`` prints it: the same columns in the same order, the same
        rows, full values. ``options`` are the report's own (``t.report("cuda_gpu_kern_sum",
        base=True)`` is ``--report cuda_gpu_kern_sum:base``). A report the trace has no data
        for has no rows."""
        return _output(_frame(_sightline.trace_report(self._handle, _spec(name, options))), output)

    def analyze(self, rule, **options):
        """The rule ``rule`` (see ``sightline.rules()``) as ``sightline analyze TRACE --rule
        RULE --format csv`` prints it (``t.analyze("gpu_gaps", gap=1)`` is ``--rule
        gpu_gaps:gap=1``); no rows where the rule finds nothing."""
        return _frame(_sightline.trace_rule(self._handle, _spec(rule, options)))

    def gaps(self, min_ns=100_000, per_stream=False, causes=False):
        """The GPU's idle gaps of at least ``min_ns``, longest first, as ``sightline gaps
        --format csv --min NS`` lists them (``causes=True``: ``--causes``)."""
        return _frame(_sightline.trace_gaps(self._handle, int(min_ns), bool(per_stream), bool(causes)))

    def __repr__(self):
        i = self.info()
        return (
            f"<sightline.Trace {i['format']}: {i['path']}, span {i['span_ns']} ns, "
            f"GPUs [{i['gpus']}], {i['kernels']} kernels, {i['memcpy']} memcpy, "
            f"{i['api']} API calls, {i['ranges']} ranges>"
        )

    def _repr_html_(self):
        rows = "".join(
            f"<tr><th style='text-align:left'>{_html.escape(k)}</th>"
            f"<td style='text-align:left'>{_html.escape(str(v))}</td></tr>"
            for k, v in self.info().items()
        )
        return f"<table><caption>sightline.Trace</caption>{rows}</table>"


class Run:
    """A run of ranks on one clock (``sightline.ranks``)."""

    def __init__(self, handle):
        self._handle = handle
        self._clock, self._ranks = _sightline.run_info(handle)

    @property
    def clock(self):
        """How the ranks were put on one clock, in words."""
        return self._clock

    def ranks(self):
        """``(rank, trace path)`` pairs, in the table's order."""
        return list(self._ranks)

    def table(self):
        """The per-rank table of ``sightline ranks --format csv``."""
        return _frame(_sightline.run_table(self._handle))

    def collectives(self):
        """Every collective matched across ranks with each rank's arrival (``--instances``)."""
        return _frame(_sightline.run_instances(self._handle))

    def __repr__(self):
        return f"<sightline.Run of {len(self.ranks())} ranks; clock: {self.clock}>"


class NcuReport:
    """An Nsight Compute report (``sightline.ncu``)."""

    def __init__(self, handle):
        self._handle = handle

    def __len__(self):
        return _sightline.ncu_kernels(self._handle)

    def raw(self):
        """ncu's raw page as ``summary R --report ncu_raw --print-units base`` prints it: a row
        per profiled kernel, the fixed columns, then a column per metric in base units (full
        values; the page rounds to two decimals). ``attrs["units"]`` maps columns to units."""
        columns, units = _sightline.ncu_raw(self._handle)
        df = _frame(columns)
        df.attrs["units"] = dict(units)
        return df

    def __repr__(self):
        return f"<sightline.NcuReport: {len(self)} kernels>"


def _output(df, output):
    if output == "pandas":
        return df
    if output == "arrow":
        try:
            import pyarrow
        except ImportError as e:
            raise SightlineError("output='arrow' needs pyarrow (pip install pyarrow)") from e
        return pyarrow.Table.from_pandas(df, preserve_index=False)
    raise SightlineError(f"output takes 'pandas' or 'arrow' (got {output!r})")
