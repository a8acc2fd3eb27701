"""Typed columns from the extension (``sightline._sightline``) as a pandas DataFrame.

Each column comes as ``(name, kind, data, extra)``: ``int`` (int64 bytes, a null mask or None),
``float`` (float64 bytes, the decimals the command line prints or None), ``category`` (int32
codes, the categories) or ``mixed`` (a list of values). NumPy reads the bytes in place, so no
Python object is made per number.
"""

import numpy as np
import pandas as pd


def _series(kind, data, extra):
    if kind == "int":
        values = np.frombuffer(data, dtype="<i8")
        if extra is None:
            return values
        return pd.arrays.IntegerArray(values, np.frombuffer(extra, dtype=np.bool_))
    if kind == "float":
        return np.frombuffer(data, dtype="<f8")
    if kind == "category":
        codes = np.frombuffer(data, dtype="<i4")
        return pd.Categorical.from_codes(codes, categories=pd.Index(extra, dtype=object))
    return np.array(data, dtype=object)


def frame(columns):
    """The DataFrame of the extension's columns; ``attrs["decimals"]`` maps each column the
    command line prints with fixed decimals to that number."""
    names = [c[0] for c in columns]
    df = pd.DataFrame({i: _series(kind, data, extra) for i, (_, kind, data, extra) in enumerate(columns)})
    df.columns = names
    decimals = {name: extra for name, kind, _, extra in columns if kind == "float" and extra is not None}
    df.attrs["decimals"] = decimals
    return df
