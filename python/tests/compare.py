"""Compares a DataFrame of the package with the CSV the command line prints for the same thing:
the same columns in the same order, the same rows, each number equal to the printed one within
its printed precision (exactly, where the command line prints a float in full), empty cells
where the frame has none (NA/NaN)."""

import math

import pandas as pd


def _decimals(text):
    if "." not in text or "e" in text.lower():
        return None
    return len(text.split(".", 1)[1])


def _is_null(value):
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _check_float(value, text, fixed, where, separators=False):
    if text == "":
        assert _is_null(value), f"{where}: {value!r} where the command line prints nothing"
        return
    if separators:
        text = text.replace(",", "")
    if text == "nan":
        assert _is_null(value), f"{where}: {value!r} where the command line prints nan"
        return
    printed = float(text)
    d = _decimals(text)
    if fixed and d is not None:
        tolerance = 0.5 * 10.0 ** -d * (1 + 1e-9) + 1e-12 * abs(printed)
        assert abs(value - printed) <= tolerance, f"{where}: {value!r} vs printed {text!r}"
    else:
        assert value == printed, f"{where}: {value!r} vs printed {text!r}"


def _text_of(value):
    if _is_null(value):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def assert_frame_matches_csv(df, rows, where, separators=False, all_fixed=False):
    """``rows``: the command line's CSV (header first). ``separators``: numbers are printed with
    thousands separators (ncu's pages); ``all_fixed``: every float is printed rounded."""
    header, body = rows[0], rows[1:]
    assert list(df.columns) == header, f"{where}: columns {list(df.columns)} vs {header}"
    assert len(df) == len(body), f"{where}: {len(df)} rows vs {len(body)} printed"
    fixed = df.attrs.get("decimals", {})
    for j, name in enumerate(header):
        column = df.iloc[:, j]
        texts = [r[j] if j < len(r) else "" for r in body]
        at = f"{where}, column {name!r}"
        kind = column.dtype
        rounded = all_fixed or name in fixed
        if pd.api.types.is_integer_dtype(kind):
            for i, (v, t) in enumerate(zip(column.tolist(), texts)):
                if t == "":
                    assert _is_null(v), f"{at}, row {i}: {v!r} where nothing is printed"
                else:
                    printed = int(t.replace(",", "") if separators else t)
                    assert v == printed, f"{at}, row {i}: {v!r} vs printed {t!r}"
        elif pd.api.types.is_float_dtype(kind):
            for i, (v, t) in enumerate(zip(column.tolist(), texts)):
                _check_float(v, t, rounded, f"{at}, row {i}", separators)
        else:
            for i, (v, t) in enumerate(zip(column.tolist(), texts)):
                if isinstance(v, int) and not isinstance(v, bool):
                    printed = int(t.replace(",", "") if separators else t)
                    assert v == printed, f"{at}, row {i}: {v!r} vs printed {t!r}"
                elif isinstance(v, float) and not _is_null(v):
                    _check_float(v, t, rounded, f"{at}, row {i}", separators)
                else:
                    assert _text_of(v) == t, f"{at}, row {i}: {v!r} vs printed {t!r}"
    return len(body)
