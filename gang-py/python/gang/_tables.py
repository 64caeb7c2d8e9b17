"""Results as tables: one summary record per result, the same columns whether it was
placed or not, so a list of results is one DataFrame.

pandas, polars and pyarrow are optional (``pip install gang[pandas]``, ``gang[polars]``,
``gang[arrow]``); each function imports its library only when called.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any


def _library(name: str) -> Any:
    """An optional library, imported when first needed (typed as Any: its stubs are optional)."""
    return importlib.import_module(name)


def _record(result: Any) -> dict[str, Any]:
    if isinstance(result, dict):
        return dict(result)
    summary = getattr(result, "summary", None)
    if summary is None:
        raise TypeError(
            f"results must be Placement, Diagnosis or Admission objects (or dicts), not {type(result).__name__}"
        )
    record: dict[str, Any] = summary()
    return record


def to_records(results: Iterable[Any]) -> list[dict[str, Any]]:
    """One summary record (a dict) per result, with the same keys for every result.

    A result is a ``Placement``, a ``Diagnosis``, an ``Admission``, or a dict such
    records; keys missing from some records (levels of other inventories) are filled
    with None.

    >>> import gang
    >>> inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 2})])
    >>> results = [inv.try_place(gang.Gang("g", [gang.Role("w", n, requests={"gpu": 1})], required="rack"))
    ...            for n in (1, 2, 3)]
    >>> [(r["status"], r["members"], r["best_fits"]) for r in gang.to_records(results)]
    [('placed', 1, None), ('placed', 2, None), ('unschedulable', 0, 2)]
    """
    records = [_record(r) for r in results]
    keys: dict[str, None] = {}
    for r in records:
        for k in r:
            keys.setdefault(k, None)
    return [{k: r.get(k) for k in keys} for r in records]


def to_pandas(results: Iterable[Any]) -> Any:
    """A ``pandas.DataFrame`` with one row per result (see ``to_records``).

    >>> import gang
    >>> inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 2})])
    >>> df = gang.to_pandas([inv.try_place(gang.Gang("g", [gang.Role("w", n, requests={"gpu": 1})]))
    ...                      for n in (1, 3)])
    >>> list(df["status"]), list(df["members"])
    (['placed', 'unschedulable'], [1, 0])
    """
    pd = _library("pandas")
    return pd.DataFrame.from_records(to_records(results))


def to_polars(results: Iterable[Any]) -> Any:
    """A ``polars.DataFrame`` with one row per result (see ``to_records``).

    >>> import gang
    >>> inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 2})])
    >>> df = gang.to_polars([inv.try_place(gang.Gang("g", [gang.Role("w", n, requests={"gpu": 1})]))
    ...                      for n in (1, 3)])
    >>> df["status"].to_list(), df.shape[0]
    (['placed', 'unschedulable'], 2)
    """
    pl = _library("polars")
    records = to_records(results)
    return pl.DataFrame(records, infer_schema_length=None)


def to_arrow(results: Iterable[Any]) -> Any:
    """A ``pyarrow.Table`` with one row per result (see ``to_records``).

    >>> import gang
    >>> inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 2})])
    >>> t = gang.to_arrow([inv.try_place(gang.Gang("g", [gang.Role("w", n, requests={"gpu": 1})]))
    ...                    for n in (1, 3)])
    >>> t.column("status").to_pylist(), t.num_rows
    (['placed', 'unschedulable'], 2)
    """
    pa = _library("pyarrow")
    return pa.Table.from_pylist(to_records(results))
