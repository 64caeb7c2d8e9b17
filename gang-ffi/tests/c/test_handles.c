/*
 * Handle checks, the C ABI's defence in depth (gang.h, "Handle checks"): a handle of
 * the wrong type is GANG_INVALID_HANDLE and is left untouched, for every handle type;
 * a pointer that was never a handle is refused; a double free does nothing; a freed
 * handle passed again is GANG_INVALID_HANDLE.
 *
 * A program of its own, built and run twice by gang-ffi/test.sh:
 *   - with -fsanitize=address,undefined (leaks checked), and
 *   - without sanitizers, on glibc's allocator.
 *
 * Why the use-after-free part can run under AddressSanitizer, which reports any read of
 * freed memory: only the C code here is instrumented, and it never reads a freed handle
 * — it passes the pointer back to the library. The library (a Rust static library built
 * without ASan) reads the freed block's 8-byte tag with an uninstrumented load, finds no
 * live tag and touches nothing else; the double free never reaches free(), which is
 * what ASan would report ("attempting double-free"). ASan's quarantine keeps freed
 * blocks out of circulation, so the tag check sees the poisoned tag (or ASan's own
 * bookkeeping) deterministically. The second build checks the same on the allocator a
 * real host uses, where the block sits in glibc's tcache: nothing is allocated between
 * a free and the calls that follow it, so it is not reused in between. (Had the block
 * been handed out again to a new handle of the same type, no tag could tell: detection
 * is best-effort, and the test does not pretend otherwise.)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int failures = 0;
int checks = 0;
char sentinel_byte;

static const char *CLUSTER =
    "{\"topology\": {\"levels\": [\"rack\"]}, \"nodes\": ["
    "{\"name\": \"a1\", \"labels\": {\"rack\": \"a\"}, \"capacity\": {\"gpu\": 2}},"
    "{\"name\": \"a2\", \"labels\": {\"rack\": \"a\"}, \"capacity\": {\"gpu\": 2}},"
    "{\"name\": \"b1\", \"labels\": {\"rack\": \"b\"}, \"capacity\": {\"gpu\": 4}}]}";
static const char *GANG =
    "{\"name\": \"g\", \"roles\": [{\"name\": \"w\", \"count\": 2, \"requests\": {\"gpu\": 1}}],"
    " \"topology\": {\"required\": \"rack\"}}";
static const char *BIG =
    "{\"name\": \"big\", \"roles\": [{\"name\": \"w\", \"count\": 9, \"requests\": {\"gpu\": 1}}],"
    " \"topology\": {\"required\": \"rack\"}}";
static const char *SCENARIO =
    "{\"topology\": {\"levels\": [\"rack\"]}, \"nodes\": [],"
    " \"gang\": {\"name\": \"g\", \"roles\": [{\"name\": \"w\", \"count\": 1}]}}";

/* Checks an error object of a refused handle: code, kind, field, and the message. */
static void check_invalid(gang_error *err, const char *field, const char *in_message) {
    CHECK(err != NULL);
    if (err == NULL) return;
    gang_result code = GANG_OK;
    gang_str kind = {0}, f = {0}, message = {0};
    OK(gang_error_code(err, &code));
    OK(gang_error_kind(err, &kind));
    OK(gang_error_field(err, &f));
    OK(gang_error_message(err, &message));
    CHECK(code == GANG_INVALID_HANDLE);
    CHECK(str_eq(kind, "invalid_handle"));
    CHECK(str_eq(f, field));
    CHECK(str_has(message, in_message));
    if (!str_has(message, in_message))
        fprintf(stderr, "  message: %.*s (want \"%s\")\n", (int)message.len, message.data, in_message);
    gang_error_free(err);
}

/* One live handle of every type, and what the probes need besides. */
enum {
    H_ERROR, H_STRING, H_NODE, H_BUILDER, H_INVENTORY, H_ROLE, H_GANG, H_COMPILED, H_SOLVER,
    H_PLACEMENT, H_DIAGNOSIS, H_SCENARIO, H_RESERVATION, H_CHANGE, H_REPLACEMENT, H_SPREAD,
    H_ADMISSIONS, N_HANDLES
};
static const char *const NAMES[N_HANDLES] = {
    "gang_error", "gang_string", "gang_node", "gang_inventory_builder", "gang_inventory",
    "gang_role", "gang_gang", "gang_compiled", "gang_solver", "gang_placement",
    "gang_diagnosis", "gang_scenario", "gang_reservation", "gang_change", "gang_replacement",
    "gang_spread_outcome", "gang_admissions",
};

