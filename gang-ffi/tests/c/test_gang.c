/*
 * Tests of the C ABI from C itself, built by gang-ffi/test.sh with
 *   -std=c11 -Wall -Wextra -Werror -fsanitize=address,undefined
 * and run under AddressSanitizer's leak checker: every function, every error path
 * (NULL arguments, invalid UTF-8, bad enumeration values, invalid input, indexes out of
 * range), the documented free contract, and the shared scenario files. The lifecycle
 * (reserve, release, node changes, replace, spread, admit) is in test_lifecycle.c, a
 * solver's limits in test_limits.c.
 *
 *   test_gang <scenario directory>
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int failures = 0;
int checks = 0;
char sentinel_byte;

static const char *BLOCK = "topology.example.com/block";
static const char *RACK = "topology.example.com/rack";
static const char *GPU = "nvidia.com/gpu";
static const char *BAD_UTF8 = "\xff\xfe";

/* Builds a node with block/rack labels and GPUs (capacity 8, `used` used). */
static gang_node *make_node(const char *name, const char *block, const char *rack, int used) {
    gang_node *n = NULL;
    OK(gang_node_new(name, &n));
    OK(gang_node_add_label(n, BLOCK, block));
    OK(gang_node_add_label(n, RACK, rack));
    OK(gang_node_add_label(n, "nvidia.com/gpu.product", "H200"));
    OK(gang_node_set_capacity(n, GPU, "8"));
    OK(gang_node_set_capacity(n, "cpu", "96"));
    OK(gang_node_set_capacity_millis(n, "memory", 1024ULL * 1024 * 1024 * 1000));
    char used_text[16];
    snprintf(used_text, sizeof used_text, "%d", used);
    OK(gang_node_set_used(n, GPU, used_text));
    return n;
}

/* The README's cluster: rack a has 2+1 free GPUs, rack b 2 (b1 tainted) + 0. */
static gang_inventory *readme_inventory(void) {
    const char *levels[] = {BLOCK, RACK};
    gang_inventory_builder *b = NULL;
    gang_error *err = NULL;
    OK(gang_inventory_builder_new(levels, 2, &b, &err));
    CHECK(err == NULL);
    gang_node *n = make_node("a1", "b1", "a", 6);
    OK(gang_inventory_builder_add_node(b, n));
    gang_node_free(n);
    n = make_node("a2", "b1", "a", 7);
    OK(gang_inventory_builder_add_node(b, n));
    gang_node_free(n);
    n = make_node("b1", "b1", "b", 6);
    OK(gang_node_add_taint(n, "dedicated", "training", GANG_EFFECT_NO_SCHEDULE));
    OK(gang_inventory_builder_add_node(b, n));
    gang_node_free(n);
    n = make_node("b2", "b1", "b", 8);
    OK(gang_inventory_builder_add_node(b, n));
    gang_node_free(n);
    gang_inventory *inv = NULL;
    OK(gang_inventory_builder_build(b, &inv, &err));
    CHECK(inv != NULL && err == NULL);
    gang_inventory_builder_free(b);
    return inv;
}

static gang_role *readme_workers(void) {
    gang_role *r = NULL;
    OK(gang_role_new("worker", 4, &r));
    OK(gang_role_set_request(r, GPU, "1"));
    OK(gang_role_set_request_millis(r, "cpu", 500));
    OK(gang_role_add_selector(r, "nvidia.com/gpu.product", "H200"));
    OK(gang_role_add_toleration(r, "dedicated", GANG_TOLERATION_EQUAL, "training", GANG_EFFECT_ANY));
    return r;
}

static gang_gang *readme_gang(int required) {
    gang_gang *g = NULL;
    OK(gang_gang_new("train", &g));
    gang_role *r = readme_workers();
    OK(gang_gang_add_role(g, r));
    gang_role_free(r);
    if (required)
        OK(gang_gang_set_required(g, RACK));
    else
        OK(gang_gang_set_preferred(g, RACK));
    return g;
}

static void test_version(void) {
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", GANG_VERSION_MAJOR, GANG_VERSION_MINOR,
             GANG_VERSION_PATCH);
    CHECK(strcmp(gang_version(), want) == 0);
}

static void test_result_names(void) {
    CHECK(strcmp(gang_result_name(GANG_OK), "ok") == 0);
    CHECK(strcmp(gang_result_name(GANG_INVALID_QUANTITY), "invalid_quantity") == 0);
    CHECK(strcmp(gang_result_name(GANG_INVALID_INVENTORY), "invalid_inventory") == 0);
    CHECK(strcmp(gang_result_name(GANG_INVALID_REQUEST), "invalid_request") == 0);
    CHECK(strcmp(gang_result_name(GANG_CONTRADICTORY), "contradictory") == 0);
    CHECK(strcmp(gang_result_name(GANG_INVALID_SCENARIO), "invalid_scenario") == 0);
    CHECK(strcmp(gang_result_name(GANG_NULL_ARGUMENT), "null_argument") == 0);
    CHECK(strcmp(gang_result_name(GANG_INVALID_UTF8), "invalid_utf8") == 0);
    CHECK(strcmp(gang_result_name(GANG_INVALID_ARGUMENT), "invalid_argument") == 0);
    CHECK(strcmp(gang_result_name(GANG_OUT_OF_RANGE), "out_of_range") == 0);
    CHECK(strcmp(gang_result_name(GANG_NOT_FOUND), "not_found") == 0);
    CHECK(strcmp(gang_result_name(GANG_INVALID_HANDLE), "invalid_handle") == 0);
    CHECK(strcmp(gang_result_name(GANG_UNKNOWN_ERROR), "unknown_error") == 0);
    CHECK(strcmp(gang_result_name(GANG_INTERNAL_ERROR), "internal_error") == 0);
    CHECK(strcmp(gang_result_name(77), "unknown") == 0);
    /* The numbers are part of the ABI. */
    CHECK(GANG_OK == 0 && GANG_INVALID_QUANTITY == 1 && GANG_INVALID_INVENTORY == 2);
    CHECK(GANG_INVALID_REQUEST == 3 && GANG_CONTRADICTORY == 4 && GANG_INVALID_SCENARIO == 5);
    CHECK(GANG_NULL_ARGUMENT == 100 && GANG_INVALID_UTF8 == 101 && GANG_INVALID_ARGUMENT == 102);
    CHECK(GANG_OUT_OF_RANGE == 103 && GANG_NOT_FOUND == 104 && GANG_INVALID_HANDLE == 105);
    CHECK(GANG_UNKNOWN_ERROR == 198 && GANG_INTERNAL_ERROR == 199);
    CHECK(GANG_STATUS_PLACED == 1 && GANG_STATUS_UNSCHEDULABLE == 2 && GANG_STATUS_UNDECIDED == 3);
}

