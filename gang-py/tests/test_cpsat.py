"""Cross-check against an exact CP-SAT model (examples/python/reference.py, multirole.py).

A few hundred random instances of up to 200 nodes and 3 roles: gang's answer (placed
or not, and at which level of the walk) agrees with CP-SAT, and every placement
verifies against the rules. Multi-role gangs may come back Undecided only when the
exact search ran out of budget; those are counted and checked to be multi-role and
flagged as such, never taken as a "does not fit".

Issue 15 (below the first test): 300 multi-role instances of its sizes (40-250 nodes,
2-4 roles of up to 24 members) with the same checks, and none may be Undecided; and
on 600 small instances (at most 8 nodes) the placement's compactness vector (domains
used per level below its level, then nodes) equals the minimum CP-SAT computes, itself
checked against full enumeration on tiny instances. What the engine does not do yet (a
multi-role placement's vector is not always the minimum) is marked xfail(strict=True):
when the engine does it, the XPASS fails the suite and the marker must go. GANG_CPSAT_MULTI_INSTANCES and GANG_CPSAT_LEX_INSTANCES change the
counts; examples/python/compare_cpsat.py --multi-role / --issue15 runs larger sets.
"""

import os
import random

import pytest

import gang
from multirole import brute_lex, cpsat_lex, lex_instance, multirole_instance, placement_vector
from reference import cpsat_depth, cpsat_max_members, check_placement, random_instance

N = int(os.environ.get("GANG_CPSAT_INSTANCES", "300"))


def test_cross_check_with_cpsat():
    rng = random.Random(20261129)
    stats = {"placed": 0, "unschedulable": 0, "undecided": 0, "contradictory": 0, "cpsat_unknown": 0}
    for i in range(N):
        inst = random_instance(rng)
        inv = inst.inventory()
        try:
            result = inv.try_place(inst.gang())
        except gang.Contradictory:
            stats["contradictory"] += 1
            continue
        want = cpsat_depth(inst)
        if want == "unknown":
            stats["cpsat_unknown"] += 1
            continue
        where = f"instance {i}: {inst.gang()!r}"
        if isinstance(result, gang.Diagnosis) and result.status == "undecided":
            assert len(inst.roles) > 1, f"single-role gangs are always decided: {where}"
            assert result.search_exhausted and "search budget" in str(result)
            stats["undecided"] += 1
            continue
        if isinstance(result, gang.Diagnosis):
            assert want is None, f"gang says no but CP-SAT fits at depth {want}: {where}\n{result}"
            stats["unschedulable"] += 1
            continue
        p = result
        assert want is not None, f"gang placed but CP-SAT finds nothing: {where}\n{p}"
        assert check_placement(inst, p) == [], where
        depth = inst.depth(p.level)
        if p.search_complete:
            assert depth == want, f"placed at depth {depth}, CP-SAT first fits at {want}: {where}"
        else:
            assert len(inst.roles) > 1 and depth <= want
        if len(inst.roles) == 1 and inst.roles[0].min_count is not None:
            # Elastic single role: as many members as any domain of that level takes.
            assert p.members == cpsat_max_members(inst, depth), where
        stats["placed"] += 1
    print(stats)
    decided = stats["placed"] + stats["unschedulable"]
    assert decided >= 0.8 * N, stats
    assert stats["placed"] > 0.2 * N and stats["unschedulable"] > 0.1 * N, f"instances too one-sided: {stats}"


# ---------------------------------------------------------------------- issue 15
#
# Multi-role gangs at issue 15's sizes (examples/python/multirole.py): 40-250 nodes,
# 2-4 roles of up to 24 members (GPU-, CPU- and memory-heavy), unconstrained or with a
# required / preferred rack or block. And the lexicographic compactness objective on
# small instances, where CP-SAT computes the smallest vector (domains per level below
# the placement's level, then nodes) exactly.

MULTI_N = int(os.environ.get("GANG_CPSAT_MULTI_INSTANCES", "300"))
LEX_N = int(os.environ.get("GANG_CPSAT_LEX_INSTANCES", "300"))


def _undecided(result) -> bool:
    return isinstance(result, gang.Diagnosis) and result.status == "undecided"


@pytest.fixture(scope="module")
def multirole_runs():
    """(index, instance, gang's answer, CP-SAT's first fitting depth) per instance."""
    rng = random.Random(15)
    runs = []
    for i in range(MULTI_N):
        inst = multirole_instance(rng)
        try:
            result = inst.inventory().try_place(inst.gang())
        except gang.Contradictory:  # e.g. more members at max_per_node 1 than a rack has nodes
            continue
        runs.append((i, inst, result, cpsat_depth(inst)))
    return runs