struct world {
    void *h[N_HANDLES];
    gang_inventory *inv; /* == h[H_INVENTORY] */
    gang_node *node;     /* == h[H_NODE] */
    uint64_t id;         /* the reservation of h[H_PLACEMENT] */
};

static void make_world(struct world *w) {
    memset(w, 0, sizeof *w);
    gang_error *error = NULL;
    gang_inventory *unused = NULL;
    CHECK_RC(gang_inventory_from_json("{", 1, &unused, &error), GANG_INVALID_SCENARIO);
    OK(gang_inventory_from_json(CLUSTER, strlen(CLUSTER), &w->inv, NULL));
    gang_string *string = NULL;
    OK(gang_inventory_node_json(w->inv, "a1", &string, NULL));
    OK(gang_node_new("n1", &w->node));
    const char *levels[] = {"rack"};
    gang_inventory_builder *builder = NULL;
    OK(gang_inventory_builder_new(levels, 1, &builder, NULL));
    gang_role *role = NULL;
    OK(gang_role_new("w", 2, &role));
    OK(gang_role_set_request(role, "gpu", "1"));
    gang_gang *gang = NULL, *big = NULL;
    OK(gang_gang_from_json(GANG, strlen(GANG), &gang, NULL));
    OK(gang_gang_from_json(BIG, strlen(BIG), &big, NULL));
    gang_compiled *compiled = NULL;
    OK(gang_inventory_compile(w->inv, gang, &compiled, NULL));
    gang_solver *solver = NULL;
    OK(gang_solver_new(&solver));
    gang_status status = 0;
    gang_placement *placement = NULL, *no = NULL;
    gang_diagnosis *diagnosis = NULL, *none = NULL;
    OK(gang_inventory_place(w->inv, gang, &status, &placement, &none, NULL));
    CHECK(status == GANG_STATUS_PLACED && none == NULL);
    OK(gang_inventory_place(w->inv, big, &status, &no, &diagnosis, NULL));
    CHECK(status == GANG_STATUS_UNSCHEDULABLE && no == NULL);
    gang_scenario *scenario = NULL;
    OK(gang_scenario_from_json(SCENARIO, strlen(SCENARIO), &scenario, NULL));
    OK(gang_inventory_reserve(w->inv, placement, &w->id, NULL));
    gang_reservation *reservation = NULL;
    OK(gang_inventory_reservation(w->inv, w->id, &reservation, NULL));
    gang_change *change = NULL;
    OK(gang_inventory_set_capacity_millis(w->inv, "b1", "gpu", 4000, &change, NULL));
    gang_replacement *replacement = NULL;
    OK(gang_inventory_replace(w->inv, w->id, &status, &replacement, NULL));
    gang_spread_outcome *spread = NULL;
    OK(gang_inventory_spread(w->inv, gang, 1, 0, "rack", NULL, &status, &spread, NULL));
    const gang_gang *queue[] = {gang, big};
    gang_admissions *admissions = NULL;
    OK(gang_inventory_admit(w->inv, queue, 2, GANG_ADMIT_BACKFILL, &admissions, NULL));
    gang_gang_free(big);
    void *h[N_HANDLES] = {error, string, w->node, builder, w->inv, role, gang, compiled, solver,
                          placement, diagnosis, scenario, reservation, change, replacement,
                          spread, admissions};
    memcpy(w->h, h, sizeof h);
    for (int i = 0; i < N_HANDLES; i++) CHECK(w->h[i] != NULL);
}

