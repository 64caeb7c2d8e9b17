"""gang: exact, all-or-nothing, topology-aware placement of gangs.

Can these N members, each with its own resource shape, be placed all together inside
one topology domain (a rack, a block, an NVLink domain...) of this cluster right now —
and if so exactly where; if not, exactly why?

>>> import gang
>>> RACK = "topology.example.com/rack"
>>> inv = gang.Inventory([RACK], [
...     gang.Node("a1", labels={RACK: "a"}, capacity={"nvidia.com/gpu": 8}, used={"nvidia.com/gpu": 6}),
...     gang.Node("a2", labels={RACK: "a"}, capacity={"nvidia.com/gpu": 8}, used={"nvidia.com/gpu": 6}),
...     gang.Node("b1", labels={RACK: "b"}, capacity={"nvidia.com/gpu": 8}, used={"nvidia.com/gpu": 5}),
... ])
>>> workers = gang.Role("worker", 4, requests={"nvidia.com/gpu": 1})
>>> inv.place(gang.Gang("train", [workers], required=RACK))
Placement(gang='train', level='topology.example.com/rack', domain='a', nodes={'a1': 2, 'a2': 2})
>>> try:
...     inv.place(gang.Gang("train", [gang.Role("worker", 5, requests={"nvidia.com/gpu": 1})], required=RACK))
... except gang.Unschedulable as e:
...     print(e.diagnosis.best.domain, e.diagnosis.best.fits[0].fits)
a 4

Results become tables: ``gang.to_pandas(results)`` (or ``to_polars``, ``to_arrow``,
``to_records``) gives one row per result, with the same columns for placed and not
placed (pandas, polars and pyarrow are optional: ``pip install gang[pandas]`` ...).

The placement engine is the Rust crate gang-core; this package converts at its edge
and holds no placement logic of its own.
"""

from ._gang import (
    Admission,
    Assignment,
    CompiledGang,
    Conflict,
    Contradictory,
    DEFAULT_SEARCH_BUDGET,
    Diagnosis,
    DomainReport,
    ExclusionCause,
    Exclusions,
    FewerMembers,
    Gang,
    GangError,
    HOSTNAME_LEVEL,
    InternalError,
    InvalidInventory,
    InvalidQuantity,
    InvalidRequest,
    InvalidScenario,
    Inventory,
    Lost,
    Node,
    NotPlaced,
    Overcommit,
    Pending,
    Placement,
    Preemption,
    Quantity,
    Relaxation,
    Requirement,
    Reservation,
    ReservationId,
    Role,
    RoleFit,
    RoleReport,
    Scenario,
    SliceReport,
    SpreadOutcome,
    Taint,
    Toleration,
    Undecided,
    UnknownNode,
    UnknownReservation,
    Unschedulable,
    load_scenario,
    __version__ as __version__,
)

from ._tables import to_arrow, to_pandas, to_polars, to_records

__all__ = [
    "Admission",
    "Assignment",
    "CompiledGang",
    "Conflict",
    "Contradictory",
    "DEFAULT_SEARCH_BUDGET",
    "Diagnosis",
    "DomainReport",
    "ExclusionCause",
    "Exclusions",
    "FewerMembers",
    "Gang",
    "GangError",
    "HOSTNAME_LEVEL",
    "InternalError",
    "InvalidInventory",
    "InvalidQuantity",
    "InvalidRequest",
    "InvalidScenario",
    "Inventory",
    "Lost",
    "Node",
    "NotPlaced",
    "Overcommit",
    "Pending",
    "Placement",
    "Preemption",
    "Quantity",
    "Relaxation",
    "Requirement",
    "Reservation",
    "ReservationId",
    "Role",
    "RoleFit",
    "RoleReport",
    "Scenario",
    "SliceReport",
    "SpreadOutcome",
    "Taint",
    "Toleration",
    "Undecided",
    "UnknownNode",
    "UnknownReservation",
    "Unschedulable",
    "load_scenario",
    "to_arrow",
    "to_pandas",
    "to_polars",
    "to_records",
]

# gang.sim (gang-sim) and gang.kube (gang-kube): plain-Python modules over JSON; their
# optional dependencies (pandas, matplotlib, tqdm, distributed) are imported when used.
from . import kube, sim  # noqa: E402