/* The README's tour, call by call: rack required does not fit; preferred walks up. */
static void test_readme_tour(void) {
    gang_inventory *inv = readme_inventory();
    size_t count = 0;
    OK(gang_inventory_node_count(inv, &count));
    CHECK(count == 4);
    uint64_t free_gpu = 0;
    OK(gang_inventory_available_millis(inv, "a1", GPU, &free_gpu));
    CHECK(free_gpu == 2000);
    OK(gang_inventory_available_millis(inv, "a2", "memory", &free_gpu));
    CHECK(free_gpu == 1024ULL * 1024 * 1024 * 1000);

    /* Rack required: unschedulable, with a diagnosis. */
    gang_gang *g = readme_gang(1);
    gang_status status = 0;
    gang_placement *p = SENTINEL;
    gang_diagnosis *d = SENTINEL;
    gang_error *err = NULL;
    OK(gang_inventory_place(inv, g, &status, &p, &d, &err));
    CHECK(status == GANG_STATUS_UNSCHEDULABLE);
    CHECK(p == NULL && d != NULL && err == NULL);
    gang_str s = {0};
    gang_status dstatus = 0;
    OK(gang_diagnosis_status(d, &dstatus));
    CHECK(dstatus == GANG_STATUS_UNSCHEDULABLE);
    OK(gang_diagnosis_gang(d, &s));
    CHECK(str_eq(s, "train"));
    OK(gang_diagnosis_level(d, &s));
    CHECK(str_eq(s, RACK));
    OK(gang_diagnosis_text(d, &s));
    CHECK(nul_terminated(s));
    CHECK(str_has(s, "rack b1/a fits 3 of 4 worker"));
    CHECK(str_has(s, "Relaxing to block: block b1 fits all 4 now"));
    gang_str text = s;
    OK(gang_diagnosis_text(d, &s));
    CHECK(s.data == text.data); /* made once, then kept */
    OK(gang_diagnosis_json(d, &s));
    CHECK(nul_terminated(s));
    CHECK(str_has(s, "\"status\":\"unschedulable\""));
    CHECK(str_has(s, "\"best\""));
    gang_diagnosis_free(d);
    gang_gang_free(g);

    /* Rack preferred: placed in block b1, across both racks. */
    g = readme_gang(0);
    OK(gang_inventory_place(inv, g, &status, &p, &d, &err));
    CHECK(status == GANG_STATUS_PLACED && p != NULL && d == NULL);
    OK(gang_placement_gang(p, &s));
    CHECK(str_eq(s, "train"));
    OK(gang_placement_level(p, &s));
    CHECK(str_eq(s, BLOCK));
    OK(gang_placement_domain_path(p, &s));
    CHECK(str_eq(s, "b1") && nul_terminated(s));
    size_t len = 0;
    OK(gang_placement_domain_len(p, &len));
    CHECK(len == 1);
    gang_str key = {0}, value = {0};
    OK(gang_placement_domain_at(p, 0, &key, &value));
    CHECK(str_eq(key, BLOCK) && str_eq(value, "b1"));
    CHECK_RC(gang_placement_domain_at(p, 1, &key, &value), GANG_OUT_OF_RANGE);
    OK(gang_placement_assignments_len(p, &len));
    CHECK(len >= 2);
    uint32_t total = 0;
    for (size_t i = 0; i < len; i++) {
        gang_str role = {0}, node = {0};
        uint32_t k = 0;
        OK(gang_placement_assignment_at(p, i, &role, &node, &k));
        CHECK(str_eq(role, "worker"));
        CHECK(k > 0);
        total += k;
    }
    CHECK(total == 4);
    gang_str role = {0}, node = {0};
    uint32_t k = 99;
    CHECK_RC(gang_placement_assignment_at(p, len, &role, &node, &k), GANG_OUT_OF_RANGE);
    CHECK(k == 99);
    uint64_t members = 0;
    OK(gang_placement_members(p, &members));
    CHECK(members == 4);
    uint32_t placed = 0;
    OK(gang_placement_placed(p, "worker", &placed));
    CHECK(placed == 4);
    placed = 77;
    CHECK_RC(gang_placement_placed(p, "launcher", &placed), GANG_NOT_FOUND);
    CHECK(placed == 77);
    OK(gang_placement_domains_used_len(p, &len));
    CHECK(len == 3);
    uint32_t used = 0;
    OK(gang_placement_domains_used_at(p, 0, &key, &used));
    CHECK(str_eq(key, BLOCK) && used == 1);
    OK(gang_placement_domains_used_at(p, 1, &key, &used));
    CHECK(str_eq(key, RACK) && used == 2);
    OK(gang_placement_domains_used_at(p, 2, &key, &used));
    CHECK(str_eq(key, "kubernetes.io/hostname"));
    CHECK_RC(gang_placement_domains_used_at(p, 3, &key, &used), GANG_OUT_OF_RANGE);
    bool complete = false;
    OK(gang_placement_search_complete(p, &complete));
    CHECK(complete);
    OK(gang_placement_json(p, &s));
    CHECK(nul_terminated(s) && str_has(s, "\"status\":\"placed\""));
    CHECK(str_has(s, "\"assignments\""));
    gang_placement_free(p);
    gang_gang_free(g);
    gang_inventory_free(inv);
}

/* Compile once, place many times with one solver: the same bytes every time. */
static void test_solver_reuse_and_determinism(void) {
    gang_inventory *inv = readme_inventory();
    gang_gang *g = readme_gang(0);
    gang_compiled *c = NULL;
    gang_error *err = NULL;
    OK(gang_inventory_compile(inv, g, &c, &err));
    gang_solver *solver = NULL;
    OK(gang_solver_new(&solver));
    char *first = NULL;
    for (int i = 0; i < 20; i++) {
        gang_status status = 0;
        gang_placement *p = NULL;
        gang_diagnosis *d = NULL;
        OK(gang_solver_place(solver, inv, c, &status, &p, &d, &err));
        CHECK(status == GANG_STATUS_PLACED);
        gang_str json = {0};
        OK(gang_placement_json(p, &json));
        if (first == NULL) {
            first = malloc(json.len + 1);
            memcpy(first, json.data, json.len + 1);
        } else {
            CHECK(strcmp(first, json.data) == 0);
        }
        gang_placement_free(p);
        gang_diagnosis_free(d);
    }
    /* The one-call path gives the same answer. */
    gang_status status = 0;
    gang_placement *p = NULL;
    gang_diagnosis *d = NULL;
    OK(gang_inventory_place(inv, g, &status, &p, &d, NULL));
    gang_str json = {0};
    OK(gang_placement_json(p, &json));
    CHECK(strcmp(first, json.data) == 0);
    gang_placement_free(p);
    /* So does the diagnosis-free query. */
    p = NULL;
    OK(gang_solver_find(solver, inv, c, &p, &err));
    CHECK(p != NULL);
    OK(gang_placement_json(p, &json));
    CHECK(strcmp(first, json.data) == 0);
    gang_placement_free(p);
    free(first);
    /* When nothing fits, find writes NULL and place a diagnosis. */
    {
        const char *big = "{\"name\": \"big\", \"roles\": [{\"name\": \"w\", \"count\": 1000,"
                          " \"requests\": {\"nvidia.com/gpu\": 1}}]}";
        gang_gang *bg = NULL;
        gang_compiled *bc = NULL;
        OK(gang_gang_from_json(big, strlen(big), &bg, &err));
        OK(gang_inventory_compile(inv, bg, &bc, &err));
        p = SENTINEL;
        OK(gang_solver_find(solver, inv, bc, &p, &err));
        CHECK(p == NULL);
        OK(gang_solver_place(solver, inv, bc, &status, &p, &d, &err));
        CHECK(status == GANG_STATUS_UNSCHEDULABLE && p == NULL && d != NULL);
        gang_diagnosis_free(d);
        gang_compiled_free(bc);
        gang_gang_free(bg);
    }

    /* A compiled gang placed on another inventory is compiled again for it: here the
     * preferred level does not exist there. */
    gang_inventory *other = NULL;
    const char *doc = "{\"topology\": {\"levels\": [\"rack\"]}, \"nodes\": ["
                      "{\"name\": \"x1\", \"labels\": {\"rack\": \"a\"}, \"capacity\": {\"cpu\": 4}}]}";
    OK(gang_inventory_from_json(doc, strlen(doc), &other, &err));
    p = SENTINEL;
    d = SENTINEL;
    status = 0;
    CHECK_RC(gang_solver_place(solver, other, c, &status, &p, &d, &err), GANG_INVALID_REQUEST);
    CHECK(p == SENTINEL && d == SENTINEL && status == 0);
    CHECK(err != NULL);
    gang_str field = {0};
    OK(gang_error_field(err, &field));
    CHECK(str_eq(field, "gang.topology.preferred"));
    gang_error_free(err);
    err = NULL;
    CHECK_RC(gang_solver_find(solver, other, c, &p, &err), GANG_INVALID_REQUEST);
    CHECK(p == SENTINEL && err != NULL);
    OK(gang_error_field(err, &field));
    CHECK(str_eq(field, "gang.topology.preferred"));
    gang_error_free(err);
    gang_inventory_free(other);

    /* The solver with a budget, and the compiled gang outliving inventory and gang. */
    gang_solver *budgeted = NULL;
    OK(gang_solver_new_with_budget(10, &budgeted));
    gang_gang_free(g);
    OK(gang_solver_place(budgeted, inv, c, &status, &p, &d, NULL));
    CHECK(status == GANG_STATUS_PLACED);
    gang_placement_free(p);
    gang_solver_free(budgeted);
    gang_solver_free(solver);
    gang_compiled_free(c);
    gang_inventory_free(inv);
}

