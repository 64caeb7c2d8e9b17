"""Results as tables: one summary record per result, the same columns whether it was
placed or not, so a list of results is one DataFrame.

pandas, polars and pyarrow are optional (``pip install gang[pandas]``, ``gang[polars]``,
``gang[arrow]``); each function imports its library only when called.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import _frames


def _record(result: Any) -> dict[str, Any]:
    if isinstance(result, dict):
        return dict(result)
    summary = getattr(result, "summary", None)
    if summary is None:
        raise TypeError(
            f"results must be Placement, Diagnosis, Admission or Preemption objects (or dicts), not {type(result).__name__}"
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
    return _frames.aligned(_record(r) for r in results)[0]


def to_pandas(results: Iterable[Any]) -> Any:
    """A ``pandas.DataFrame`` with one row per result (see ``to_records``).

    >>> import gang
    >>> inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 2})])
    >>> df = gang.to_pandas([inv.try_place(gang.Gang("g", [gang.Role("w", n, requests={"gpu": 1})]))
    ...                      for n in (1, 3)])
    >>> list(df["status"]), list(df["members"])
    (['placed', 'unschedulable'], [1, 0])
    """
    return _frames.to_pandas(to_records(results), what="gang.to_pandas")


def to_polars(results: Iterable[Any]) -> Any:
    """A ``polars.DataFrame`` with one row per result (see ``to_records``).

    >>> import gang
    >>> inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 2})])
    >>> df = gang.to_polars([inv.try_place(gang.Gang("g", [gang.Role("w", n, requests={"gpu": 1})]))
    ...                      for n in (1, 3)])
    >>> df["status"].to_list(), df.shape[0]
    (['placed', 'unschedulable'], 2)
    """
    return _frames.to_polars(to_records(results), what="gang.to_polars")


def to_arrow(results: Iterable[Any]) -> Any:
    """A ``pyarrow.Table`` with one row per result (see ``to_records``).

    >>> import gang
    >>> inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 2})])
    >>> t = gang.to_arrow([inv.try_place(gang.Gang("g", [gang.Role("w", n, requests={"gpu": 1})]))
    ...                    for n in (1, 3)])
    >>> t.column("status").to_pylist(), t.num_rows
    (['placed', 'unschedulable'], 2)
    """
    return _frames.to_arrow(to_records(results), what="gang.to_arrow")