def test_multirole_agrees_with_cpsat(multirole_runs):
    """Same feasibility (and level) as CP-SAT wherever both decide; every placement
    obeys capacity and the topology constraint, checked in Python."""
    stats = {"placed": 0, "elastic": 0, "unschedulable": 0, "undecided": 0, "cpsat_unknown": 0}
    for i, inst, result, want in multirole_runs:
        where = f"multi-role instance {i}: {inst.gang()!r}"
        if _undecided(result):
            assert result.search_exhausted and "search budget" in str(result), where
            stats["undecided"] += 1
            continue
        if want == "unknown":
            stats["cpsat_unknown"] += 1
            continue
        if isinstance(result, gang.Diagnosis):
            assert want is None, f"gang says no but CP-SAT fits at depth {want}: {where}\n{result}"
            stats["unschedulable"] += 1
            continue
        assert want is not None, f"gang placed but CP-SAT finds nothing: {where}\n{result}"
        assert check_placement(inst, result) == [], where
        depth = inst.depth(result.level)
        assert depth in inst.walk(), where
        if result.search_complete:
            assert depth == want, f"placed at depth {depth}, CP-SAT first fits at {want}: {where}"
            if any(r.min_count is not None for r in inst.roles):
                # Elastic roles: the most members any domain of that level takes.
                assert result.members == cpsat_max_members(inst, depth), where
                stats["elastic"] += 1
        else:
            assert depth <= want, where  # a deeper level was left undecided
        stats["placed"] += 1
    print(stats)
    assert stats["cpsat_unknown"] == 0, stats
    assert stats["placed"] > 0.2 * MULTI_N and stats["unschedulable"] > 0.1 * MULTI_N, \
        f"instances too one-sided: {stats}"


def test_multirole_never_undecided(multirole_runs):
    undecided = [i for i, _, result, _ in multirole_runs if _undecided(result)]
    assert undecided == [], f"{len(undecided)} of {len(multirole_runs)} undecided: {undecided}"


@pytest.fixture(scope="module")
def lex_runs():
    """(index, instance, gang's answer, CP-SAT's (depth, smallest vector)) per instance."""
    runs = []
    single, multi = random.Random(1515), random.Random(1516)
    for i in range(2 * LEX_N):  # LEX_N single-role gangs, then LEX_N of 1-3 roles
        inst = lex_instance(single, max_roles=1) if i < LEX_N else lex_instance(multi)
        try:
            result = inst.inventory().try_place(inst.gang())
        except gang.Contradictory:  # e.g. preferred hostname under a required level
            continue
        runs.append((i, inst, result, cpsat_lex(inst)))
    return runs


def test_lex_oracle_matches_brute_force():
    """The CP-SAT compactness model against full enumeration on tiny instances."""
    rng = random.Random(151515)
    checked = 0
    while checked < 60:
        inst = lex_instance(rng, max_nodes=4, max_roles=2)
        for role in inst.roles:
            role.count = min(role.count, 4)
        assert cpsat_lex(inst) == brute_lex(inst), inst
        checked += 1


def test_lex_placements_valid_and_never_beat_the_optimum(lex_runs):
    """On every small instance: same feasibility and level as CP-SAT, a valid placement,
    and a vector never smaller than CP-SAT's minimum (which would mean the oracle is
    wrong). Whether it is exactly the minimum is the next two tests."""
    placed = 0
    for i, inst, result, want in lex_runs:
        where = f"lex instance {i}: {inst.gang()!r}"
        assert want != "unknown", where
        assert not _undecided(result), where
        if isinstance(result, gang.Diagnosis):
            assert want is None, where
            continue
        assert want is not None, where
        assert check_placement(inst, result) == [], where
        assert result.search_complete and inst.depth(result.level) == want[0], where
        assert placement_vector(inst, result) >= want[1], where
        placed += 1
    assert placed > 0.4 * len(lex_runs), placed


def _not_minimal(lex_runs, multi: bool) -> list:
    return [(i, placement_vector(inst, result), want[1]) for i, inst, result, want in lex_runs
            if (len(inst.roles) > 1) == multi and isinstance(result, gang.Placement)
            and placement_vector(inst, result) != want[1]]


def test_lex_single_role_minimal(lex_runs):
    bad = _not_minimal(lex_runs, multi=False)
    assert bad == [], f"{len(bad)} not minimal (instance, gang's vector, CP-SAT's): {bad[:10]}"


def test_lex_multi_role_minimal(lex_runs):
    # CP-SAT's vector is the least over every domain, and so is gang's wherever its
    # search is complete (README, "The objective for several roles": whole vectors,
    # node counts included, compare between domains).
    bad = _not_minimal(lex_runs, multi=True)
    assert bad == [], f"{len(bad)} not minimal (instance, gang's vector, CP-SAT's): {bad[:10]}"