static void free_world(struct world *w) {
    gang_error_free(w->h[H_ERROR]);
    gang_string_free(w->h[H_STRING]);
    gang_node_free(w->h[H_NODE]);
    gang_inventory_builder_free(w->h[H_BUILDER]);
    gang_role_free(w->h[H_ROLE]);
    gang_gang_free(w->h[H_GANG]);
    gang_compiled_free(w->h[H_COMPILED]);
    gang_solver_free(w->h[H_SOLVER]);
    gang_placement_free(w->h[H_PLACEMENT]);
    gang_diagnosis_free(w->h[H_DIAGNOSIS]);
    gang_scenario_free(w->h[H_SCENARIO]);
    gang_reservation_free(w->h[H_RESERVATION]);
    gang_change_free(w->h[H_CHANGE]);
    gang_replacement_free(w->h[H_REPLACEMENT]);
    gang_spread_outcome_free(w->h[H_SPREAD]);
    gang_admissions_free(w->h[H_ADMISSIONS]);
    gang_inventory_free(w->inv);
}

/* A call taking a handle of type `type` (`h`), whatever `h` really is; the out-parameter
 * it writes is checked to be untouched when the call fails. */
static gang_result probe(const struct world *w, int type, void *h) {
    gang_result rc;
    union {
        gang_result code;
        gang_str str;
        size_t len;
        uint64_t u64;
        gang_status status;
        gang_placement *placement;
        gang_gang *gang;
    } out;
    memset(&out, 0xA5, sizeof out);
    unsigned char before[sizeof out];
    memcpy(before, &out, sizeof out);
    switch (type) {
    case H_ERROR: rc = gang_error_code(h, &out.code); break;
    case H_STRING: rc = gang_string_view(h, &out.str); break;
    case H_NODE: rc = gang_node_set_schedulable(h, true); break;
    case H_BUILDER: rc = gang_inventory_builder_add_node(h, w->node); break;
    case H_INVENTORY: rc = gang_inventory_node_count(h, &out.len); break;
    case H_ROLE: rc = gang_role_set_max_per_node(h, 2); break;
    case H_GANG: rc = gang_gang_set_policy(h, GANG_POLICY_BEST_FIT); break;
    case H_COMPILED:
        rc = gang_solver_find(w->h[H_SOLVER], w->inv, h, &out.placement, NULL);
        if (rc == GANG_OK) gang_placement_free(out.placement);
        break;
    case H_SOLVER:
        rc = gang_solver_find(h, w->inv, w->h[H_COMPILED], &out.placement, NULL);
        if (rc == GANG_OK) gang_placement_free(out.placement);
        break;
    case H_PLACEMENT: rc = gang_placement_members(h, &out.u64); break;
    case H_DIAGNOSIS: rc = gang_diagnosis_status(h, &out.status); break;
    case H_SCENARIO:
        rc = gang_scenario_gang(h, &out.gang);
        if (rc == GANG_OK) gang_gang_free(out.gang);
        break;
    case H_RESERVATION: rc = gang_reservation_id(h, &out.u64); break;
    case H_CHANGE: rc = gang_change_lost_len(h, &out.len); break;
    case H_REPLACEMENT: rc = gang_replacement_status(h, &out.status); break;
    case H_SPREAD: rc = gang_spread_outcome_status(h, &out.status); break;
    default: rc = gang_admissions_len(h, &out.len); break;
    }
    if (rc != GANG_OK) CHECK(memcmp(before, &out, sizeof out) == 0);
    return rc;
}

/* Every type's probe with every type's handle: only its own type is accepted, and
 * every handle still works afterwards (nothing was written through a wrong one). */
static void test_wrong_type_matrix(void) {
    struct world w;
    make_world(&w);
    int refused = 0;
    for (int t = 0; t < N_HANDLES; t++) {
        for (int h = 0; h < N_HANDLES; h++) {
            gang_result rc = probe(&w, t, w.h[h]);
            gang_result want = t == h ? GANG_OK : GANG_INVALID_HANDLE;
            checks++;
            if (rc != want) {
                failures++;
                fprintf(stderr, "%s:%d: a %s passed as a %s: %s, want %s\n", __FILE__, __LINE__,
                        NAMES[h], NAMES[t], gang_result_name(rc), gang_result_name(want));
            }
            refused += rc == GANG_INVALID_HANDLE;
        }
    }
    CHECK(refused == N_HANDLES * (N_HANDLES - 1));
    /* Freeing through the wrong type frees nothing (the handles are freed below, each
     * once, and the leak checker would see one freed twice or never). */
    gang_gang_free(w.h[H_ROLE]);
    gang_role_free(w.h[H_GANG]);
    gang_inventory_free(w.h[H_SOLVER]);
    gang_error_free(w.h[H_STRING]);
    gang_placement_free(w.h[H_DIAGNOSIS]);
    for (int t = 0; t < N_HANDLES; t++) CHECK(probe(&w, t, w.h[t]) == GANG_OK);
    free_world(&w);
    printf("handles: %d wrong-type calls of %d types refused\n", refused, N_HANDLES);
}