/* Selectors, match expressions, tolerations, cordons, elastic roles, slices, policies. */
static void test_request_features(void) {
    const char *levels[] = {BLOCK, RACK};
    gang_inventory_builder *b = NULL;
    OK(gang_inventory_builder_new(levels, 2, &b, NULL));
    const char *names[] = {"a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"};
    for (int i = 0; i < 8; i++) {
        gang_node *n = make_node(names[i], "b1", i < 4 ? "a" : "b", 0);
        OK(gang_node_add_label(n, "zone", i < 4 ? "z1" : "z2"));
        if (i == 0) OK(gang_node_set_schedulable(n, false));
        if (i == 1) OK(gang_node_add_taint(n, "maintenance", "", GANG_EFFECT_NO_EXECUTE));
        if (i == 2) OK(gang_node_add_taint(n, "soft", "x", GANG_EFFECT_PREFER_NO_SCHEDULE));
        OK(gang_inventory_builder_add_node(b, n));
        gang_node_free(n);
    }
    gang_inventory *inv = NULL;
    OK(gang_inventory_builder_build(b, &inv, NULL));
    gang_inventory_builder_free(b);

    /* Zone z1 only: a1 is cordoned and a2 tainted, so two nodes of 8 GPUs remain. */
    gang_role *r = NULL;
    OK(gang_role_new("worker", 3, &r));
    OK(gang_role_set_request(r, GPU, "8"));
    const char *z1[] = {"z1"};
    OK(gang_role_add_match_expression(r, "zone", GANG_SELECTOR_IN, z1, 1));
    OK(gang_role_add_match_expression(r, "nvidia.com/gpu.product", GANG_SELECTOR_EXISTS, NULL, 0));
    OK(gang_role_add_match_expression(r, "spot", GANG_SELECTOR_DOES_NOT_EXIST, NULL, 0));
    const char *z9[] = {"z9", "z8"};
    OK(gang_role_add_match_expression(r, "zone", GANG_SELECTOR_NOT_IN, z9, 2));
    gang_gang *g = NULL;
    OK(gang_gang_new("sel", &g));
    OK(gang_gang_add_role(g, r));
    OK(gang_gang_set_required(g, RACK));
    gang_status status = 0;
    gang_placement *p = NULL;
    gang_diagnosis *d = NULL;
    OK(gang_inventory_place(inv, g, &status, &p, &d, NULL));
    CHECK(status == GANG_STATUS_UNSCHEDULABLE);
    gang_str s = {0};
    OK(gang_diagnosis_text(d, &s));
    CHECK(str_has(s, "fits 2 of 3 worker"));
    CHECK(str_has(s, "cordoned"));
    gang_diagnosis_free(d);
    gang_gang_free(g);

    /* Tolerating everything brings a2 back; elastic min_count accepts what fits. */
    OK(gang_role_add_toleration(r, "", GANG_TOLERATION_EXISTS, "", GANG_EFFECT_ANY));
    OK(gang_gang_new("sel", &g));
    OK(gang_gang_add_role(g, r));
    OK(gang_gang_set_required(g, RACK));
    OK(gang_inventory_place(inv, g, &status, &p, &d, NULL));
    CHECK(status == GANG_STATUS_PLACED);
    gang_placement_free(p);
    gang_gang_free(g);
    gang_role_free(r);

    OK(gang_role_new("worker", 8, &r));
    OK(gang_role_set_request(r, GPU, "8"));
    OK(gang_role_set_min_count(r, 2));
    OK(gang_gang_new("elastic", &g));
    OK(gang_gang_add_role(g, r));
    OK(gang_gang_set_required(g, RACK));
    OK(gang_inventory_place(inv, g, &status, &p, &d, NULL));
    CHECK(status == GANG_STATUS_PLACED);
    uint32_t placed = 0;
    OK(gang_placement_placed(p, "worker", &placed));
    CHECK(placed == 4); /* rack b: four untainted, schedulable nodes */
    gang_placement_free(p);
    gang_gang_free(g);
    gang_role_free(r);

    /* max_per_node, slices, policy, an unconstrained launcher, preferred cleared. */
    OK(gang_role_new("worker", 4, &r));
    OK(gang_role_set_request(r, GPU, "2"));
    OK(gang_role_set_max_per_node(r, 2));
    gang_role *launcher = NULL;
    OK(gang_role_new("launcher", 1, &launcher));
    OK(gang_role_set_request(launcher, "cpu", "1"));
    OK(gang_role_set_constrained(launcher, false));
    OK(gang_gang_new("sliced", &g));
    OK(gang_gang_add_role(g, r));
    OK(gang_gang_add_role(g, launcher));
    OK(gang_gang_set_required(g, BLOCK));
    OK(gang_gang_set_preferred(g, RACK));
    OK(gang_gang_set_preferred(g, NULL));
    OK(gang_gang_add_slice(g, RACK, 2));
    OK(gang_gang_set_policy(g, GANG_POLICY_MOST_FREE));
    OK(gang_gang_set_policy(g, GANG_POLICY_BALANCED));
    OK(gang_gang_set_policy(g, GANG_POLICY_BEST_FIT));
    OK(gang_inventory_place(inv, g, &status, &p, &d, NULL));
    CHECK(status == GANG_STATUS_PLACED);
    OK(gang_placement_placed(p, "launcher", &placed));
    CHECK(placed == 1);
    gang_str level = {0};
    OK(gang_placement_level(p, &level));
    CHECK(str_eq(level, BLOCK));
    gang_placement_free(p);
    /* Required removed: unconstrained, placed cluster-wide (empty level and path). */
    OK(gang_gang_set_required(g, NULL));
    gang_gang_free(g);
    OK(gang_gang_new("free", &g));
    OK(gang_gang_add_role(g, launcher));
    OK(gang_inventory_place(inv, g, &status, &p, &d, NULL));
    CHECK(status == GANG_STATUS_PLACED);
    OK(gang_placement_level(p, &level));
    CHECK(level.len == 0 && level.data != NULL);
    OK(gang_placement_domain_path(p, &level));
    CHECK(level.len == 0 && nul_terminated(level));
    size_t len = 9;
    OK(gang_placement_domain_len(p, &len));
    CHECK(len == 0);
    gang_placement_free(p);
    gang_gang_free(g);
    gang_role_free(launcher);
    gang_role_free(r);
    gang_inventory_free(inv);
}

/* An undecided answer: a two-role gang that greedy packing misses and whose exact
 * search has no budget (found by search against the core; if the core's greedy
 * packing ever places it, pick another instance). */
static void test_undecided(void) {
    const char *levels[] = {RACK};
    gang_inventory_builder *b = NULL;
    OK(gang_inventory_builder_new(levels, 1, &b, NULL));
    const char *cpu[] = {"1", "2", "4"}, *mem[] = {"4", "2", "5"};
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%d", i);
        gang_node *n = NULL;
        OK(gang_node_new(name, &n));
        OK(gang_node_add_label(n, RACK, "a"));
        OK(gang_node_set_capacity(n, "cpu", cpu[i]));
        OK(gang_node_set_capacity(n, "memory", mem[i]));
        OK(gang_inventory_builder_add_node(b, n));
        gang_node_free(n);
    }
    gang_inventory *inv = NULL;
    OK(gang_inventory_builder_build(b, &inv, NULL));
    gang_inventory_builder_free(b);
    gang_role *x = NULL, *y = NULL;
    OK(gang_role_new("x", 2, &x));
    OK(gang_role_set_request(x, "cpu", "2"));
    OK(gang_role_set_request(x, "memory", "2"));
    OK(gang_role_new("y", 1, &y));
    OK(gang_role_set_request(y, "cpu", "2"));
    OK(gang_role_set_request(y, "memory", "3"));
    gang_gang *g = NULL;
    OK(gang_gang_new("tight", &g));
    OK(gang_gang_add_role(g, x));
    OK(gang_gang_add_role(g, y));
    OK(gang_gang_set_required(g, RACK));
    gang_compiled *c = NULL;
    OK(gang_inventory_compile(inv, g, &c, NULL));
    gang_solver *full = NULL, *none = NULL;
    OK(gang_solver_new(&full));
    OK(gang_solver_new_with_budget(0, &none));
    gang_status status = 0;
    gang_placement *p = NULL;
    gang_diagnosis *d = NULL;
    OK(gang_solver_place(full, inv, c, &status, &p, &d, NULL));
    CHECK(status == GANG_STATUS_PLACED && p != NULL && d == NULL);
    gang_placement_free(p);
    OK(gang_solver_place(none, inv, c, &status, &p, &d, NULL));
    CHECK(status == GANG_STATUS_UNDECIDED && p == NULL && d != NULL);
    gang_status ds = 0;
    OK(gang_diagnosis_status(d, &ds));
    CHECK(ds == GANG_STATUS_UNDECIDED);
    gang_str json = {0};
    OK(gang_diagnosis_json(d, &json));
    CHECK(str_has(json, "\"status\":\"undecided\""));
    gang_diagnosis_free(d);
    gang_solver_free(full);
    gang_solver_free(none);
    gang_compiled_free(c);
    gang_gang_free(g);
    gang_role_free(x);
    gang_role_free(y);
    gang_inventory_free(inv);
}

