"""The one table builder of the package: rows (dicts) into a pandas or polars
DataFrame or a pyarrow Table, columns in a given order.

``gang.to_pandas`` (and polars, arrow), ``gang.sim``'s results and ``gang``'s
preemption plans all build their tables here. pandas, polars and pyarrow are optional;
each is imported only when a table of its kind is asked for, and a missing one is an
``ImportError`` naming the extra that installs it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def library(module: str, extra: str, what: str) -> Any:
    """An optional library, imported when first needed (typed as Any: its stubs are
    optional); a missing one raises ``ImportError`` naming ``what`` needs it and the
    extra (``pip install 'gang[extra]'``) that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        top = module.split(".")[0]
        raise ImportError(
            f"{what} needs {top}, which is not installed: "
            f"pip install 'gang[{extra}]' (or pip install {top})"
        ) from e


def columns(rows: Iterable[Mapping[str, Any]], first: Sequence[str] = ()) -> list[str]:
    """``first``, then every other key of ``rows`` in the order it first appears."""
    cols = list(first)
    seen = set(cols)
    for r in rows:
        for k in r:
            if k not in seen:
                seen.add(k)
                cols.append(k)
    return cols


def aligned(rows: Iterable[Mapping[str, Any]], first: Sequence[str] = ()) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows with the same keys, in the same order (``columns``), missing cells None."""
    rows = list(rows)
    cols = columns(rows, first)
    return [{c: r.get(c) for c in cols} for r in rows], cols


def to_pandas(rows: Iterable[Mapping[str, Any]], first: Sequence[str] = (), *, extra: str = "pandas",
              what: str = "to_pandas") -> Any:
    """A ``pandas.DataFrame``: one row per dict, the columns ``first`` then the rest."""
    pd = library("pandas", extra, what)
    records, cols = aligned(rows, first)
    return pd.DataFrame.from_records(records, columns=cols)


def to_polars(rows: Iterable[Mapping[str, Any]], first: Sequence[str] = (), *, extra: str = "polars",
              what: str = "to_polars") -> Any:
    """A ``polars.DataFrame``, as ``to_pandas`` (a column of mixed numbers takes their
    supertype)."""
    pl = library("polars", extra, what)
    records, cols = aligned(rows, first)
    return pl.DataFrame({c: [r[c] for r in records] for c in cols}, strict=False)


def to_arrow(rows: Iterable[Mapping[str, Any]], first: Sequence[str] = (), *, extra: str = "arrow",
             what: str = "to_arrow") -> Any:
    """A ``pyarrow.Table``, as ``to_pandas``."""
    pa = library("pyarrow", extra, what)
    records, cols = aligned(rows, first)
    return pa.table({c: pa.array([r[c] for r in records]) for c in cols})