/* The case: a role passed as a gang is refused with an error naming the
 * argument and what it really is, and the role is not written into. */
static void test_role_as_gang(void) {
    gang_inventory *inv = NULL;
    OK(gang_inventory_from_json(CLUSTER, strlen(CLUSTER), &inv, NULL));
    gang_role *role = NULL;
    OK(gang_role_new("w", 4, &role));
    OK(gang_role_set_request(role, "gpu", "1"));
    gang_gang *as_gang = (gang_gang *)role;

    CHECK_RC(gang_gang_add_role(as_gang, role), GANG_INVALID_HANDLE);
    CHECK_RC(gang_gang_set_required(as_gang, "rack"), GANG_INVALID_HANDLE);
    CHECK_RC(gang_gang_set_policy(as_gang, GANG_POLICY_MOST_FREE), GANG_INVALID_HANDLE);
    CHECK_RC(gang_gang_add_slice(as_gang, "rack", 2), GANG_INVALID_HANDLE);
    gang_compiled *c = SENTINEL;
    gang_error *err = NULL;
    CHECK_RC(gang_inventory_compile(inv, as_gang, &c, &err), GANG_INVALID_HANDLE);
    CHECK(c == SENTINEL);
    check_invalid(err, "gang", "argument gang is not a live gang_gang: it is a gang_role");
    gang_status status = 0;
    gang_placement *p = SENTINEL;
    gang_diagnosis *d = SENTINEL;
    err = NULL;
    CHECK_RC(gang_inventory_place(inv, as_gang, &status, &p, &d, &err), GANG_INVALID_HANDLE);
    CHECK(p == SENTINEL && d == SENTINEL && status == 0);
    check_invalid(err, "gang", "it is a gang_role");
    /* The other way round, and in an array: the field names the element. */
    gang_gang *g = NULL;
    OK(gang_gang_new("g", &g));
    CHECK_RC(gang_gang_add_role(g, (const gang_role *)g), GANG_INVALID_HANDLE);
    const gang_gang *queue[] = {g, as_gang};
    gang_admissions *a = SENTINEL;
    err = NULL;
    CHECK_RC(gang_inventory_admit(inv, queue, 2, GANG_ADMIT_FIFO, &a, &err), GANG_INVALID_HANDLE);
    CHECK(a == SENTINEL);
    check_invalid(err, "queue[1]", "argument queue[1] is not a live gang_gang: it is a gang_role");
    /* An inventory passed as a placement to a lifecycle call changes nothing. */
    uint64_t id = 7;
    err = NULL;
    CHECK_RC(gang_inventory_reserve(inv, (const gang_placement *)inv, &id, &err), GANG_INVALID_HANDLE);
    CHECK(id == 7);
    check_invalid(err, "placement", "it is a gang_inventory");
    err = NULL;
    CHECK_RC(gang_inventory_release((gang_inventory *)g, 0, &err), GANG_INVALID_HANDLE);
    check_invalid(err, "inventory", "it is a gang_gang");

    /* The role is intact: a gang made of it places all 4 members (2 + 2, or 4 on b1). */
    OK(gang_gang_add_role(g, role));
    gang_gang_free(as_gang); /* wrong type: frees nothing */
    d = NULL;
    p = NULL;
    OK(gang_inventory_place(inv, g, &status, &p, &d, NULL));
    CHECK(status == GANG_STATUS_PLACED);
    uint64_t members = 0;
    OK(gang_placement_members(p, &members));
    CHECK(members == 4);
    gang_placement_free(p);
    gang_gang_free(g);
    gang_role_free(role);
    gang_inventory_free(inv);
}

