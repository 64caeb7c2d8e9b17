"""Type-checked use of the public API (`mypy --strict`, run by gang-py/test.sh); also
runs as a plain script. Not a pytest module."""

from __future__ import annotations

import gang


def main() -> None:
    inv = gang.Inventory(["rack"], [gang.Node("a1", labels={"rack": "a"}, capacity={"gpu": 8, "cpu": 1.5})])
    role = gang.Role("w", 2, requests={"gpu": 4}, min_count=1)
    g = gang.Gang("g", [role], required="rack")
    p: gang.Placement = inv.place(g, search_budget=100)
    counts: dict[str | None, int] = p.domain_counts("rack")
    domain: str = p.domain
    r: gang.Reservation = inv.reserve(p)
    rid: gang.ReservationId = r.id
    serial: int = rid.serial
    free: gang.Quantity = inv.free("a1", "gpu")
    total: gang.Quantity = free + 1
    result = inv.try_place(gang.Gang("h", [gang.Role("w", 9, requests={"gpu": 8})]))
    if isinstance(result, gang.Diagnosis):
        summary: dict[str, object] = result.summary()
        assert summary["status"] == "unschedulable"
    records = gang.to_records([p, result])
    try:
        inv.place(gang.Gang("h", [gang.Role("w", 9, requests={"gpu": 8})]))
    except gang.NotPlaced as e:
        not_placed: str = e.kind  # a str, not optional (issue 25 item 15)
        assert not_placed == "unschedulable"
    try:
        inv.node("zz")
    except gang.UnknownNode as e:
        kind: str | None = e.kind
        assert kind == "unknown_node"
    released = inv.release(rid)
    assert released.member_count == 2 and serial == 0 and counts and domain and records
    assert float(total) == 1.0 and gang.__version__


if __name__ == "__main__":
    main()
