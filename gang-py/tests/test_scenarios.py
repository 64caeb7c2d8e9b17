"""Every shared scenario file through the Python API, with the same expectations.

The `expect` checks are implemented here over the Python objects (Placement,
Diagnosis, exceptions); `Scenario.check()` (the core's own checker) must agree too.
"""

import json

import pytest

import gang
from conftest import SCENARIOS

FILES = sorted(SCENARIOS.glob("*.json"))

# Every key of a scenario's top-level `expect` block that this file knows how to check.
KNOWN = {
    "status", "level", "domain", "nodes", "placed", "domain_counts", "domains_used",
    "message_contains", "diagnosis", "error_kind", "error_field",
}

ERROR_CLASSES = {
    "invalid_quantity": gang.InvalidQuantity,
    "invalid_inventory": gang.InvalidInventory,
    "invalid_request": gang.InvalidRequest,
    "contradictory": gang.ContradictoryRequest,
    "invalid_scenario": gang.InvalidScenario,
    "conflict": gang.Conflict,
    "unknown_reservation": gang.UnknownReservation,
    "unknown_node": gang.UnknownNode,
}


def json_subset(want, got, at="diagnosis"):
    """`want` is contained in `got`: objects by listed keys, arrays element-wise."""
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{at}: expected an object, got {got!r}"
        for k, v in want.items():
            assert k in got, f"{at}.{k}: missing in {got!r}"
            json_subset(v, got[k], f"{at}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{at}: {want!r} vs {got!r}"
        for i, (w, g) in enumerate(zip(want, got)):
            json_subset(w, g, f"{at}[{i}]")
    else:
        assert want == got, f"{at}: expected {want!r}, got {got!r}"


def outcome(scenario):
    """('placed', Placement) | ('unschedulable'|'undecided', Diagnosis) | ('error', exc)."""
    try:
        result = scenario.inventory.try_place(scenario.gang)
    except gang.GangError as e:
        return "error", e
    if isinstance(result, gang.Placement):
        return "placed", result
    assert isinstance(result, gang.Diagnosis)
    return result.status, result


def test_there_are_scenarios():
    assert len(FILES) >= 20


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_scenario(path):
    doc = json.loads(path.read_text())
    scenario = gang.load_scenario(path)
    assert scenario.check() == [], "the core's own checker disagrees"
    expect = scenario.expect
    if expect is None:
        # Lifecycle-only scenarios (steps): the first placement must at least be valid.
        assert "steps" in doc, f"{path.name} has neither expect nor steps"
        status, result = outcome(scenario)
        assert status in ("placed", "unschedulable", "undecided", "error")
        return
    assert expect == doc["expect"]
    unknown = set(expect) - KNOWN
    assert not unknown, f"expectations this test does not check: {unknown}"

    status, result = outcome(scenario)
    if "status" in expect:
        assert status == expect["status"], f"{status}: {result}"

    if status == "error":
        message = str(result)
        if "error_kind" in expect:
            assert result.kind == expect["error_kind"]
            assert type(result) is ERROR_CLASSES[expect["error_kind"]]
        if "error_field" in expect:
            assert result.field == expect["error_field"]
            assert expect["error_field"] in message
    elif status == "placed":
        message = ""
    else:
        message = str(result)
        # place() raises the matching exception carrying the same diagnosis.
        cls = gang.Undecided if status == "undecided" else gang.Unschedulable
        with pytest.raises(cls) as info:
            scenario.place()
        assert info.value.diagnosis == result
        assert str(info.value) == message
    for sub in expect.get("message_contains", []):
        assert sub in message, f"{sub!r} not in {message!r}"

    if "diagnosis" in expect:
        assert isinstance(result, gang.Diagnosis)
        json_subset(expect["diagnosis"], result.to_dict())

    placement_keys = {"level", "domain", "nodes", "placed", "domain_counts", "domains_used"}
    if placement_keys & set(expect):
        assert isinstance(result, gang.Placement), f"placement expected, got {result}"
    if not isinstance(result, gang.Placement):
        return
    p = result
    if "level" in expect:
        assert p.level == expect["level"]
    if "domain" in expect:
        assert p.domain == expect["domain"]
        assert p.domain_path == "/".join(p.domain.values())
        assert list(p.domain) == [k for k in scenario.levels + [gang.HOSTNAME_LEVEL] if k in p.domain]
    if "nodes" in expect:
        assert p.nodes == expect["nodes"]
    if "placed" in expect:
        for role, k in expect["placed"].items():
            assert p.placed[role] == k
    if "domain_counts" in expect:
        for level, per in expect["domain_counts"].items():
            assert p.domain_counts(level) == per
    if "domains_used" in expect:
        for level, k in expect["domains_used"].items():
            assert p.domains_used[level] == k
    # The Python views agree with each other.
    assert sum(p.nodes.values()) == p.members == sum(p.placed.values())
    assert sum(r["count"] for r in p.to_records()) == p.members
    assert p.to_dict()["status"] == "placed"