/* Checks an error object: code, kind, field, message and JSON. */
void check_error(gang_error *err, gang_result code, const char *kind, const char *field,
                        const char *in_message) {
    CHECK(err != NULL);
    if (err == NULL) return;
    gang_result got = GANG_OK;
    OK(gang_error_code(err, &got));
    CHECK(got == code);
    gang_str s = {0};
    OK(gang_error_kind(err, &s));
    CHECK(str_eq(s, kind) && nul_terminated(s));
    OK(gang_error_field(err, &s));
    if (field) CHECK(str_eq(s, field));
    CHECK(nul_terminated(s));
    OK(gang_error_message(err, &s));
    CHECK(nul_terminated(s) && s.len > 0);
    if (in_message) CHECK(str_has(s, in_message));
    OK(gang_error_json(err, &s));
    CHECK(nul_terminated(s) && str_has(s, "\"status\":\"error\""));
    char kind_json[64];
    snprintf(kind_json, sizeof kind_json, "\"kind\":\"%s\"", kind);
    CHECK(str_has(s, kind_json));
}

/* Invalid input: each core error kind, with its field, through each way in. */
static void test_invalid_input(void) {
    gang_error *err = NULL;
    gang_inventory_builder *b = SENTINEL;

    /* A bad topology level. */
    const char *bad_levels[] = {RACK, RACK};
    CHECK_RC(gang_inventory_builder_new(bad_levels, 2, &b, &err), GANG_INVALID_INVENTORY);
    CHECK(b == SENTINEL);
    check_error(err, GANG_INVALID_INVENTORY, "invalid_inventory", "topology.levels[1]", "repeated");
    gang_error_free(err);
    err = NULL;

    /* A bad quantity names node, resource and value; the builder is left empty. */
    const char *levels[] = {RACK};
    OK(gang_inventory_builder_new(levels, 1, &b, &err));
    gang_node *n = NULL;
    OK(gang_node_new("a1", &n));
    OK(gang_node_set_capacity(n, "memory", "12 GB"));
    OK(gang_inventory_builder_add_node(b, n));
    gang_node_free(n);
    gang_inventory *inv = SENTINEL;
    CHECK_RC(gang_inventory_builder_build(b, &inv, &err), GANG_INVALID_QUANTITY);
    CHECK(inv == SENTINEL);
    check_error(err, GANG_INVALID_QUANTITY, "invalid_quantity", "nodes[a1].capacity.memory", "12 GB");
    gang_error_free(err);
    err = NULL;
    /* Without an error out-parameter: just the code. */
    OK(gang_node_new("a1", &n));
    OK(gang_node_set_used(n, GPU, "-1"));
    OK(gang_inventory_builder_add_node(b, n));
    CHECK_RC(gang_inventory_builder_build(b, &inv, NULL), GANG_INVALID_QUANTITY);
    /* A duplicate node. */
    OK(gang_node_set_used_millis(n, GPU, 0));
    OK(gang_inventory_builder_add_node(b, n));
    OK(gang_inventory_builder_add_node(b, n));
    CHECK_RC(gang_inventory_builder_build(b, &inv, &err), GANG_INVALID_INVENTORY);
    check_error(err, GANG_INVALID_INVENTORY, "invalid_inventory", NULL, "a1");
    gang_error_free(err);
    err = NULL;
    /* The builder is reusable: empty after a build, same topology. */
    OK(gang_inventory_builder_build(b, &inv, NULL));
    size_t count = 9;
    OK(gang_inventory_node_count(inv, &count));
    CHECK(count == 0);
    gang_inventory_free(inv);
    OK(gang_node_add_label(n, RACK, "a"));
    OK(gang_node_set_capacity_millis(n, GPU, 8000));
    OK(gang_inventory_builder_add_node(b, n));
    gang_node_free(n);
    OK(gang_inventory_builder_build(b, &inv, NULL));
    OK(gang_inventory_node_count(inv, &count));
    CHECK(count == 1);
    gang_inventory_builder_free(b);

    /* Look-ups of unknown names. */
    uint64_t millis = 5;
    CHECK_RC(gang_inventory_available_millis(inv, "zz", GPU, &millis), GANG_NOT_FOUND);
    CHECK_RC(gang_inventory_available_millis(inv, "a1", "tpu", &millis), GANG_NOT_FOUND);
    CHECK(millis == 5);

    /* Requests: unknown level, bad count, min_count above count, bad request
     * quantity, slice above required (contradictory). */
    gang_gang *g = NULL;
    gang_role *r = NULL;
    gang_compiled *c = SENTINEL;
    OK(gang_role_new("worker", 4, &r));
    OK(gang_role_set_request(r, GPU, "1"));
    OK(gang_gang_new("g", &g));
    OK(gang_gang_add_role(g, r));
    OK(gang_gang_set_required(g, "block"));
    CHECK_RC(gang_inventory_compile(inv, g, &c, &err), GANG_INVALID_REQUEST);
    CHECK(c == SENTINEL);
    check_error(err, GANG_INVALID_REQUEST, "invalid_request", "gang.topology.required", "block");
    gang_error_free(err);
    err = NULL;
    gang_status status = 0;
    gang_placement *p = SENTINEL;
    gang_diagnosis *d = SENTINEL;
    CHECK_RC(gang_inventory_place(inv, g, &status, &p, &d, &err), GANG_INVALID_REQUEST);
    CHECK(p == SENTINEL && d == SENTINEL && status == 0);
    gang_error_free(err);
    err = NULL;
    gang_gang_free(g);

    gang_role *zero = NULL;
    OK(gang_role_new("zero", 0, &zero));
    OK(gang_gang_new("g", &g));
    OK(gang_gang_add_role(g, zero));
    CHECK_RC(gang_inventory_compile(inv, g, &c, &err), GANG_INVALID_REQUEST);
    check_error(err, GANG_INVALID_REQUEST, "invalid_request", NULL, "zero");
    gang_error_free(err);
    err = NULL;
    gang_gang_free(g);
    gang_role_free(zero);

    OK(gang_role_set_min_count(r, 5));
    OK(gang_gang_new("g", &g));
    OK(gang_gang_add_role(g, r));
    CHECK_RC(gang_inventory_compile(inv, g, &c, &err), GANG_INVALID_REQUEST);
    gang_error_free(err);
    err = NULL;
    gang_gang_free(g);
    gang_role_free(r);

    OK(gang_role_new("worker", 4, &r));
    OK(gang_role_set_request(r, GPU, "one"));
    OK(gang_gang_new("g", &g));
    OK(gang_gang_add_role(g, r));
    CHECK_RC(gang_inventory_compile(inv, g, &c, &err), GANG_INVALID_QUANTITY);
    check_error(err, GANG_INVALID_QUANTITY, "invalid_quantity", NULL, "one");
    gang_error_free(err);
    err = NULL;
    gang_gang_free(g);
    gang_role_free(r);
    gang_inventory_free(inv);

    const char *two[] = {BLOCK, RACK};
    OK(gang_inventory_builder_new(two, 2, &b, NULL));
    n = make_node("a1", "b1", "a", 0);
    OK(gang_inventory_builder_add_node(b, n));
    gang_node_free(n);
    OK(gang_inventory_builder_build(b, &inv, NULL));
    gang_inventory_builder_free(b);
    OK(gang_role_new("worker", 4, &r));
    OK(gang_role_set_request(r, GPU, "1"));
    OK(gang_gang_new("g", &g));
    OK(gang_gang_add_role(g, r));
    OK(gang_gang_set_required(g, RACK));
    OK(gang_gang_add_slice(g, BLOCK, 2));
    CHECK_RC(gang_inventory_compile(inv, g, &c, &err), GANG_CONTRADICTORY);
    check_error(err, GANG_CONTRADICTORY, "contradictory", NULL, NULL);
    gang_error_free(err);
    err = NULL;
    gang_gang_free(g);
    gang_role_free(r);
    gang_inventory_free(inv);

    /* Documents that do not parse: the JSON path is the field. */
    const char *bad_doc = "{\"topology\": {\"levels\": []}, \"nodes\": [{\"name\": 7}]}";
    inv = SENTINEL;
    CHECK_RC(gang_inventory_from_json(bad_doc, strlen(bad_doc), &inv, &err), GANG_INVALID_SCENARIO);
    CHECK(inv == SENTINEL);
    check_error(err, GANG_INVALID_SCENARIO, "invalid_scenario", "nodes[0].name", NULL);
    gang_error_free(err);
    err = NULL;
    const char *bad_gang = "{\"name\": \"g\", \"roles\": [], \"colour\": 1}";
    g = SENTINEL;
    CHECK_RC(gang_gang_from_json(bad_gang, strlen(bad_gang), &g, &err), GANG_INVALID_SCENARIO);
    CHECK(g == SENTINEL);
    check_error(err, GANG_INVALID_SCENARIO, "invalid_scenario", NULL, "colour");
    gang_error_free(err);
    err = NULL;
    gang_scenario *sc = SENTINEL;
    CHECK_RC(gang_scenario_from_json("{", 1, &sc, &err), GANG_INVALID_SCENARIO);
    CHECK(sc == SENTINEL);
    gang_error_free(err);
    err = NULL;
    /* An empty document (NULL with length 0 is allowed) is invalid, not a crash. */
    CHECK_RC(gang_scenario_from_json(NULL, 0, &sc, &err), GANG_INVALID_SCENARIO);
    gang_error_free(err);
    err = NULL;
    /* The length is authoritative: a document need not be NUL-terminated. */
    const char *good_gang = "{\"name\": \"g\", \"roles\": [{\"name\": \"w\", \"count\": 1}]}GARBAGE";
    OK(gang_gang_from_json(good_gang, strlen(good_gang) - 7, &g, &err));
    gang_gang_free(g);
    /* Invalid UTF-8 inside a document. */
    CHECK_RC(gang_gang_from_json(BAD_UTF8, 2, &g, &err), GANG_INVALID_UTF8);
    check_error(err, GANG_INVALID_UTF8, "invalid_utf8", "json", NULL);
    gang_error_free(err);
}

