/*
 * A solver's limits through the C ABI (gang_solver_set_limits; built and run with
 * test_gang.c, under ASan, UBSan and the leak checker): a work limit and a timeout per
 * query turn a multi-role gang that needs search work into GANG_STATUS_UNDECIDED —
 * never a false "does not fit" — and hold for every later query until set again; the
 * default decides it again; the timeout counts from each query, not from the setting;
 * a NULL or wrong-type solver is refused. Nothing here asserts on times: the instance
 * is proven unschedulable only after work linear in its nodes (about 2 units per node),
 * far more than 1 µs of it, and the only honest answers are "unschedulable" (proven) and
 * "undecided".
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "check.h"

/* Racks of 4 nodes with 3 GPUs and 4 CPUs each. */
static gang_inventory *racks_of_four(int nodes) {
    const char *levels[] = {"rack"};
    gang_inventory_builder *b = NULL;
    OK(gang_inventory_builder_new(levels, 1, &b, NULL));
    for (int i = 0; i < nodes; i++) {
        char name[16], rack[16];
        snprintf(name, sizeof name, "n%06d", i);
        snprintf(rack, sizeof rack, "r%05d", i / 4);
        gang_node *n = NULL;
        OK(gang_node_new(name, &n));
        OK(gang_node_add_label(n, "rack", rack));
        OK(gang_node_set_capacity(n, "gpu", "3"));
        OK(gang_node_set_capacity(n, "cpu", "4"));
        OK(gang_inventory_builder_add_node(b, n));
        gang_node_free(n);
    }
    gang_inventory *inv = NULL;
    OK(gang_inventory_builder_build(b, &inv, NULL));
    gang_inventory_builder_free(b);
    return inv;
}

/* Roles a (4) and b (2) of two GPUs each (b also one CPU), rack required: each role
 * alone fits any rack (one member per node), both together never (six members, four
 * nodes). Proving it takes a look at every rack. (Were b's request a's, the two roles
 * would share each rack's capacity of one shape, and every rack would be ruled out
 * before any work is done: gang-core's multi_decided tests that.) */
static const char *A_AND_B =
    "{\"name\": \"ab\", \"roles\": ["
    "{\"name\": \"a\", \"count\": 4, \"requests\": {\"gpu\": 2}},"
    "{\"name\": \"b\", \"count\": 2, \"requests\": {\"gpu\": 2, \"cpu\": 1}}],"
    " \"topology\": {\"required\": \"rack\"}}";

static gang_compiled *compile(const gang_inventory *inv, const char *doc) {
    gang_gang *g = NULL;
    OK(gang_gang_from_json(doc, strlen(doc), &g, NULL));
    gang_compiled *c = NULL;
    OK(gang_inventory_compile(inv, g, &c, NULL));
    gang_gang_free(g);
    return c;
}

/* Places c with solver and returns the status (0 on failure), checking that the
 * outputs agree with it; also checks that gang_solver_find agrees (a placement exactly
 * when placed). */
static gang_status place(gang_solver *solver, const gang_inventory *inv, const gang_compiled *c) {
    gang_status status = 0;
    gang_placement *p = NULL;
    gang_diagnosis *d = NULL;
    OK(gang_solver_place(solver, inv, c, &status, &p, &d, NULL));
    CHECK((status == GANG_STATUS_PLACED) == (p != NULL) && (p == NULL) == (d != NULL));
    if (d != NULL) {
        gang_status ds = 0;
        OK(gang_diagnosis_status(d, &ds));
        CHECK(ds == status);
    }
    gang_placement_free(p);
    gang_diagnosis_free(d);
    gang_placement *found = SENTINEL;
    OK(gang_solver_find(solver, inv, c, &found, NULL));
    CHECK(found != SENTINEL && (found != NULL) == (status == GANG_STATUS_PLACED));
    if (found != SENTINEL) gang_placement_free(found);
    return status;
}

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {
    }
}

/* A work limit: a few units cannot look at all 250 racks (undecided), the default
 * can (proven unschedulable); the limit holds until set again. */