/* Pointers that were never handles: zeroed memory, random bytes, a misaligned address. */
static void test_not_handles(void) {
    uint64_t zeros[8] = {0};
    uint64_t noise[8];
    for (int i = 0; i < 8; i++) noise[i] = 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1);
    size_t n = 99;
    CHECK_RC(gang_inventory_node_count((const gang_inventory *)zeros, &n), GANG_INVALID_HANDLE);
    CHECK_RC(gang_inventory_node_count((const gang_inventory *)noise, &n), GANG_INVALID_HANDLE);
    CHECK(n == 99);
    gang_error *err = NULL;
    CHECK_RC(gang_inventory_validate((const gang_inventory *)zeros, &err), GANG_INVALID_HANDLE);
    check_invalid(err, "inventory", "not a handle made by this library");
    const char *misaligned = (const char *)zeros + 1;
    err = NULL;
    CHECK_RC(gang_inventory_validate((const gang_inventory *)(const void *)misaligned, &err),
             GANG_INVALID_HANDLE);
    check_invalid(err, "inventory", "misaligned");
    gang_inventory_free((gang_inventory *)(void *)noise); /* not a handle: nothing freed */
    gang_role_free((gang_role *)(void *)zeros);
    CHECK(zeros[0] == 0 && noise[0] == 0x9E3779B97F4A7C15ULL);
}

/* Prints what a refused freed handle's error said (it depends on the allocator: the
 * poisoned tag itself, or the allocator's bookkeeping over it). */
static void report_freed(const char *what, gang_error *err) {
    gang_str m = {0};
    if (err && gang_error_message(err, &m) == GANG_OK)
        printf("handles: %s after free: %.*s\n", what, (int)m.len, m.data);
}

/* A double free does nothing, and a freed handle passed again is refused; each check
 * right after its free, with no allocation in between. */