/* Every function rejects NULL for every pointer argument, and writes nothing. */
static void test_null_arguments(void) {
    gang_error *err = NULL;
    gang_inventory *inv = readme_inventory();
    gang_gang *g = readme_gang(1);
    gang_role *r = readme_workers();
    gang_node *n = NULL;
    OK(gang_node_new("x", &n));
    const char *levels[] = {RACK};
    gang_inventory_builder *b = NULL;
    OK(gang_inventory_builder_new(levels, 1, &b, NULL));
    gang_compiled *c = NULL;
    OK(gang_inventory_compile(inv, g, &c, NULL));
    gang_solver *solver = NULL;
    OK(gang_solver_new(&solver));
    gang_status status = 0;
    gang_placement *p = NULL;
    gang_diagnosis *d = NULL;
    gang_gang *pg = readme_gang(0);
    OK(gang_inventory_place(inv, pg, &status, &p, &d, NULL));
    gang_gang_free(pg);
    gang_diagnosis *dg = NULL;
    gang_placement *none = NULL;
    OK(gang_inventory_place(inv, g, &status, &none, &dg, NULL));
    const char *doc = "{\"topology\": {\"levels\": [\"rack\"]}, \"nodes\": [], "
                      "\"gang\": {\"name\": \"g\", \"roles\": [{\"name\": \"w\", \"count\": 1}]}}";
    gang_scenario *sc = NULL;
    OK(gang_scenario_from_json(doc, strlen(doc), &sc, NULL));
    gang_error *e = NULL;
    CHECK_RC(gang_node_new(NULL, &n), GANG_NULL_ARGUMENT);
    CHECK_RC(gang_inventory_builder_build(NULL, NULL, &e), GANG_NULL_ARGUMENT);
    check_error(e, GANG_NULL_ARGUMENT, "null_argument", "builder", "NULL");

    gang_str s = {0};
    gang_result code;
    bool flag;
    size_t len;
    uint32_t u32;
    uint64_t u64;
    bool passed;
    gang_string *str1 = NULL, *str2 = NULL;
    void *out = SENTINEL;
#define NUL(call)                                                    \
    do {                                                             \
        CHECK_RC(call, GANG_NULL_ARGUMENT);                          \
    } while (0)
    /* errors */
    NUL(gang_error_code(NULL, &code));
    NUL(gang_error_code(e, NULL));
    NUL(gang_error_kind(NULL, &s));
    NUL(gang_error_kind(e, NULL));
    NUL(gang_error_field(NULL, &s));
    NUL(gang_error_field(e, NULL));
    NUL(gang_error_message(NULL, &s));
    NUL(gang_error_message(e, NULL));
    NUL(gang_error_json(NULL, &s));
    NUL(gang_error_json(e, NULL));
    /* nodes */
    NUL(gang_node_new(NULL, (gang_node **)&out));
    NUL(gang_node_new("x", NULL));
    NUL(gang_node_add_label(NULL, "k", "v"));
    NUL(gang_node_add_label(n, NULL, "v"));
    NUL(gang_node_add_label(n, "k", NULL));
    NUL(gang_node_set_capacity(NULL, "cpu", "1"));
    NUL(gang_node_set_capacity(n, NULL, "1"));
    NUL(gang_node_set_capacity(n, "cpu", NULL));
    NUL(gang_node_set_capacity_millis(NULL, "cpu", 1));
    NUL(gang_node_set_capacity_millis(n, NULL, 1));
    NUL(gang_node_set_used(NULL, "cpu", "1"));
    NUL(gang_node_set_used(n, NULL, "1"));
    NUL(gang_node_set_used(n, "cpu", NULL));
    NUL(gang_node_set_used_millis(NULL, "cpu", 1));
    NUL(gang_node_set_used_millis(n, NULL, 1));
    NUL(gang_node_add_taint(NULL, "k", "v", GANG_EFFECT_NO_SCHEDULE));
    NUL(gang_node_add_taint(n, NULL, "v", GANG_EFFECT_NO_SCHEDULE));
    NUL(gang_node_add_taint(n, "k", NULL, GANG_EFFECT_NO_SCHEDULE));
    NUL(gang_node_set_schedulable(NULL, true));
    /* builder and inventory */
    NUL(gang_inventory_builder_new(NULL, 1, (gang_inventory_builder **)&out, &err));
    gang_error_free(err);
    err = NULL;
    const char *null_level[] = {NULL};
    NUL(gang_inventory_builder_new(null_level, 1, (gang_inventory_builder **)&out, &err));
    check_error(err, GANG_NULL_ARGUMENT, "null_argument", "levels[0]", "levels[0]");
    gang_error_free(err);
    err = NULL;
    NUL(gang_inventory_builder_new(levels, 1, NULL, NULL));
    NUL(gang_inventory_builder_add_node(NULL, n));
    NUL(gang_inventory_builder_add_node(b, NULL));
    NUL(gang_inventory_builder_build(NULL, (gang_inventory **)&out, NULL));
    NUL(gang_inventory_builder_build(b, NULL, NULL));
    NUL(gang_inventory_from_json(NULL, 5, (gang_inventory **)&out, NULL));
    NUL(gang_inventory_from_json("{}", 2, NULL, NULL));
    NUL(gang_inventory_node_count(NULL, &len));
    NUL(gang_inventory_node_count(inv, NULL));
    NUL(gang_inventory_available_millis(NULL, "a1", GPU, &u64));
    NUL(gang_inventory_available_millis(inv, NULL, GPU, &u64));
    NUL(gang_inventory_available_millis(inv, "a1", NULL, &u64));
    NUL(gang_inventory_available_millis(inv, "a1", GPU, NULL));
    /* roles and gangs */
    NUL(gang_role_new(NULL, 1, (gang_role **)&out));
    NUL(gang_role_new("w", 1, NULL));
    NUL(gang_role_set_min_count(NULL, 1));
    NUL(gang_role_set_max_per_node(NULL, 1));
    NUL(gang_role_set_request(NULL, GPU, "1"));
    NUL(gang_role_set_request(r, NULL, "1"));
    NUL(gang_role_set_request(r, GPU, NULL));
    NUL(gang_role_set_request_millis(NULL, GPU, 1));
    NUL(gang_role_set_request_millis(r, NULL, 1));
    NUL(gang_role_add_selector(NULL, "k", "v"));
    NUL(gang_role_add_selector(r, NULL, "v"));
    NUL(gang_role_add_selector(r, "k", NULL));
    NUL(gang_role_add_match_expression(NULL, "k", GANG_SELECTOR_EXISTS, NULL, 0));
    NUL(gang_role_add_match_expression(r, NULL, GANG_SELECTOR_EXISTS, NULL, 0));
    NUL(gang_role_add_match_expression(r, "k", GANG_SELECTOR_IN, NULL, 1));
    NUL(gang_role_add_match_expression(r, "k", GANG_SELECTOR_IN, null_level, 1));
    NUL(gang_role_add_toleration(NULL, "k", GANG_TOLERATION_EXISTS, "", GANG_EFFECT_ANY));
    NUL(gang_role_add_toleration(r, NULL, GANG_TOLERATION_EXISTS, "", GANG_EFFECT_ANY));
    NUL(gang_role_add_toleration(r, "k", GANG_TOLERATION_EXISTS, NULL, GANG_EFFECT_ANY));
    NUL(gang_role_set_constrained(NULL, true));
    NUL(gang_gang_new(NULL, (gang_gang **)&out));
    NUL(gang_gang_new("g", NULL));
    NUL(gang_gang_add_role(NULL, r));
    NUL(gang_gang_add_role(g, NULL));
    NUL(gang_gang_set_required(NULL, RACK));
    NUL(gang_gang_set_preferred(NULL, RACK));
    NUL(gang_gang_add_slice(NULL, RACK, 2));
    NUL(gang_gang_add_slice(g, NULL, 2));
    NUL(gang_gang_set_policy(NULL, GANG_POLICY_BEST_FIT));
    NUL(gang_gang_from_json(NULL, 3, (gang_gang **)&out, NULL));
    NUL(gang_gang_from_json("{}", 2, NULL, NULL));
    NUL(gang_inventory_compile(NULL, g, (gang_compiled **)&out, NULL));
    NUL(gang_inventory_compile(inv, NULL, (gang_compiled **)&out, NULL));
    NUL(gang_inventory_compile(inv, g, NULL, NULL));
    /* solving */
    NUL(gang_solver_new(NULL));
    NUL(gang_solver_new_with_budget(1, NULL));
    NUL(gang_solver_set_limits(NULL, GANG_DEFAULT_WORK, 0));
    gang_placement *po = SENTINEL;
    gang_diagnosis *dout = SENTINEL;
    status = 0;
    NUL(gang_solver_place(NULL, inv, c, &status, &po, &dout, NULL));
    NUL(gang_solver_place(solver, NULL, c, &status, &po, &dout, NULL));
    NUL(gang_solver_place(solver, inv, NULL, &status, &po, &dout, NULL));
    NUL(gang_solver_place(solver, inv, c, NULL, &po, &dout, NULL));
    NUL(gang_solver_place(solver, inv, c, &status, NULL, &dout, NULL));
    NUL(gang_solver_place(solver, inv, c, &status, &po, NULL, NULL));
    NUL(gang_solver_find(NULL, inv, c, &po, NULL));
    NUL(gang_solver_find(solver, NULL, c, &po, NULL));
    NUL(gang_solver_find(solver, inv, NULL, &po, NULL));
    NUL(gang_solver_find(solver, inv, c, NULL, NULL));
    NUL(gang_inventory_place(NULL, g, &status, &po, &dout, NULL));
    NUL(gang_inventory_place(inv, NULL, &status, &po, &dout, NULL));
    NUL(gang_inventory_place(inv, g, NULL, &po, &dout, NULL));
    NUL(gang_inventory_place(inv, g, &status, NULL, &dout, NULL));
    NUL(gang_inventory_place(inv, g, &status, &po, NULL, NULL));
    CHECK(po == SENTINEL && dout == SENTINEL && status == 0);
    /* placements */
    NUL(gang_placement_gang(NULL, &s));
    NUL(gang_placement_gang(p, NULL));
    NUL(gang_placement_level(NULL, &s));
    NUL(gang_placement_level(p, NULL));
    NUL(gang_placement_domain_path(NULL, &s));
    NUL(gang_placement_domain_path(p, NULL));
    NUL(gang_placement_domain_len(NULL, &len));
    NUL(gang_placement_domain_len(p, NULL));
    NUL(gang_placement_domain_at(NULL, 0, &s, &s));
    NUL(gang_placement_domain_at(p, 0, NULL, &s));
    NUL(gang_placement_domain_at(p, 0, &s, NULL));
    NUL(gang_placement_assignments_len(NULL, &len));
    NUL(gang_placement_assignments_len(p, NULL));
    NUL(gang_placement_assignment_at(NULL, 0, &s, &s, &u32));
    NUL(gang_placement_assignment_at(p, 0, NULL, &s, &u32));
    NUL(gang_placement_assignment_at(p, 0, &s, NULL, &u32));
    NUL(gang_placement_assignment_at(p, 0, &s, &s, NULL));
    NUL(gang_placement_members(NULL, &u64));
    NUL(gang_placement_members(p, NULL));
    NUL(gang_placement_placed(NULL, "worker", &u32));
    NUL(gang_placement_placed(p, NULL, &u32));
    NUL(gang_placement_placed(p, "worker", NULL));
    NUL(gang_placement_domains_used_len(NULL, &len));
    NUL(gang_placement_domains_used_len(p, NULL));
    NUL(gang_placement_domains_used_at(NULL, 0, &s, &u32));
    NUL(gang_placement_domains_used_at(p, 0, NULL, &u32));
    NUL(gang_placement_domains_used_at(p, 0, &s, NULL));
    NUL(gang_placement_search_complete(NULL, &flag));
    NUL(gang_placement_search_complete(p, NULL));
    NUL(gang_placement_json(NULL, &s));
    NUL(gang_placement_json(p, NULL));
    /* diagnoses */
    NUL(gang_diagnosis_status(NULL, &status));
    NUL(gang_diagnosis_status(dg, NULL));
    NUL(gang_diagnosis_gang(NULL, &s));
    NUL(gang_diagnosis_gang(dg, NULL));
    NUL(gang_diagnosis_level(NULL, &s));
    NUL(gang_diagnosis_level(dg, NULL));
    NUL(gang_diagnosis_text(NULL, &s));
    NUL(gang_diagnosis_text(dg, NULL));
    NUL(gang_diagnosis_json(NULL, &s));
    NUL(gang_diagnosis_json(dg, NULL));
    /* scenarios and strings */
    NUL(gang_scenario_from_json(NULL, 4, (gang_scenario **)&out, NULL));
    NUL(gang_scenario_from_json(doc, strlen(doc), NULL, NULL));
    NUL(gang_scenario_inventory(NULL, (gang_inventory **)&out, NULL));
    NUL(gang_scenario_inventory(sc, NULL, NULL));
    NUL(gang_scenario_gang(NULL, (gang_gang **)&out));
    NUL(gang_scenario_gang(sc, NULL));
    NUL(gang_scenario_check(NULL, &passed, &str1, &str2));
    NUL(gang_scenario_check(sc, NULL, &str1, &str2));
    NUL(gang_scenario_check(sc, &passed, NULL, &str2));
    NUL(gang_scenario_check(sc, &passed, &str1, NULL));
    CHECK(str1 == NULL && str2 == NULL);
    NUL(gang_string_view(NULL, &s));
    OK(gang_scenario_check(sc, &passed, &str1, &str2));
    NUL(gang_string_view(str1, NULL));
    gang_string_free(str1);
    gang_string_free(str2);
#undef NUL
    CHECK(out == SENTINEL);

    gang_error_free(e);
    gang_scenario_free(sc);
    gang_diagnosis_free(dg);
    gang_placement_free(p);
    gang_solver_free(solver);
    gang_compiled_free(c);
    gang_inventory_builder_free(b);
    gang_node_free(n);
    gang_role_free(r);
    gang_gang_free(g);
    gang_inventory_free(inv);
}