static void test_work_limit(void) {
    gang_inventory *inv = racks_of_four(1000);
    gang_compiled *c = compile(inv, A_AND_B);
    gang_solver *s = NULL;
    OK(gang_solver_new(&s));
    CHECK(place(s, inv, c) == GANG_STATUS_UNSCHEDULABLE);
    OK(gang_solver_set_limits(s, 500, 0));
    CHECK(place(s, inv, c) == GANG_STATUS_UNDECIDED);
    CHECK(place(s, inv, c) == GANG_STATUS_UNDECIDED); /* still set for the next query */
    gang_status status = 0;
    gang_placement *p = NULL;
    gang_diagnosis *d = NULL;
    OK(gang_solver_place(s, inv, c, &status, &p, &d, NULL));
    gang_str text = {0};
    if (d != NULL) OK(gang_diagnosis_text(d, &text));
    CHECK(status == GANG_STATUS_UNDECIDED && str_has(text, "ruled out"));
    gang_diagnosis_free(d);
    /* Back to the default: decided again (the solver's caches did not keep the
     * undecided answer). */
    OK(gang_solver_set_limits(s, GANG_DEFAULT_WORK, 0));
    CHECK(place(s, inv, c) == GANG_STATUS_UNSCHEDULABLE);
    /* 0 allows no work, as gang_solver_new_with_budget(0) does; the two agree. */
    OK(gang_solver_set_limits(s, 0, 0));
    CHECK(place(s, inv, c) == GANG_STATUS_UNDECIDED);
    gang_solver *zero = NULL;
    OK(gang_solver_new_with_budget(0, &zero));
    CHECK(place(zero, inv, c) == GANG_STATUS_UNDECIDED);
    OK(gang_solver_set_limits(zero, GANG_DEFAULT_WORK, 0));
    CHECK(place(zero, inv, c) == GANG_STATUS_UNSCHEDULABLE);
    gang_solver_free(zero);
    /* A single-role gang does no such work: placed even with none allowed. */
    gang_compiled *one = compile(
        inv, "{\"name\": \"one\", \"roles\": [{\"name\": \"w\", \"count\": 4,"
             " \"requests\": {\"gpu\": 2}}], \"topology\": {\"required\": \"rack\"}}");
    CHECK(place(s, inv, one) == GANG_STATUS_PLACED);
    gang_compiled_free(one);
    gang_solver_free(s);
    gang_compiled_free(c);
    gang_inventory_free(inv);
}

/* A timeout per query: 1 µs is undecided (the proof needs far more), no timeout or a
 * far one decides; the timeout counts from each query. */
static void test_timeout(void) {
    gang_inventory *inv = racks_of_four(1000);
    gang_compiled *c = compile(inv, A_AND_B);
    gang_solver *s = NULL;
    OK(gang_solver_new(&s));
    OK(gang_solver_set_limits(s, GANG_DEFAULT_WORK, 1));
    CHECK(place(s, inv, c) == GANG_STATUS_UNDECIDED);
    CHECK(place(s, inv, c) == GANG_STATUS_UNDECIDED);
    OK(gang_solver_set_limits(s, GANG_DEFAULT_WORK, 0));
    CHECK(place(s, inv, c) == GANG_STATUS_UNSCHEDULABLE);
    OK(gang_solver_set_limits(s, GANG_DEFAULT_WORK, 60ULL * 1000 * 1000)); /* a minute */
    CHECK(place(s, inv, c) == GANG_STATUS_UNSCHEDULABLE);
    OK(gang_solver_set_limits(s, GANG_DEFAULT_WORK, UINT64_MAX)); /* no instant that far */
    CHECK(place(s, inv, c) == GANG_STATUS_UNSCHEDULABLE);
    /* Both limits at once: the work limit still stops it. */
    OK(gang_solver_set_limits(s, 500, 60ULL * 1000 * 1000));
    CHECK(place(s, inv, c) == GANG_STATUS_UNDECIDED);
    gang_compiled_free(c);
    gang_inventory_free(inv);

    /* Set a 200 ms timeout, wait 300 ms, then query (a small instance, decided in far
     * less than 200 ms even under the sanitizers): had the deadline been counted from
     * the setting, it would have passed before the query's first unit of work (the
     * clock is read at the first unit, then every 1024), and the answer be undecided. */
    inv = racks_of_four(40);
    c = compile(inv, A_AND_B);
    OK(gang_solver_set_limits(s, GANG_DEFAULT_WORK, 200 * 1000));
    sleep_ms(300);
    CHECK(place(s, inv, c) == GANG_STATUS_UNSCHEDULABLE);
    gang_solver_free(s);
    gang_compiled_free(c);
    gang_inventory_free(inv);
}

/* A NULL solver, and a handle of another type, which is left untouched. */
static void test_bad_solvers(void) {
    CHECK_RC(gang_solver_set_limits(NULL, 1, 1), GANG_NULL_ARGUMENT);
    gang_inventory *inv = racks_of_four(4);
    CHECK_RC(gang_solver_set_limits((gang_solver *)inv, 0, 0), GANG_INVALID_HANDLE);
    size_t n = 0;
    OK(gang_inventory_node_count(inv, &n));
    CHECK(n == 4);
    gang_role *r = NULL;
    OK(gang_role_new("w", 1, &r));
    CHECK_RC(gang_solver_set_limits((gang_solver *)r, 0, 0), GANG_INVALID_HANDLE);
    gang_role_free(r);
    gang_inventory_free(inv);
}

void test_limits(void) {
    test_work_limit();
    test_timeout();
    test_bad_solvers();
}