static void test_double_free_and_use_after_free(void) {
    gang_role *r = NULL;
    OK(gang_role_new("w", 4, &r));
    gang_role_free(r);
    gang_role_free(r); /* ASan: "attempting double-free", were it not detected */
    CHECK_RC(gang_role_set_min_count(r, 1), GANG_INVALID_HANDLE);
    gang_gang *g = NULL;
    OK(gang_gang_new("g", &g));
    CHECK_RC(gang_gang_add_role(g, r), GANG_INVALID_HANDLE);
    gang_gang_free(g);

    gang_inventory *inv = NULL;
    OK(gang_inventory_from_json(CLUSTER, strlen(CLUSTER), &inv, NULL));
    gang_inventory_free(inv);
    gang_inventory_free(inv);
    size_t n = 99;
    CHECK_RC(gang_inventory_node_count(inv, &n), GANG_INVALID_HANDLE);
    CHECK(n == 99);
    gang_error *err = NULL;
    CHECK_RC(gang_inventory_release(inv, 0, &err), GANG_INVALID_HANDLE);
    CHECK(err != NULL);
    report_freed("gang_inventory", err);
    gang_error_free(err);

    /* A freed error object, the one handle the library hands out on failure. */
    err = NULL;
    CHECK_RC(gang_inventory_from_json("{", 1, &inv, &err), GANG_INVALID_SCENARIO);
    gang_error_free(err);
    gang_error_free(err);
    gang_result code = GANG_OK;
    CHECK_RC(gang_error_code(err, &code), GANG_INVALID_HANDLE);
    CHECK(code == GANG_OK);

    /* A freed placement, used where a lifecycle call would read it. */
    OK(gang_inventory_from_json(CLUSTER, strlen(CLUSTER), &inv, NULL));
    gang_gang *two = NULL;
    OK(gang_gang_from_json(GANG, strlen(GANG), &two, NULL));
    gang_status status = 0;
    gang_placement *p = NULL;
    gang_diagnosis *d = NULL;
    OK(gang_inventory_place(inv, two, &status, &p, &d, NULL));
    gang_placement_free(p);
    gang_placement_free(p);
    uint64_t id = 7;
    CHECK_RC(gang_inventory_reserve(inv, p, &id, NULL), GANG_INVALID_HANDLE);
    CHECK(id == 7);
    err = NULL;
    CHECK_RC(gang_inventory_reserve(inv, p, &id, &err), GANG_INVALID_HANDLE);
    report_freed("gang_placement", err);
    gang_error_free(err);
    size_t ids = 99;
    OK(gang_inventory_reservation_ids(inv, NULL, 0, &ids));
    CHECK(ids == 0); /* nothing was reserved from the freed placement */

    /* Every type: free, free again, pass again. */
    struct world w;
    make_world(&w);
    gang_error_free(w.h[H_ERROR]);
    gang_error_free(w.h[H_ERROR]);
    gang_string_free(w.h[H_STRING]);
    gang_string_free(w.h[H_STRING]);
    gang_node_free(w.h[H_NODE]);
    gang_node_free(w.h[H_NODE]);
    gang_inventory_builder_free(w.h[H_BUILDER]);
    gang_inventory_builder_free(w.h[H_BUILDER]);
    gang_role_free(w.h[H_ROLE]);
    gang_role_free(w.h[H_ROLE]);
    gang_placement_free(w.h[H_PLACEMENT]);
    gang_placement_free(w.h[H_PLACEMENT]);
    gang_diagnosis_free(w.h[H_DIAGNOSIS]);
    gang_diagnosis_free(w.h[H_DIAGNOSIS]);
    gang_scenario_free(w.h[H_SCENARIO]);
    gang_scenario_free(w.h[H_SCENARIO]);
    gang_reservation_free(w.h[H_RESERVATION]);
    gang_reservation_free(w.h[H_RESERVATION]);
    gang_change_free(w.h[H_CHANGE]);
    gang_change_free(w.h[H_CHANGE]);
    gang_replacement_free(w.h[H_REPLACEMENT]);
    gang_replacement_free(w.h[H_REPLACEMENT]);
    gang_spread_outcome_free(w.h[H_SPREAD]);
    gang_spread_outcome_free(w.h[H_SPREAD]);
    gang_admissions_free(w.h[H_ADMISSIONS]);
    gang_admissions_free(w.h[H_ADMISSIONS]);
    const int freed[] = {H_ERROR, H_STRING, H_NODE, H_BUILDER, H_ROLE, H_PLACEMENT, H_DIAGNOSIS,
                         H_SCENARIO, H_RESERVATION, H_CHANGE, H_REPLACEMENT, H_SPREAD,
                         H_ADMISSIONS};
    for (size_t i = 0; i < sizeof freed / sizeof freed[0]; i++) {
        gang_result rc = probe(&w, freed[i], w.h[freed[i]]);
        checks++;
        if (rc != GANG_INVALID_HANDLE) {
            failures++;
            fprintf(stderr, "%s:%d: a freed %s: %s, want invalid_handle\n", __FILE__, __LINE__,
                    NAMES[freed[i]], gang_result_name(rc));
        }
    }
    /* The rest (the probes of compiled gangs and solvers need a live inventory). */
    gang_gang_free(w.h[H_GANG]);
    gang_gang_free(w.h[H_GANG]);
    gang_compiled_free(w.h[H_COMPILED]);
    gang_compiled_free(w.h[H_COMPILED]);
    CHECK(probe(&w, H_SOLVER, w.h[H_SOLVER]) == GANG_INVALID_HANDLE); /* its compiled gang */
    CHECK(probe(&w, H_GANG, w.h[H_GANG]) == GANG_INVALID_HANDLE);
    gang_solver_free(w.h[H_SOLVER]);
    gang_solver_free(w.h[H_SOLVER]);
    CHECK_RC(gang_solver_set_limits(w.h[H_SOLVER], 1, 1), GANG_INVALID_HANDLE);
    CHECK(probe(&w, H_COMPILED, w.h[H_COMPILED]) == GANG_INVALID_HANDLE);
    gang_inventory_free(w.inv);
    gang_inventory_free(w.inv);
    CHECK(probe(&w, H_INVENTORY, w.h[H_INVENTORY]) == GANG_INVALID_HANDLE);

    gang_gang_free(two);
    gang_inventory_free(inv);
}

int main(void) {
    test_wrong_type_matrix();
    test_role_as_gang();
    test_not_handles();
    test_double_free_and_use_after_free();
    if (failures) {
        fprintf(stderr, "test_handles: %d of %d checks FAILED\n", failures, checks);
        return 1;
    }
    printf("test_handles: all %d checks passed\n", checks);
    return 0;
}