/* Strings that are not UTF-8, and enumeration values outside their enumeration. */
static void test_bad_strings_and_enums(void) {
    gang_node *n = NULL;
    OK(gang_node_new("x", &n));
    gang_role *r = NULL;
    OK(gang_role_new("w", 1, &r));
    gang_gang *g = NULL;
    OK(gang_gang_new("g", &g));
    void *out = SENTINEL;
    gang_error *err = NULL;
    CHECK_RC(gang_node_new(BAD_UTF8, (gang_node **)&out), GANG_INVALID_UTF8);
    CHECK_RC(gang_node_add_label(n, BAD_UTF8, "v"), GANG_INVALID_UTF8);
    CHECK_RC(gang_node_add_label(n, "k", BAD_UTF8), GANG_INVALID_UTF8);
    CHECK_RC(gang_node_set_capacity(n, BAD_UTF8, "1"), GANG_INVALID_UTF8);
    CHECK_RC(gang_node_set_capacity(n, "cpu", BAD_UTF8), GANG_INVALID_UTF8);
    CHECK_RC(gang_node_set_capacity_millis(n, BAD_UTF8, 1), GANG_INVALID_UTF8);
    CHECK_RC(gang_node_set_used(n, "cpu", BAD_UTF8), GANG_INVALID_UTF8);
    CHECK_RC(gang_node_set_used_millis(n, BAD_UTF8, 1), GANG_INVALID_UTF8);
    CHECK_RC(gang_node_add_taint(n, BAD_UTF8, "", GANG_EFFECT_NO_SCHEDULE), GANG_INVALID_UTF8);
    const char *bad_levels[] = {BAD_UTF8};
    CHECK_RC(gang_inventory_builder_new(bad_levels, 1, (gang_inventory_builder **)&out, &err),
             GANG_INVALID_UTF8);
    check_error(err, GANG_INVALID_UTF8, "invalid_utf8", "levels[0]", NULL);
    gang_error_free(err);
    CHECK_RC(gang_inventory_from_json(BAD_UTF8, 2, (gang_inventory **)&out, NULL), GANG_INVALID_UTF8);
    CHECK_RC(gang_role_new(BAD_UTF8, 1, (gang_role **)&out), GANG_INVALID_UTF8);
    CHECK_RC(gang_role_set_request(r, "cpu", BAD_UTF8), GANG_INVALID_UTF8);
    CHECK_RC(gang_role_set_request_millis(r, BAD_UTF8, 1), GANG_INVALID_UTF8);
    CHECK_RC(gang_role_add_selector(r, BAD_UTF8, "v"), GANG_INVALID_UTF8);
    CHECK_RC(gang_role_add_match_expression(r, "k", GANG_SELECTOR_IN, bad_levels, 1), GANG_INVALID_UTF8);
    CHECK_RC(gang_role_add_toleration(r, "k", GANG_TOLERATION_EQUAL, BAD_UTF8, GANG_EFFECT_ANY),
             GANG_INVALID_UTF8);
    CHECK_RC(gang_gang_new(BAD_UTF8, (gang_gang **)&out), GANG_INVALID_UTF8);
    CHECK_RC(gang_gang_set_required(g, BAD_UTF8), GANG_INVALID_UTF8);
    CHECK_RC(gang_gang_set_preferred(g, BAD_UTF8), GANG_INVALID_UTF8);
    CHECK_RC(gang_gang_add_slice(g, BAD_UTF8, 2), GANG_INVALID_UTF8);
    CHECK_RC(gang_scenario_from_json(BAD_UTF8, 2, (gang_scenario **)&out, NULL), GANG_INVALID_UTF8);
    CHECK(out == SENTINEL);

    CHECK_RC(gang_node_add_taint(n, "k", "v", GANG_EFFECT_ANY), GANG_INVALID_ARGUMENT);
    CHECK_RC(gang_node_add_taint(n, "k", "v", 4), GANG_INVALID_ARGUMENT);
    CHECK_RC(gang_role_add_toleration(r, "k", 0, "v", GANG_EFFECT_ANY), GANG_INVALID_ARGUMENT);
    CHECK_RC(gang_role_add_toleration(r, "k", 3, "v", GANG_EFFECT_ANY), GANG_INVALID_ARGUMENT);
    CHECK_RC(gang_role_add_toleration(r, "k", GANG_TOLERATION_EQUAL, "v", 4), GANG_INVALID_ARGUMENT);
    CHECK_RC(gang_role_add_match_expression(r, "k", 0, NULL, 0), GANG_INVALID_ARGUMENT);
    CHECK_RC(gang_role_add_match_expression(r, "k", 5, NULL, 0), GANG_INVALID_ARGUMENT);
    CHECK_RC(gang_gang_set_policy(g, 0), GANG_INVALID_ARGUMENT);
    CHECK_RC(gang_gang_set_policy(g, 4), GANG_INVALID_ARGUMENT);
    OK(gang_node_add_taint(n, "k", "v", GANG_EFFECT_NO_EXECUTE));
    OK(gang_role_add_toleration(r, "k", GANG_TOLERATION_EQUAL, "v", GANG_EFFECT_NO_SCHEDULE));

    gang_gang_free(g);
    gang_role_free(r);
    gang_node_free(n);
}

/* The free contract: NULL is a no-op; the pattern free-then-NULL makes a second
 * free harmless. (A real double free is undefined behaviour by the contract; that the
 * library detects it while it can is test_handles.c's business.) */
static void test_free_contract(void) {
    gang_error_free(NULL);
    gang_node_free(NULL);
    gang_inventory_builder_free(NULL);
    gang_inventory_free(NULL);
    gang_role_free(NULL);
    gang_gang_free(NULL);
    gang_compiled_free(NULL);
    gang_solver_free(NULL);
    gang_placement_free(NULL);
    gang_diagnosis_free(NULL);
    gang_scenario_free(NULL);
    gang_string_free(NULL);

    gang_inventory *inv = readme_inventory();
    gang_inventory_free(inv);
    inv = NULL;
    gang_inventory_free(inv);
    gang_solver *s = NULL;
    OK(gang_solver_new(&s));
    gang_solver_free(s);
    s = NULL;
    gang_solver_free(s);
    CHECK(inv == NULL && s == NULL);
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    size_t got = fread(buf, 1, (size_t)size, f);
    fclose(f);
    buf[got] = '\0';
    *len = got;
    return buf;
}

/* Copies a view into a new NUL-terminated string. */
static char *dup_view(gang_str s) {
    char *out = malloc(s.len + 1);
    memcpy(out, s.data, s.len);
    out[s.len] = '\0';
    return out;
}

/* One scenario: the core's own check passes, and the same scenario through the ABI,
 * step by step (build, compile, place with a solver; and the one-call place), gives
 * the same document byte for byte. */
static int run_scenario(const char *path) {
    int before = failures;
    size_t len = 0;
    char *text = read_file(path, &len);
    CHECK(text != NULL);
    if (!text) return 0;
    gang_scenario *sc = NULL;
    gang_error *err = NULL;
    OK(gang_scenario_from_json(text, len, &sc, &err));
    free(text);
    if (sc == NULL) {
        gang_error_free(err);
        return 0;
    }
    bool passed = false;
    gang_string *fails = NULL, *expected = NULL;
    OK(gang_scenario_check(sc, &passed, &fails, &expected));
    gang_str f = {0}, want = {0};
    OK(gang_string_view(fails, &f));
    OK(gang_string_view(expected, &want));
    CHECK(passed);
    if (!passed) fprintf(stderr, "  %s: %.*s\n", path, (int)f.len, f.data);
    CHECK(passed == (f.len == 0));

    char *got = NULL;
    char *got_one_call = NULL;
    gang_inventory *inv = NULL;
    gang_gang *g = NULL;
    gang_compiled *c = NULL;
    OK(gang_scenario_gang(sc, &g));
    gang_str s = {0};
    if (gang_scenario_inventory(sc, &inv, &err) != GANG_OK) {
        OK(gang_error_json(err, &s));
        got = dup_view(s);
    } else if (gang_inventory_compile(inv, g, &c, &err) != GANG_OK) {
        OK(gang_error_json(err, &s));
        got = dup_view(s);
    } else {
        gang_solver *solver = NULL;
        OK(gang_solver_new(&solver));
        gang_status status = 0;
        gang_placement *p = NULL;
        gang_diagnosis *d = NULL;
        OK(gang_solver_place(solver, inv, c, &status, &p, &d, &err));
        if (status == GANG_STATUS_PLACED) {
            CHECK(p != NULL && d == NULL);
            OK(gang_placement_json(p, &s));
            /* The accessors agree with the document. */
            size_t n = 0;
            uint64_t members = 0, sum = 0;
            OK(gang_placement_assignments_len(p, &n));
            OK(gang_placement_members(p, &members));
            for (size_t i = 0; i < n; i++) {
                gang_str role = {0}, node = {0};
                uint32_t k = 0;
                OK(gang_placement_assignment_at(p, i, &role, &node, &k));
                sum += k;
                char *nm = dup_view(node);
                char needle[256];
                snprintf(needle, sizeof needle, "\"node\":\"%s\"", nm);
                CHECK(str_has(s, needle));
                free(nm);
            }
            CHECK(sum == members);
        } else {
            CHECK(p == NULL && d != NULL);
            gang_status ds = 0;
            OK(gang_diagnosis_status(d, &ds));
            CHECK(ds == status);
            OK(gang_diagnosis_json(d, &s));
            gang_str t = {0};
            OK(gang_diagnosis_text(d, &t));
            CHECK(t.len > 0);
        }
        got = dup_view(s);
        gang_placement_free(p);
        gang_diagnosis_free(d);
        gang_solver_free(solver);

        /* The one-call path. */
        status = 0;
        p = NULL;
        d = NULL;
        OK(gang_inventory_place(inv, g, &status, &p, &d, NULL));
        if (p) OK(gang_placement_json(p, &s));
        if (d) OK(gang_diagnosis_json(d, &s));
        got_one_call = dup_view(s);
        gang_placement_free(p);
        gang_diagnosis_free(d);
    }
    CHECK(strlen(got) == want.len && strcmp(got, want.data) == 0);
    if (strcmp(got, want.data) != 0)
        fprintf(stderr, "  %s:\n    ABI:  %s\n    core: %s\n", path, got, want.data);
    if (got_one_call) CHECK(strcmp(got_one_call, want.data) == 0);
    free(got);
    free(got_one_call);
    gang_error_free(err);
    gang_compiled_free(c);
    gang_gang_free(g);
    gang_inventory_free(inv);
    gang_string_free(fails);
    gang_string_free(expected);
    gang_scenario_free(sc);
    return failures == before;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_scenarios(const char *dir) {
    DIR *dp = opendir(dir);
    CHECK(dp != NULL);
    if (!dp) return;
    char *names[512];
    size_t n = 0;
    struct dirent *ent;
    while ((ent = readdir(dp)) != NULL && n < 512) {
        size_t l = strlen(ent->d_name);
        if (l > 5 && strcmp(ent->d_name + l - 5, ".json") == 0) {
            names[n] = malloc(strlen(dir) + l + 2);
            sprintf(names[n], "%s/%s", dir, ent->d_name);
            n++;
        }
    }
    closedir(dp);
    qsort(names, n, sizeof names[0], cmp_names);
    CHECK(n >= 20);
    size_t ok = 0;
    for (size_t i = 0; i < n; i++) {
        ok += (size_t)run_scenario(names[i]);
        free(names[i]);
    }
    printf("scenarios: %zu of %zu agree with the core\n", ok, n);
}

/* Setting a label, a capacity or a usage twice on one node is a documented overwrite:
 * the later value replaces the earlier one (as in the core's set_* builders). */
static void test_setting_twice_replaces(void) {
    const char *levels[] = {RACK};
    gang_inventory_builder *b = NULL;
    gang_error *err = NULL;
    OK(gang_inventory_builder_new(levels, 1, &b, &err));
    gang_node *n = NULL;
    OK(gang_node_new("n1", &n));
    OK(gang_node_add_label(n, RACK, "a"));
    OK(gang_node_add_label(n, RACK, "b"));
    OK(gang_node_set_capacity(n, GPU, "8"));
    OK(gang_node_set_capacity_millis(n, GPU, 2000));
    OK(gang_node_set_used(n, GPU, "1"));
    OK(gang_node_set_used_millis(n, GPU, 500));
    OK(gang_inventory_builder_add_node(b, n));
    gang_node_free(n);
    gang_inventory *inv = NULL;
    OK(gang_inventory_builder_build(b, &inv, &err));
    gang_inventory_builder_free(b);
    uint64_t free_gpu = 0;
    OK(gang_inventory_available_millis(inv, "n1", GPU, &free_gpu));
    CHECK(free_gpu == 1500); /* capacity 2000m (the second), used 500m (the second) */
    gang_string *json = NULL;
    OK(gang_inventory_node_json(inv, "n1", &json, &err));
    gang_str view = {0};
    OK(gang_string_view(json, &view));
    CHECK(strstr(view.data, "\"b\"") != NULL && strstr(view.data, "\"a\"") == NULL);
    gang_string_free(json);
    gang_inventory_free(inv);
}

/* The deepest topology allowed (64 levels, gang_core's MAX_LEVELS) places and is
 * diagnosed on a thread with a 256 KiB stack: no call's stack depth grows with the
 * input. 65 levels are refused up front. */
static void *deep_topology(void *arg) {
    (void)arg;
    enum { LEVELS = 64 };
    static char names[LEVELS + 1][24];
    const char *levels[LEVELS + 1];
    for (int i = 0; i <= LEVELS; i++) {
        snprintf(names[i], sizeof names[i], "level-%d", i);
        levels[i] = names[i];
    }
    gang_inventory_builder *b = NULL;
    gang_error *err = NULL;
    CHECK(gang_inventory_builder_new(levels, LEVELS + 1, &b, &err) == GANG_INVALID_INVENTORY);
    gang_error_free(err);
    err = NULL;
    OK(gang_inventory_builder_new(levels, LEVELS, &b, &err));
    for (int k = 0; k < 2; k++) {
        gang_node *n = NULL;
        OK(gang_node_new(k == 0 ? "n1" : "n2", &n));
        for (int i = 0; i < LEVELS; i++) {
            OK(gang_node_add_label(n, levels[i], "x"));
        }
        OK(gang_node_set_capacity(n, GPU, "2"));
        OK(gang_inventory_builder_add_node(b, n));
        gang_node_free(n);
    }
    gang_inventory *inv = NULL;
    OK(gang_inventory_builder_build(b, &inv, &err));
    gang_inventory_builder_free(b);
    for (int members = 4; members <= 5; members++) {
        gang_role *r = NULL;
        OK(gang_role_new("w", members, &r));
        OK(gang_role_set_request(r, GPU, "1"));
        gang_gang *g = NULL;
        OK(gang_gang_new("g", &g));
        OK(gang_gang_add_role(g, r));
        OK(gang_gang_set_required(g, levels[LEVELS - 1]));
        gang_status status = 0;
        gang_placement *p = NULL;
        gang_diagnosis *d = NULL;
        OK(gang_inventory_place(inv, g, &status, &p, &d, &err));
        /* 4 members fit the two 2-GPU nodes of the innermost domain; 5 do not. */
        CHECK(status == (members == 4 ? GANG_STATUS_PLACED : GANG_STATUS_UNSCHEDULABLE));
        gang_placement_free(p);
        gang_diagnosis_free(d);
        gang_gang_free(g);
        gang_role_free(r);
    }
    gang_inventory_free(inv);
    return NULL;
}

static void test_small_stack(void) {
    pthread_attr_t attr;
    pthread_t thread;
    CHECK(pthread_attr_init(&attr) == 0);
    CHECK(pthread_attr_setstacksize(&attr, 256 * 1024) == 0);
    CHECK(pthread_create(&thread, &attr, deep_topology, NULL) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    pthread_attr_destroy(&attr);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s <scenario directory>\n", argv[0]);
        return 2;
    }
    test_version();
    test_result_names();
    test_readme_tour();
    test_solver_reuse_and_determinism();
    test_request_features();
    test_undecided();
    test_limits();
    test_invalid_input();
    test_null_arguments();
    test_bad_strings_and_enums();
    test_free_contract();
    test_lifecycle();
    test_setting_twice_replaces();
    test_small_stack();
    test_scenarios(argv[1]);
    if (failures) {
        fprintf(stderr, "%d of %d checks FAILED\n", failures, checks);
        return 1;
    }
    printf("all %d checks passed (gang %s)\n", checks, gang_version());
    return 0;
}
