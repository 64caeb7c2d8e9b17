/*
 * The lifecycle through the C ABI (built and run with test_gang.c, under ASan, UBSan
 * and the leak checker): reserve and release (conflicts change nothing; a second release
 * credits nothing), reservation snapshots, node changes and their reports, replacement
 * inside the gang's domain (placed and pending), spread replicas, admission of queues;
 * NULL for every pointer argument, invalid UTF-8, bad enumeration values, indexes out
 * of range, unknown ids and nodes, and the free contract of the new handles.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define LC_BLOCK "topology.example.com/block"
#define LC_RACK "topology.example.com/rack"
#define LC_GPU "nvidia.com/gpu"
#define LC_BAD_UTF8 "\xff\xfe"

static gang_inventory *inventory_from(const char *doc) {
    gang_inventory *inv = NULL;
    gang_error *err = NULL;
    OK(gang_inventory_from_json(doc, strlen(doc), &inv, &err));
    gang_error_free(err);
    return inv;
}

static gang_gang *gang_from(const char *doc) {
    gang_gang *g = NULL;
    OK(gang_gang_from_json(doc, strlen(doc), &g, NULL));
    return g;
}

/* A node of the scenario files' shape: block, rack, 8 GPUs with `used` used. */
#define NODE(name, block, rack, used)                                                  \
    "{\"name\": \"" name "\", \"labels\": {\"" LC_BLOCK "\": \"" block "\", \"" LC_RACK \
    "\": \"" rack "\"}, \"capacity\": {\"" LC_GPU "\": 8, \"pods\": 110}, \"used\": {\"" \
    LC_GPU "\": " used "}}"

#define CLUSTER(nodes) \
    "{\"topology\": {\"levels\": [\"" LC_BLOCK "\", \"" LC_RACK "\"]}, \"nodes\": [" nodes "]}"

/* `count` workers of one GPU, all in one rack. */
#define WORKERS(name, count)                                                            \
    "{\"name\": \"" name "\", \"roles\": [{\"name\": \"worker\", \"count\": " count    \
    ", \"requests\": {\"" LC_GPU "\": 1, \"pods\": 1}}], \"topology\": {\"required\": \"" \
    LC_RACK "\"}}"

/* The same with at most two a node: a rack whose one node could take them all (the
 * most compact choice) cannot, as scenario 21 says. */
#define WORKERS_TWO_A_NODE(name, count)                                                 \
    "{\"name\": \"" name "\", \"roles\": [{\"name\": \"worker\", \"count\": " count    \
    ", \"max_per_node\": 2, \"requests\": {\"" LC_GPU "\": 1, \"pods\": 1}}], "         \
    "\"topology\": {\"required\": \"" LC_RACK "\"}}"

static uint64_t available(const gang_inventory *inv, const char *node) {
    uint64_t m = 0;
    OK(gang_inventory_available_millis(inv, node, LC_GPU, &m));
    return m;
}

static size_t live_reservations(const gang_inventory *inv) {
    size_t n = 999;
    OK(gang_inventory_reservation_ids(inv, NULL, 0, &n));
    return n;
}

static void valid(const gang_inventory *inv) {
    gang_error *err = NULL;
    OK(gang_inventory_validate(inv, &err));
    if (err) {
        gang_str m = {0};
        gang_error_message(err, &m);
        fprintf(stderr, "  %.*s\n", (int)m.len, m.data);
        gang_error_free(err);
    }
}

/* Places `g` on `inv` and returns the placement (status PLACED expected). */
static gang_placement *place(const gang_inventory *inv, const gang_gang *g) {
    gang_status status = 0;
    gang_placement *p = NULL;
    gang_diagnosis *d = NULL;
    OK(gang_inventory_place(inv, g, &status, &p, &d, NULL));
    CHECK(status == GANG_STATUS_PLACED && p != NULL && d == NULL);
    gang_diagnosis_free(d);
    return p;
}

/* Reserve, inspect, conflict (nothing applied), release, release again (nothing
 * credited). */
static void test_reserve_release(void) {
    /* Rack a has 4 + 2 GPUs free: the 4-worker gang fits there (best fit), and the same
     * placement can never be reserved twice. */
    gang_inventory *inv = inventory_from(CLUSTER(NODE("a1", "b1", "a", "4") ","
                                                 NODE("a2", "b1", "a", "6") ","
                                                 NODE("b1", "b1", "b", "0")));
    gang_gang *g = gang_from(WORKERS_TWO_A_NODE("train", "4"));
    gang_placement *p = place(inv, g);
    CHECK(live_reservations(inv) == 0);

    uint64_t id = 77;
    gang_error *err = NULL;
    OK(gang_inventory_reserve(inv, p, &id, &err));
    CHECK(err == NULL && id != 77);
    CHECK(available(inv, "a1") + available(inv, "a2") == 2000);
    CHECK(available(inv, "b1") == 8000);
    valid(inv);

    /* The id carries its inventory: another inventory, holding a reservation with the
     * same serial number, refuses it (naming both) and frees nothing. */
    {
        gang_inventory *other = inventory_from(CLUSTER(NODE("a1", "b1", "a", "4") ","
                                                       NODE("a2", "b1", "a", "6") ","
                                                       NODE("b1", "b1", "b", "0")));
        gang_placement *q = place(other, g);
        uint64_t mine = 0;
        OK(gang_inventory_reserve(other, q, &mine, NULL));
        CHECK(mine != id);
        CHECK_RC(gang_inventory_release(other, id, &err), GANG_UNKNOWN_RESERVATION);
        check_error(err, GANG_UNKNOWN_RESERVATION, "unknown_reservation", "reservation",
                    "holds no such reservation");
        gang_error_free(err);
        err = NULL;
        CHECK(live_reservations(other) == 1 && live_reservations(inv) == 1);
        CHECK(available(other, "a1") + available(other, "a2") == 2000);
        gang_placement_free(q);
        gang_inventory_free(other);
    }

    /* The snapshot. */
    gang_reservation *r = NULL;
    OK(gang_inventory_reservation(inv, id, &r, &err));
    uint64_t rid = 0;
    OK(gang_reservation_id(r, &rid));
    CHECK(rid == id);
    gang_str s = {0}, t = {0};
    OK(gang_reservation_gang(r, &s));
    CHECK(str_eq(s, "train"));
    OK(gang_reservation_domain_path(r, &s));
    CHECK(str_eq(s, "b1/a") && nul_terminated(s));
    size_t len = 0;
    OK(gang_reservation_domain_len(r, &len));
    CHECK(len == 2);
    OK(gang_reservation_domain_at(r, 1, &s, &t));
    CHECK(str_eq(s, LC_RACK) && str_eq(t, "a"));
    CHECK_RC(gang_reservation_domain_at(r, 2, &s, &t), GANG_OUT_OF_RANGE);
    uint64_t members = 0;
    OK(gang_reservation_member_count(r, &members));
    CHECK(members == 4);
    OK(gang_reservation_members_len(r, &len));
    CHECK(len >= 1 && len <= 2);
    uint32_t sum = 0, k = 0;
    for (size_t i = 0; i < len; i++) {
        OK(gang_reservation_member_at(r, i, &s, &t, &k));
        CHECK(str_eq(s, "worker") && (str_eq(t, "a1") || str_eq(t, "a2")));
        sum += k;
    }
    CHECK(sum == 4);
    k = 99;
    CHECK_RC(gang_reservation_member_at(r, len, &s, &t, &k), GANG_OUT_OF_RANGE);
    CHECK(k == 99);
    /* Usage: 1 GPU and 1 pod per member, per node. */
    OK(gang_reservation_usage_len(r, &len));
    CHECK(len >= 2);
    uint64_t gpus = 0, pods = 0, m = 0;
    for (size_t i = 0; i < len; i++) {
        OK(gang_reservation_usage_at(r, i, &s, &t, &m));
        if (str_eq(t, LC_GPU)) gpus += m;
        if (str_eq(t, "pods")) pods += m;
    }
    CHECK(gpus == 4000 && pods == 4000);
    CHECK_RC(gang_reservation_usage_at(r, len, &s, &t, &m), GANG_OUT_OF_RANGE);
    OK(gang_reservation_lost_len(r, &len));
    CHECK(len == 0);
    CHECK_RC(gang_reservation_lost_at(r, 0, &s, &t, &k), GANG_OUT_OF_RANGE);

    /* The ids, into a buffer too small, then big enough. */
    uint64_t ids[4] = {9, 9, 9, 9};
    size_t count = 0;
    OK(gang_inventory_reservation_ids(inv, ids, 0, &count));
    CHECK(count == 1 && ids[0] == 9);
    OK(gang_inventory_reservation_ids(inv, ids, 4, &count));
    CHECK(count == 1 && ids[0] == id && ids[1] == 9);

    /* The same placement again: a conflict naming a node; nothing applied. */
    uint64_t a1 = available(inv, "a1"), a2 = available(inv, "a2");
    uint64_t again = 77;
    CHECK_RC(gang_inventory_reserve(inv, p, &again, &err), GANG_CONFLICT);
    CHECK(again == 77);
    check_error(err, GANG_CONFLICT, "conflict", "placement", "free, the placement needs");
    gang_error_free(err);
    err = NULL;
    CHECK_RC(gang_inventory_reserve(inv, p, &again, NULL), GANG_CONFLICT);
    CHECK(available(inv, "a1") == a1 && available(inv, "a2") == a2);
    CHECK(live_reservations(inv) == 1);
    valid(inv);

    /* Release gives back exactly what was held; the snapshot does not change. */
    OK(gang_inventory_release(inv, id, &err));
    CHECK(err == NULL);
    CHECK(available(inv, "a1") == 4000 && available(inv, "a2") == 2000);
    CHECK(live_reservations(inv) == 0);
    OK(gang_reservation_member_count(r, &members));
    CHECK(members == 4);
    gang_reservation_free(r);
    r = NULL;
    valid(inv);

    /* Twice: an error that credits nothing. */
    CHECK_RC(gang_inventory_release(inv, id, &err), GANG_UNKNOWN_RESERVATION);
    check_error(err, GANG_UNKNOWN_RESERVATION, "unknown_reservation", "reservation", "unknown reservation");
    gang_error_free(err);
    err = NULL;
    CHECK_RC(gang_inventory_release(inv, id, NULL), GANG_UNKNOWN_RESERVATION);
    CHECK_RC(gang_inventory_release(inv, 123456, NULL), GANG_UNKNOWN_RESERVATION);
    CHECK(available(inv, "a1") == 4000 && available(inv, "a2") == 2000);
    r = SENTINEL;
    CHECK_RC(gang_inventory_reservation(inv, id, &r, &err), GANG_UNKNOWN_RESERVATION);
    CHECK(r == SENTINEL);
    check_error(err, GANG_UNKNOWN_RESERVATION, "unknown_reservation", "reservation", NULL);
    gang_error_free(err);
    err = NULL;

    /* The placement still fits now: reserved again under a new id (never reused). */
    uint64_t id2 = 0;
    OK(gang_inventory_reserve(inv, p, &id2, NULL));
    CHECK(id2 != id);
    /* Freeing the placement does not touch the reservation. */
    gang_placement_free(p);
    CHECK(live_reservations(inv) == 1);
    OK(gang_inventory_release(inv, id2, NULL));
    valid(inv);

    gang_gang_free(g);
    gang_inventory_free(inv);
}

/* Checks one lost group of a change report. */
static void check_lost(const gang_change *c, uint64_t id, const char *node, uint32_t count) {
    size_t len = 0;
    OK(gang_change_lost_len(c, &len));
    CHECK(len == 1);
    uint64_t rid = 0;
    gang_str role = {0}, n = {0};
    uint32_t k = 0;
    OK(gang_change_lost_at(c, 0, &rid, &role, &n, &k));
    CHECK(rid == id && str_eq(role, "worker") && str_eq(n, node) && k == count);
    CHECK_RC(gang_change_lost_at(c, 1, &rid, &role, &n, &k), GANG_OUT_OF_RANGE);
    OK(gang_change_overcommits_len(c, &len));
    CHECK(len == 0);
    OK(gang_change_displaced_len(c, &len));
    CHECK(len == 0);
    gang_str json = {0};
    OK(gang_change_json(c, &json));
    CHECK(nul_terminated(json) && str_has(json, "\"lost\":[{") && str_has(json, "\"displaced\":[]"));
}

/* Scenario 21 through the ABI: a node removed, its workers replaced inside the rack; a
 * node failed, the replacement pending (bound to the rack, although rack b has room);
 * the node back, the replacement placed. Then capacity, usage, labels, cordons. */
static void test_nodes_and_replace(void) {
    gang_inventory *inv = inventory_from(CLUSTER(NODE("a1", "b1", "a", "6") ","
                                                 NODE("a2", "b1", "a", "6") ","
                                                 NODE("a3", "b1", "a", "6") ","
                                                 NODE("b1", "b1", "b", "0")));
    gang_gang *g = gang_from(WORKERS_TWO_A_NODE("train", "4"));
    gang_placement *p = place(inv, g);
    uint64_t id = 0;
    OK(gang_inventory_reserve(inv, p, &id, NULL));
    gang_placement_free(p);
    CHECK(available(inv, "a1") == 0 && available(inv, "a2") == 0 && available(inv, "a3") == 2000);

    /* Remove a1: 2 workers lost. */
    gang_error *err = NULL;
    gang_change *c = NULL;
    OK(gang_inventory_remove_node(inv, "a1", &c, &err));
    check_lost(c, id, "a1", 2);
    gang_change_free(c);
    c = NULL;
    size_t count = 0;
    OK(gang_inventory_node_count(inv, &count));
    CHECK(count == 3);
    valid(inv);
    gang_reservation *r = NULL;
    OK(gang_inventory_reservation(inv, id, &r, NULL));
    size_t len = 0;
    OK(gang_reservation_lost_len(r, &len));
    CHECK(len == 1);
    gang_str s = {0}, t = {0};
    uint32_t k = 0;
    OK(gang_reservation_lost_at(r, 0, &s, &t, &k));
    CHECK(str_eq(s, "worker") && str_eq(t, "a1") && k == 2);
    uint64_t members = 0;
    OK(gang_reservation_member_count(r, &members));
    CHECK(members == 2);
    gang_reservation_free(r);

    /* Replace: inside rack a (a3), not on b1. */
    gang_status status = 0;
    gang_replacement *rep = NULL;
    OK(gang_inventory_replace(inv, id, &status, &rep, &err));
    CHECK(status == GANG_STATUS_PLACED);
    gang_status rs = 0;
    OK(gang_replacement_status(rep, &rs));
    CHECK(rs == GANG_STATUS_PLACED);
    OK(gang_replacement_added_len(rep, &len));
    CHECK(len == 1);
    OK(gang_replacement_added_at(rep, 0, &s, &t, &k));
    CHECK(str_eq(s, "worker") && str_eq(t, "a3") && k == 2);
    CHECK_RC(gang_replacement_added_at(rep, 1, &s, &t, &k), GANG_OUT_OF_RANGE);
    OK(gang_replacement_text(rep, &s));
    CHECK(s.len == 0 && nul_terminated(s));
    OK(gang_replacement_json(rep, &s));
    CHECK(nul_terminated(s) && str_has(s, "\"status\":\"placed\"") && str_has(s, "\"node\":\"a3\""));
    gang_replacement_free(rep);
    rep = NULL;
    CHECK(available(inv, "a3") == 0 && available(inv, "b1") == 8000);
    valid(inv);

    /* Nothing lost: placed, nothing added. */
    OK(gang_inventory_replace(inv, id, &status, &rep, NULL));
    CHECK(status == GANG_STATUS_PLACED);
    OK(gang_replacement_added_len(rep, &len));
    CHECK(len == 0);
    gang_replacement_free(rep);
    rep = NULL;

    /* Fail a2: 2 lost; rack a is full, rack b has room, the gang is bound to rack a. */
    OK(gang_inventory_fail_node(inv, "a2", &c, &err));
    check_lost(c, id, "a2", 2);
    gang_change_free(c);
    c = NULL;
    CHECK(available(inv, "a2") == 2000); /* given back, but cordoned */
    OK(gang_inventory_replace(inv, id, &status, &rep, &err));
    CHECK(status == GANG_STATUS_PENDING);
    OK(gang_replacement_status(rep, &rs));
    CHECK(rs == GANG_STATUS_PENDING);
    OK(gang_replacement_added_len(rep, &len));
    CHECK(len == 0);
    CHECK_RC(gang_replacement_added_at(rep, 0, &s, &t, &k), GANG_OUT_OF_RANGE);
    OK(gang_replacement_text(rep, &s));
    CHECK(nul_terminated(s));
    CHECK(str_has(s, "rack b1/a has no room for 2 worker"));
    CHECK(str_has(s, "rack b1/b has room, but the gang is bound to rack b1/a"));
    OK(gang_replacement_json(rep, &t));
    CHECK(str_has(t, "\"status\":\"pending\"") && str_has(t, "\"elsewhere\":[\"b1/b\"]"));
    gang_replacement_free(rep);
    rep = NULL;
    CHECK(available(inv, "b1") == 8000); /* nothing applied */
    OK(gang_inventory_reservation(inv, id, &r, NULL));
    OK(gang_reservation_lost_len(r, &len));
    CHECK(len == 1);
    gang_reservation_free(r);
    valid(inv);

    /* Back in service: replaced on a2. */
    OK(gang_inventory_uncordon(inv, "a2", &err));
    OK(gang_inventory_replace(inv, id, &status, &rep, NULL));
    CHECK(status == GANG_STATUS_PLACED);
    OK(gang_replacement_added_at(rep, 0, &s, &t, &k));
    CHECK(str_eq(t, "a2") && k == 2);
    gang_replacement_free(rep);
    rep = NULL;
    valid(inv);

    /* Unknown ids and nodes change nothing. */
    status = 0;
    rep = SENTINEL;
    CHECK_RC(gang_inventory_replace(inv, id + 100, &status, &rep, &err), GANG_UNKNOWN_RESERVATION);
    CHECK(status == 0 && rep == SENTINEL);
    check_error(err, GANG_UNKNOWN_RESERVATION, "unknown_reservation", "reservation", NULL);
    gang_error_free(err);
    err = NULL;
    c = SENTINEL;
    CHECK_RC(gang_inventory_remove_node(inv, "zz", &c, &err), GANG_UNKNOWN_NODE);
    check_error(err, GANG_UNKNOWN_NODE, "unknown_node", "node", "zz");
    gang_error_free(err);
    err = NULL;
    CHECK_RC(gang_inventory_fail_node(inv, "zz", &c, NULL), GANG_UNKNOWN_NODE);
    CHECK_RC(gang_inventory_cordon(inv, "zz", &err), GANG_UNKNOWN_NODE);
    check_error(err, GANG_UNKNOWN_NODE, "unknown_node", "node", "zz");
    gang_error_free(err);
    err = NULL;
    CHECK_RC(gang_inventory_uncordon(inv, "zz", NULL), GANG_UNKNOWN_NODE);
    CHECK_RC(gang_inventory_set_capacity(inv, "zz", LC_GPU, "1", &c, NULL), GANG_UNKNOWN_NODE);
    CHECK_RC(gang_inventory_set_capacity_millis(inv, "zz", LC_GPU, 1, &c, NULL), GANG_UNKNOWN_NODE);
    CHECK_RC(gang_inventory_set_used(inv, "zz", LC_GPU, "1", &c, NULL), GANG_UNKNOWN_NODE);
    CHECK_RC(gang_inventory_set_used_millis(inv, "zz", LC_GPU, 1, &c, &err), GANG_UNKNOWN_NODE);
    check_error(err, GANG_UNKNOWN_NODE, "unknown_node", "node", "zz");
    gang_error_free(err);
    err = NULL;
    const char *keys[] = {LC_RACK};
    const char *values[] = {"b"};
    CHECK_RC(gang_inventory_set_labels(inv, "zz", keys, values, 1, &c, NULL), GANG_UNKNOWN_NODE);
    gang_string *js = SENTINEL;
    CHECK_RC(gang_inventory_node_json(inv, "zz", &js, &err), GANG_UNKNOWN_NODE);
    check_error(err, GANG_UNKNOWN_NODE, "unknown_node", "node", "zz");
    gang_error_free(err);
    err = NULL;
    CHECK(c == SENTINEL && js == SENTINEL);
    OK(gang_inventory_node_count(inv, &count));
    CHECK(count == 3);
    valid(inv);

    /* Capacity below what is used and reserved: applied, reported, free is zero. */
    CHECK(available(inv, "a3") == 0);
    c = NULL;
    OK(gang_inventory_set_capacity(inv, "a3", LC_GPU, "4", &c, &err));
    OK(gang_change_overcommits_len(c, &len));
    CHECK(len == 1);
    gang_str node = {0}, res = {0};
    uint64_t cap = 0, used = 0, reserved = 0;
    size_t holders = 0;
    OK(gang_change_overcommit_at(c, 0, &node, &res, &cap, &used, &reserved, &holders));
    CHECK(str_eq(node, "a3") && str_eq(res, LC_GPU));
    CHECK(cap == 4000 && used == 6000 && reserved == 2000 && holders == 1);
    uint64_t holder = 0;
    OK(gang_change_overcommit_reservation_at(c, 0, 0, &holder));
    CHECK(holder == id);
    CHECK_RC(gang_change_overcommit_reservation_at(c, 0, 1, &holder), GANG_OUT_OF_RANGE);
    CHECK_RC(gang_change_overcommit_reservation_at(c, 1, 0, &holder), GANG_OUT_OF_RANGE);
    CHECK_RC(gang_change_overcommit_at(c, 1, &node, &res, &cap, &used, &reserved, &holders),
             GANG_OUT_OF_RANGE);
    OK(gang_change_lost_len(c, &len));
    CHECK(len == 0);
    OK(gang_change_json(c, &s));
    CHECK(str_has(s, "\"overcommitted\":[{") && str_has(s, "\"reserved\":2"));
    gang_change_free(c);
    c = NULL;
    CHECK(available(inv, "a3") == 0);
    valid(inv);
    OK(gang_inventory_set_capacity_millis(inv, "a3", LC_GPU, 9000, &c, NULL));
    OK(gang_change_overcommits_len(c, &len));
    CHECK(len == 0);
    gang_change_free(c);
    CHECK(available(inv, "a3") == 1000);
    OK(gang_inventory_set_used(inv, "a3", LC_GPU, "8", &c, NULL));
    OK(gang_change_overcommits_len(c, &len));
    CHECK(len == 1);
    gang_change_free(c);
    OK(gang_inventory_set_used_millis(inv, "a3", LC_GPU, 5500, &c, NULL));
    OK(gang_change_overcommits_len(c, &len));
    CHECK(len == 0);
    gang_change_free(c);
    CHECK(available(inv, "a3") == 1500);
    /* A resource no node had: a new column. */
    OK(gang_inventory_set_capacity(inv, "b1", "example.com/fpga", "2", &c, NULL));
    gang_change_free(c);
    uint64_t fpga = 0;
    OK(gang_inventory_available_millis(inv, "b1", "example.com/fpga", &fpga));
    CHECK(fpga == 2000);
    valid(inv);
    /* A bad quantity names the field; nothing changes. */
    c = SENTINEL;
    CHECK_RC(gang_inventory_set_capacity(inv, "a3", LC_GPU, "12 GB", &c, &err), GANG_INVALID_QUANTITY);
    check_error(err, GANG_INVALID_QUANTITY, "invalid_quantity", "nodes[a3].capacity." LC_GPU, "12 GB");
    gang_error_free(err);
    err = NULL;
    CHECK_RC(gang_inventory_set_used(inv, "a3", LC_GPU, "-1", &c, &err), GANG_INVALID_QUANTITY);
    check_error(err, GANG_INVALID_QUANTITY, "invalid_quantity", "nodes[a3].used." LC_GPU, NULL);
    gang_error_free(err);
    err = NULL;
    CHECK(c == SENTINEL);
    CHECK(available(inv, "a3") == 1500);
    valid(inv);

    /* Cordon: nothing new goes on the node; uncordon: it does again. */
    gang_gang *big = gang_from(WORKERS("big", "8"));
    OK(gang_inventory_cordon(inv, "b1", NULL));
    gang_placement *pp = NULL;
    gang_diagnosis *d = NULL;
    OK(gang_inventory_place(inv, big, &status, &pp, &d, NULL));
    CHECK(status == GANG_STATUS_UNSCHEDULABLE && d != NULL);
    OK(gang_diagnosis_text(d, &s));
    CHECK(str_has(s, "cordoned"));
    gang_diagnosis_free(d);
    OK(gang_inventory_uncordon(inv, "b1", &err));
    pp = place(inv, big);
    gang_placement_free(pp);
    gang_gang_free(big);

    /* Relabel a3 into rack b: the reservation's members left its rack. */
    const char *k2[] = {LC_BLOCK, LC_RACK, LC_RACK};
    const char *v2[] = {"b1", "a", "b"}; /* a key given twice keeps its last value */
    OK(gang_inventory_set_labels(inv, "a3", k2, v2, 3, &c, &err));
    OK(gang_change_displaced_len(c, &len));
    CHECK(len == 1);
    uint64_t moved = 0;
    OK(gang_change_displaced_at(c, 0, &moved));
    CHECK(moved == id);
    CHECK_RC(gang_change_displaced_at(c, 1, &moved), GANG_OUT_OF_RANGE);
    OK(gang_change_json(c, &s));
    CHECK(str_has(s, "\"displaced\":["));
    gang_change_free(c);
    gang_string *json = NULL;
    OK(gang_inventory_node_json(inv, "a3", &json, &err));
    OK(gang_string_view(json, &s));
    CHECK(str_has(s, "\"name\":\"a3\"") && str_has(s, "\"" LC_RACK "\":\"b\""));
    CHECK(str_has(s, "\"schedulable\":true"));
    gang_string_free(json);
    valid(inv);
    /* An invalid label: nothing changes. */
    const char *bad_key[] = {"not a key!"};
    c = SENTINEL;
    CHECK_RC(gang_inventory_set_labels(inv, "a3", bad_key, values, 1, &c, &err), GANG_INVALID_INVENTORY);
    CHECK(c == SENTINEL);
    check_error(err, GANG_INVALID_INVENTORY, "invalid_inventory", NULL, "not a key!");
    gang_error_free(err);
    err = NULL;
    OK(gang_inventory_node_json(inv, "a3", &json, NULL));
    OK(gang_string_view(json, &s));
    CHECK(str_has(s, "\"" LC_RACK "\":\"b\""));
    gang_string_free(json);
    /* No labels at all is allowed (NULL arrays with n = 0). */
    OK(gang_inventory_set_labels(inv, "b1", NULL, NULL, 0, &c, NULL));
    gang_change_free(c);

    /* Add a node; a duplicate or a bad quantity changes nothing. */
    gang_node *n = NULL;
    OK(gang_node_new("a4", &n));
    OK(gang_node_add_label(n, LC_BLOCK, "b1"));
    OK(gang_node_add_label(n, LC_RACK, "a"));
    OK(gang_node_set_capacity(n, LC_GPU, "8"));
    OK(gang_inventory_add_node(inv, n, &err));
    OK(gang_inventory_node_count(inv, &count));
    CHECK(count == 4);
    CHECK(available(inv, "a4") == 8000);
    CHECK_RC(gang_inventory_add_node(inv, n, &err), GANG_INVALID_INVENTORY);
    check_error(err, GANG_INVALID_INVENTORY, "invalid_inventory", NULL, "a4");
    gang_error_free(err);
    err = NULL;
    gang_node_free(n);
    OK(gang_node_new("a5", &n));
    OK(gang_node_set_capacity(n, LC_GPU, "eight"));
    CHECK_RC(gang_inventory_add_node(inv, n, &err), GANG_INVALID_QUANTITY);
    check_error(err, GANG_INVALID_QUANTITY, "invalid_quantity", "nodes[a5].capacity." LC_GPU, "eight");
    gang_error_free(err);
    err = NULL;
    gang_node_free(n);
    OK(gang_inventory_node_count(inv, &count));
    CHECK(count == 4);
    CHECK(live_reservations(inv) == 1);
    valid(inv);

    OK(gang_inventory_release(inv, id, NULL));
    CHECK(live_reservations(inv) == 0);
    valid(inv);
    gang_gang_free(g);
    gang_inventory_free(inv);
}

/* Scenario 22 through the ABI: three 2-worker replicas in three racks; a fourth has no
 * rack of its own (all or nothing); spread over blocks inside one rack is
 * contradictory. */
static void test_spread(void) {
    gang_inventory *inv = inventory_from(CLUSTER(NODE("a1", "b1", "a", "4") ","
                                                 NODE("b1", "b1", "b", "4") ","
                                                 NODE("c1", "b2", "c", "4")));
    gang_gang *g = gang_from(WORKERS("serve", "2"));
    gang_status status = 0;
    gang_spread_outcome *sp = NULL;
    gang_error *err = NULL;

    /* Four: unschedulable, nothing held. */
    OK(gang_inventory_spread(inv, g, 4, 0, LC_RACK, NULL, &status, &sp, &err));
    CHECK(status == GANG_STATUS_UNSCHEDULABLE);
    gang_status ss = 0;
    OK(gang_spread_outcome_status(sp, &ss));
    CHECK(ss == GANG_STATUS_UNSCHEDULABLE);
    uint32_t fit = 0, needed = 0;
    OK(gang_spread_outcome_fit(sp, &fit, &needed));
    CHECK(fit == 3 && needed == 4);
    size_t len = 9;
    OK(gang_spread_outcome_replicas_len(sp, &len));
    CHECK(len == 0);
    uint64_t id = 0;
    CHECK_RC(gang_spread_outcome_reservation_at(sp, 0, &id), GANG_OUT_OF_RANGE);
    gang_placement *p = SENTINEL;
    CHECK_RC(gang_spread_outcome_placement_at(sp, 0, &p), GANG_OUT_OF_RANGE);
    CHECK(p == SENTINEL);
    gang_diagnosis *d = NULL;
    OK(gang_spread_outcome_diagnosis(sp, &d));
    CHECK(d != NULL);
    gang_str s = {0};
    OK(gang_diagnosis_text(d, &s));
    CHECK(s.len > 0);
    gang_diagnosis_free(d);
    gang_spread_outcome_free(sp);
    sp = NULL;
    CHECK(live_reservations(inv) == 0 && available(inv, "a1") == 4000);
    valid(inv);

    /* Three: placed, each reserved, in three distinct racks. */
    OK(gang_inventory_spread(inv, g, 3, 0, LC_RACK, NULL, &status, &sp, &err));
    CHECK(status == GANG_STATUS_PLACED);
    OK(gang_spread_outcome_status(sp, &ss));
    CHECK(ss == GANG_STATUS_PLACED);
    OK(gang_spread_outcome_fit(sp, &fit, &needed));
    CHECK(fit == 3 && needed == 3);
    OK(gang_spread_outcome_replicas_len(sp, &len));
    CHECK(len == 3);
    char racks[3] = {0, 0, 0};
    for (size_t i = 0; i < len; i++) {
        OK(gang_spread_outcome_reservation_at(sp, i, &id));
        gang_reservation *r = NULL;
        OK(gang_inventory_reservation(inv, id, &r, NULL));
        gang_reservation_free(r);
        OK(gang_spread_outcome_placement_at(sp, i, &p));
        gang_str key = {0}, value = {0};
        OK(gang_placement_domain_at(p, 1, &key, &value));
        CHECK(str_eq(key, LC_RACK) && value.len == 1);
        racks[i] = value.data[0];
        gang_placement_free(p);
    }
    CHECK(racks[0] != racks[1] && racks[1] != racks[2] && racks[0] != racks[2]);
    d = SENTINEL;
    OK(gang_spread_outcome_diagnosis(sp, &d));
    CHECK(d == NULL);
    CHECK_RC(gang_spread_outcome_reservation_at(sp, 3, &id), GANG_OUT_OF_RANGE);
    gang_spread_outcome_free(sp); /* the replicas stay reserved */
    sp = NULL;
    CHECK(live_reservations(inv) == 3);
    CHECK(available(inv, "a1") == 2000 && available(inv, "c1") == 2000);
    valid(inv);

    /* Contradictory, and invalid requests: nothing changes. */
    sp = SENTINEL;
    status = 0;
    CHECK_RC(gang_inventory_spread(inv, g, 2, 0, LC_BLOCK, LC_RACK, &status, &sp, &err),
             GANG_CONTRADICTORY);
    check_error(err, GANG_CONTRADICTORY, "contradictory", "spread.within", NULL);
    gang_error_free(err);
    err = NULL;
    CHECK_RC(gang_inventory_spread(inv, g, 0, 0, LC_RACK, NULL, &status, &sp, &err), GANG_INVALID_REQUEST);
    check_error(err, GANG_INVALID_REQUEST, "invalid_request", "spread.replicas", NULL);
    gang_error_free(err);
    err = NULL;
    CHECK_RC(gang_inventory_spread(inv, g, 2, 3, LC_RACK, NULL, &status, &sp, &err), GANG_INVALID_REQUEST);
    check_error(err, GANG_INVALID_REQUEST, "invalid_request", "spread.min_replicas", NULL);
    gang_error_free(err);
    err = NULL;
    CHECK_RC(gang_inventory_spread(inv, g, 2, 0, "zone", NULL, &status, &sp, &err), GANG_INVALID_REQUEST);
    check_error(err, GANG_INVALID_REQUEST, "invalid_request", "spread.level", "zone");
    gang_error_free(err);
    err = NULL;
    CHECK(sp == SENTINEL && status == 0);
    CHECK(live_reservations(inv) == 3);

    /* At least one of two, inside one block: b1 holds two racks with room. */
    uint64_t ids[3] = {0, 0, 0};
    size_t n = 0;
    OK(gang_inventory_reservation_ids(inv, ids, 3, &n));
    for (size_t i = 0; i < n; i++) OK(gang_inventory_release(inv, ids[i], NULL));
    sp = NULL;
    OK(gang_inventory_spread(inv, g, 2, 1, LC_RACK, LC_BLOCK, &status, &sp, NULL));
    CHECK(status == GANG_STATUS_PLACED);
    OK(gang_spread_outcome_fit(sp, &fit, &needed));
    CHECK(fit == 2 && needed == 1);
    for (size_t i = 0; i < 2; i++) {
        OK(gang_spread_outcome_placement_at(sp, i, &p));
        gang_str key = {0}, value = {0};
        OK(gang_placement_domain_at(p, 0, &key, &value));
        CHECK(str_eq(value, "b1"));
        gang_placement_free(p);
        OK(gang_spread_outcome_reservation_at(sp, i, &id));
        OK(gang_inventory_release(inv, id, NULL));
    }
    gang_spread_outcome_free(sp);
    CHECK(live_reservations(inv) == 0);
    valid(inv);

    gang_gang_free(g);
    gang_inventory_free(inv);
}

/* Scenarios 23 and 24 through the ABI: whole gangs or nothing, strict FIFO and
 * backfill. */
static void test_admit(void) {
    gang_inventory *inv = inventory_from(CLUSTER(NODE("a1", "b1", "a", "0")));
    gang_gang *first = gang_from(WORKERS("first", "8"));
    gang_gang *second = gang_from(WORKERS("second", "8"));
    gang_gang *small = gang_from(WORKERS("small", "1"));
    const gang_gang *queue[] = {first, second, small};
    gang_admissions *a = NULL;
    gang_error *err = NULL;
    OK(gang_inventory_admit(inv, queue, 3, GANG_ADMIT_FIFO, &a, &err));
    size_t len = 0;
    OK(gang_admissions_len(a, &len));
    CHECK(len == 3);
    gang_str name = {0};
    gang_status status = 0;
    OK(gang_admissions_at(a, 0, &name, &status));
    CHECK(str_eq(name, "first") && status == GANG_STATUS_PLACED);
    uint64_t id = 0;
    OK(gang_admissions_reservation(a, 0, &id));
    gang_placement *p = NULL;
    OK(gang_admissions_placement(a, 0, &p));
    CHECK(p != NULL);
    uint64_t members = 0;
    OK(gang_placement_members(p, &members));
    CHECK(members == 8);
    gang_placement_free(p);
    gang_diagnosis *d = SENTINEL;
    OK(gang_admissions_diagnosis(a, 0, &d));
    CHECK(d == NULL);
    OK(gang_admissions_blocked_by(a, 0, &name));
    CHECK(name.len == 0);
    /* The second waits holding nothing, with a diagnosis. */
    OK(gang_admissions_at(a, 1, &name, &status));
    CHECK(str_eq(name, "second") && status == GANG_STATUS_WAITING);
    uint64_t none = 5;
    CHECK_RC(gang_admissions_reservation(a, 1, &none), GANG_NOT_FOUND);
    CHECK(none == 5);
    p = SENTINEL;
    OK(gang_admissions_placement(a, 1, &p));
    CHECK(p == NULL);
    OK(gang_admissions_diagnosis(a, 1, &d));
    CHECK(d != NULL);
    gang_str s = {0};
    OK(gang_diagnosis_text(d, &s));
    CHECK(str_has(s, "fits 0 of 8 worker"));
    gang_diagnosis_free(d);
    OK(gang_admissions_blocked_by(a, 1, &name));
    CHECK(name.len == 0);
    /* The third waits behind the head (FIFO never tries it). */
    OK(gang_admissions_at(a, 2, &name, &status));
    CHECK(str_eq(name, "small") && status == GANG_STATUS_WAITING);
    OK(gang_admissions_diagnosis(a, 2, &d));
    CHECK(d == NULL);
    OK(gang_admissions_blocked_by(a, 2, &name));
    CHECK(str_eq(name, "second"));
    CHECK_RC(gang_admissions_at(a, 3, &name, &status), GANG_OUT_OF_RANGE);
    CHECK_RC(gang_admissions_reservation(a, 3, &none), GANG_OUT_OF_RANGE);
    CHECK_RC(gang_admissions_placement(a, 3, &p), GANG_OUT_OF_RANGE);
    CHECK_RC(gang_admissions_diagnosis(a, 3, &d), GANG_OUT_OF_RANGE);
    CHECK_RC(gang_admissions_blocked_by(a, 3, &name), GANG_OUT_OF_RANGE);
    gang_admissions_free(a); /* the first stays reserved */
    a = NULL;
    CHECK(live_reservations(inv) == 1 && available(inv, "a1") == 0);
    valid(inv);
    OK(gang_inventory_release(inv, id, NULL));

    /* An invalid gang anywhere in the queue: an error, and nothing placed. */
    gang_gang *bad = gang_from("{\"name\": \"bad\", \"roles\": [{\"name\": \"w\", \"count\": 1}], "
                               "\"topology\": {\"required\": \"zone\"}}");
    const gang_gang *bad_queue[] = {small, bad};
    a = SENTINEL;
    CHECK_RC(gang_inventory_admit(inv, bad_queue, 2, GANG_ADMIT_FIFO, &a, &err), GANG_INVALID_REQUEST);
    check_error(err, GANG_INVALID_REQUEST, "invalid_request", "gang.topology.required", "zone");
    gang_error_free(err);
    err = NULL;
    CHECK(a == SENTINEL && live_reservations(inv) == 0);
    gang_gang_free(bad);
    /* Bad modes, NULL gangs. */
    CHECK_RC(gang_inventory_admit(inv, queue, 3, 0, &a, &err), GANG_INVALID_ARGUMENT);
    check_error(err, GANG_INVALID_ARGUMENT, "invalid_argument", "mode", NULL);
    gang_error_free(err);
    err = NULL;
    CHECK_RC(gang_inventory_admit(inv, queue, 3, 3, &a, NULL), GANG_INVALID_ARGUMENT);
    const gang_gang *holey[] = {first, NULL};
    CHECK_RC(gang_inventory_admit(inv, holey, 2, GANG_ADMIT_FIFO, &a, &err), GANG_NULL_ARGUMENT);
    check_error(err, GANG_NULL_ARGUMENT, "null_argument", "queue[1]", "queue[1]");
    gang_error_free(err);
    err = NULL;
    CHECK_RC(gang_inventory_admit(inv, NULL, 1, GANG_ADMIT_FIFO, &a, NULL), GANG_NULL_ARGUMENT);
    CHECK(a == SENTINEL && live_reservations(inv) == 0);
    /* An empty queue. */
    OK(gang_inventory_admit(inv, NULL, 0, GANG_ADMIT_BACKFILL, &a, NULL));
    OK(gang_admissions_len(a, &len));
    CHECK(len == 0);
    gang_admissions_free(a);
    gang_gang_free(first);
    gang_gang_free(second);
    gang_gang_free(small);
    gang_inventory_free(inv);

    /* Backfill: the CPU job runs on the node the GPU head cannot use; the small GPU job
     * still waits (it would take GPUs the head needs). */
    inv = inventory_from(CLUSTER(NODE("a1", "b1", "a", "0") "," NODE("a2", "b1", "a", "4") ","
                                 "{\"name\": \"c1\", \"labels\": {\"" LC_BLOCK "\": \"b1\", \"" LC_RACK
                                 "\": \"c\"}, \"capacity\": {\"cpu\": \"64\", \"pods\": 110}}"));
    gang_gang *head = gang_from(WORKERS("head", "16"));
    small = gang_from(WORKERS("small", "1"));
    gang_gang *etl = gang_from("{\"name\": \"etl\", \"roles\": [{\"name\": \"etl\", \"count\": 2, "
                               "\"requests\": {\"cpu\": \"8\", \"pods\": 1}}], "
                               "\"topology\": {\"required\": \"" LC_RACK "\"}}");
    const gang_gang *q2[] = {head, small, etl};
    OK(gang_inventory_admit(inv, q2, 3, GANG_ADMIT_FIFO, &a, NULL));
    for (size_t i = 0; i < 3; i++) {
        OK(gang_admissions_at(a, i, &name, &status));
        CHECK(status == GANG_STATUS_WAITING);
    }
    gang_admissions_free(a);
    CHECK(live_reservations(inv) == 0);
    OK(gang_inventory_admit(inv, q2, 3, GANG_ADMIT_BACKFILL, &a, NULL));
    OK(gang_admissions_at(a, 0, &name, &status));
    CHECK(str_eq(name, "head") && status == GANG_STATUS_WAITING);
    OK(gang_admissions_at(a, 1, &name, &status));
    CHECK(str_eq(name, "small") && status == GANG_STATUS_WAITING);
    OK(gang_admissions_blocked_by(a, 1, &name));
    CHECK(str_eq(name, "head"));
    OK(gang_admissions_at(a, 2, &name, &status));
    CHECK(str_eq(name, "etl") && status == GANG_STATUS_PLACED);
    OK(gang_admissions_reservation(a, 2, &id));
    gang_admissions_free(a);
    CHECK(live_reservations(inv) == 1 && available(inv, "a1") == 8000);
    valid(inv);
    gang_gang_free(head);
    gang_gang_free(small);
    gang_gang_free(etl);
    gang_inventory_free(inv);
}

/* Every new function rejects NULL for every pointer argument and writes nothing;
 * strings that are not UTF-8 are rejected; the new handles' _free(NULL) is a no-op. */
static void test_lifecycle_bad_arguments(void) {
    gang_inventory *inv = inventory_from(CLUSTER(NODE("a1", "b1", "a", "0") "," NODE("b1", "b1", "b", "0")));
    gang_gang *g = gang_from(WORKERS("train", "4"));
    gang_placement *p = place(inv, g);
    uint64_t id = 0;
    OK(gang_inventory_reserve(inv, p, &id, NULL));
    gang_change *fail = NULL;
    OK(gang_inventory_fail_node(inv, "a1", &fail, NULL));
    gang_reservation *r = NULL;
    OK(gang_inventory_reservation(inv, id, &r, NULL));
    gang_status status = 0;
    gang_replacement *rep = NULL;
    OK(gang_inventory_replace(inv, id, &status, &rep, NULL));
    gang_change *over = NULL;
    OK(gang_inventory_set_capacity_millis(inv, "b1", LC_GPU, 1000, &over, NULL));
    gang_spread_outcome *sp = NULL;
    OK(gang_inventory_spread(inv, g, 1, 0, LC_RACK, NULL, &status, &sp, NULL));
    const gang_gang *queue[] = {g};
    gang_admissions *a = NULL;
    OK(gang_inventory_admit(inv, queue, 1, GANG_ADMIT_FIFO, &a, NULL));
    gang_node *n = NULL;
    OK(gang_node_new("x", &n));
    const char *keys[] = {LC_RACK};
    const char *values[] = {"a"};
    const char *null_strs[] = {NULL};
    const char *bad_strs[] = {LC_BAD_UTF8};
    size_t before = live_reservations(inv);

    gang_str s = {0};
    size_t len = 0;
    uint32_t u32 = 0;
    uint64_t u64 = 0;
    void *out = SENTINEL;
    gang_error *err = NULL;
#define NUL(call) CHECK_RC(call, GANG_NULL_ARGUMENT)
    /* operations */
    NUL(gang_inventory_reserve(NULL, p, &u64, NULL));
    NUL(gang_inventory_reserve(inv, NULL, &u64, NULL));
    NUL(gang_inventory_reserve(inv, p, NULL, &err));
    check_error(err, GANG_NULL_ARGUMENT, "null_argument", "id_out", "id_out");
    gang_error_free(err);
    err = NULL;
    NUL(gang_inventory_release(NULL, id, NULL));
    NUL(gang_inventory_reservation(NULL, id, (gang_reservation **)&out, NULL));
    NUL(gang_inventory_reservation(inv, id, NULL, NULL));
    NUL(gang_inventory_reservation_ids(NULL, &u64, 1, &len));
    NUL(gang_inventory_reservation_ids(inv, NULL, 1, &len));
    NUL(gang_inventory_reservation_ids(inv, &u64, 1, NULL));
    NUL(gang_inventory_add_node(NULL, n, NULL));
    NUL(gang_inventory_add_node(inv, NULL, NULL));
    NUL(gang_inventory_remove_node(NULL, "a1", (gang_change **)&out, NULL));
    NUL(gang_inventory_remove_node(inv, NULL, (gang_change **)&out, NULL));
    NUL(gang_inventory_remove_node(inv, "a1", NULL, NULL));
    NUL(gang_inventory_fail_node(NULL, "a1", (gang_change **)&out, NULL));
    NUL(gang_inventory_fail_node(inv, NULL, (gang_change **)&out, NULL));
    NUL(gang_inventory_fail_node(inv, "a1", NULL, NULL));
    NUL(gang_inventory_cordon(NULL, "a1", NULL));
    NUL(gang_inventory_cordon(inv, NULL, NULL));
    NUL(gang_inventory_uncordon(NULL, "a1", NULL));
    NUL(gang_inventory_uncordon(inv, NULL, NULL));
    NUL(gang_inventory_set_labels(NULL, "a1", keys, values, 1, (gang_change **)&out, NULL));
    NUL(gang_inventory_set_labels(inv, NULL, keys, values, 1, (gang_change **)&out, NULL));
    NUL(gang_inventory_set_labels(inv, "a1", NULL, values, 1, (gang_change **)&out, NULL));
    NUL(gang_inventory_set_labels(inv, "a1", keys, NULL, 1, (gang_change **)&out, NULL));
    NUL(gang_inventory_set_labels(inv, "a1", null_strs, values, 1, (gang_change **)&out, &err));
    check_error(err, GANG_NULL_ARGUMENT, "null_argument", "keys[0]", "keys[0]");
    gang_error_free(err);
    err = NULL;
    NUL(gang_inventory_set_labels(inv, "a1", keys, values, 1, NULL, NULL));
    NUL(gang_inventory_set_capacity(NULL, "a1", LC_GPU, "1", (gang_change **)&out, NULL));
    NUL(gang_inventory_set_capacity(inv, NULL, LC_GPU, "1", (gang_change **)&out, NULL));
    NUL(gang_inventory_set_capacity(inv, "a1", NULL, "1", (gang_change **)&out, NULL));
    NUL(gang_inventory_set_capacity(inv, "a1", LC_GPU, NULL, (gang_change **)&out, NULL));
    NUL(gang_inventory_set_capacity(inv, "a1", LC_GPU, "1", NULL, NULL));
    NUL(gang_inventory_set_capacity_millis(NULL, "a1", LC_GPU, 1, (gang_change **)&out, NULL));
    NUL(gang_inventory_set_capacity_millis(inv, NULL, LC_GPU, 1, (gang_change **)&out, NULL));
    NUL(gang_inventory_set_capacity_millis(inv, "a1", NULL, 1, (gang_change **)&out, NULL));
    NUL(gang_inventory_set_capacity_millis(inv, "a1", LC_GPU, 1, NULL, NULL));
    NUL(gang_inventory_set_used(NULL, "a1", LC_GPU, "1", (gang_change **)&out, NULL));
    NUL(gang_inventory_set_used(inv, NULL, LC_GPU, "1", (gang_change **)&out, NULL));
    NUL(gang_inventory_set_used(inv, "a1", NULL, "1", (gang_change **)&out, NULL));
    NUL(gang_inventory_set_used(inv, "a1", LC_GPU, NULL, (gang_change **)&out, NULL));
    NUL(gang_inventory_set_used(inv, "a1", LC_GPU, "1", NULL, NULL));
    NUL(gang_inventory_set_used_millis(NULL, "a1", LC_GPU, 1, (gang_change **)&out, NULL));
    NUL(gang_inventory_set_used_millis(inv, NULL, LC_GPU, 1, (gang_change **)&out, NULL));
    NUL(gang_inventory_set_used_millis(inv, "a1", NULL, 1, (gang_change **)&out, NULL));
    NUL(gang_inventory_set_used_millis(inv, "a1", LC_GPU, 1, NULL, NULL));
    status = 0;
    NUL(gang_inventory_replace(NULL, id, &status, (gang_replacement **)&out, NULL));
    NUL(gang_inventory_replace(inv, id, NULL, (gang_replacement **)&out, NULL));
    NUL(gang_inventory_replace(inv, id, &status, NULL, NULL));
    NUL(gang_inventory_spread(NULL, g, 1, 0, LC_RACK, NULL, &status, (gang_spread_outcome **)&out, NULL));
    NUL(gang_inventory_spread(inv, NULL, 1, 0, LC_RACK, NULL, &status, (gang_spread_outcome **)&out, NULL));
    NUL(gang_inventory_spread(inv, g, 1, 0, NULL, NULL, &status, (gang_spread_outcome **)&out, NULL));
    NUL(gang_inventory_spread(inv, g, 1, 0, LC_RACK, NULL, NULL, (gang_spread_outcome **)&out, NULL));
    NUL(gang_inventory_spread(inv, g, 1, 0, LC_RACK, NULL, &status, NULL, NULL));
    CHECK(status == 0);
    NUL(gang_inventory_admit(NULL, queue, 1, GANG_ADMIT_FIFO, (gang_admissions **)&out, NULL));
    NUL(gang_inventory_admit(inv, queue, 1, GANG_ADMIT_FIFO, NULL, NULL));
    NUL(gang_inventory_node_json(NULL, "a1", (gang_string **)&out, NULL));
    NUL(gang_inventory_node_json(inv, NULL, (gang_string **)&out, NULL));
    NUL(gang_inventory_node_json(inv, "a1", NULL, NULL));
    NUL(gang_inventory_validate(NULL, &err));
    check_error(err, GANG_NULL_ARGUMENT, "null_argument", "inventory", NULL);
    gang_error_free(err);
    err = NULL;
    /* reservations */
    NUL(gang_reservation_id(NULL, &u64));
    NUL(gang_reservation_id(r, NULL));
    NUL(gang_reservation_gang(NULL, &s));
    NUL(gang_reservation_gang(r, NULL));
    NUL(gang_reservation_domain_path(NULL, &s));
    NUL(gang_reservation_domain_path(r, NULL));
    NUL(gang_reservation_domain_len(NULL, &len));
    NUL(gang_reservation_domain_len(r, NULL));
    NUL(gang_reservation_domain_at(NULL, 0, &s, &s));
    NUL(gang_reservation_domain_at(r, 0, NULL, &s));
    NUL(gang_reservation_domain_at(r, 0, &s, NULL));
    NUL(gang_reservation_members_len(NULL, &len));
    NUL(gang_reservation_members_len(r, NULL));
    NUL(gang_reservation_member_at(NULL, 0, &s, &s, &u32));
    NUL(gang_reservation_member_at(r, 0, NULL, &s, &u32));
    NUL(gang_reservation_member_at(r, 0, &s, NULL, &u32));
    NUL(gang_reservation_member_at(r, 0, &s, &s, NULL));
    NUL(gang_reservation_member_count(NULL, &u64));
    NUL(gang_reservation_member_count(r, NULL));
    NUL(gang_reservation_usage_len(NULL, &len));
    NUL(gang_reservation_usage_len(r, NULL));
    NUL(gang_reservation_usage_at(NULL, 0, &s, &s, &u64));
    NUL(gang_reservation_usage_at(r, 0, NULL, &s, &u64));
    NUL(gang_reservation_usage_at(r, 0, &s, NULL, &u64));
    NUL(gang_reservation_usage_at(r, 0, &s, &s, NULL));
    NUL(gang_reservation_lost_len(NULL, &len));
    NUL(gang_reservation_lost_len(r, NULL));
    NUL(gang_reservation_lost_at(NULL, 0, &s, &s, &u32));
    NUL(gang_reservation_lost_at(r, 0, NULL, &s, &u32));
    NUL(gang_reservation_lost_at(r, 0, &s, NULL, &u32));
    NUL(gang_reservation_lost_at(r, 0, &s, &s, NULL));
    /* change reports */
    NUL(gang_change_lost_len(NULL, &len));
    NUL(gang_change_lost_len(fail, NULL));
    NUL(gang_change_lost_at(NULL, 0, &u64, &s, &s, &u32));
    NUL(gang_change_lost_at(fail, 0, NULL, &s, &s, &u32));
    NUL(gang_change_lost_at(fail, 0, &u64, NULL, &s, &u32));
    NUL(gang_change_lost_at(fail, 0, &u64, &s, NULL, &u32));
    NUL(gang_change_lost_at(fail, 0, &u64, &s, &s, NULL));
    NUL(gang_change_overcommits_len(NULL, &len));
    NUL(gang_change_overcommits_len(over, NULL));
    NUL(gang_change_overcommit_at(NULL, 0, &s, &s, &u64, &u64, &u64, &len));
    NUL(gang_change_overcommit_at(over, 0, NULL, &s, &u64, &u64, &u64, &len));
    NUL(gang_change_overcommit_at(over, 0, &s, NULL, &u64, &u64, &u64, &len));
    NUL(gang_change_overcommit_at(over, 0, &s, &s, NULL, &u64, &u64, &len));
    NUL(gang_change_overcommit_at(over, 0, &s, &s, &u64, NULL, &u64, &len));
    NUL(gang_change_overcommit_at(over, 0, &s, &s, &u64, &u64, NULL, &len));
    NUL(gang_change_overcommit_at(over, 0, &s, &s, &u64, &u64, &u64, NULL));
    NUL(gang_change_overcommit_reservation_at(NULL, 0, 0, &u64));
    NUL(gang_change_overcommit_reservation_at(over, 0, 0, NULL));
    NUL(gang_change_displaced_len(NULL, &len));
    NUL(gang_change_displaced_len(fail, NULL));
    NUL(gang_change_displaced_at(NULL, 0, &u64));
    NUL(gang_change_displaced_at(fail, 0, NULL));
    NUL(gang_change_json(NULL, &s));
    NUL(gang_change_json(fail, NULL));
    /* replacements */
    NUL(gang_replacement_status(NULL, &status));
    NUL(gang_replacement_status(rep, NULL));
    NUL(gang_replacement_added_len(NULL, &len));
    NUL(gang_replacement_added_len(rep, NULL));
    NUL(gang_replacement_added_at(NULL, 0, &s, &s, &u32));
    NUL(gang_replacement_added_at(rep, 0, NULL, &s, &u32));
    NUL(gang_replacement_added_at(rep, 0, &s, NULL, &u32));
    NUL(gang_replacement_added_at(rep, 0, &s, &s, NULL));
    NUL(gang_replacement_text(NULL, &s));
    NUL(gang_replacement_text(rep, NULL));
    NUL(gang_replacement_json(NULL, &s));
    NUL(gang_replacement_json(rep, NULL));
    /* spread outcomes */
    NUL(gang_spread_outcome_status(NULL, &status));
    NUL(gang_spread_outcome_status(sp, NULL));
    NUL(gang_spread_outcome_fit(NULL, &u32, &u32));
    NUL(gang_spread_outcome_fit(sp, NULL, &u32));
    NUL(gang_spread_outcome_fit(sp, &u32, NULL));
    NUL(gang_spread_outcome_replicas_len(NULL, &len));
    NUL(gang_spread_outcome_replicas_len(sp, NULL));
    NUL(gang_spread_outcome_reservation_at(NULL, 0, &u64));
    NUL(gang_spread_outcome_reservation_at(sp, 0, NULL));
    NUL(gang_spread_outcome_placement_at(NULL, 0, (gang_placement **)&out));
    NUL(gang_spread_outcome_placement_at(sp, 0, NULL));
    NUL(gang_spread_outcome_diagnosis(NULL, (gang_diagnosis **)&out));
    NUL(gang_spread_outcome_diagnosis(sp, NULL));
    /* admissions */
    NUL(gang_admissions_len(NULL, &len));
    NUL(gang_admissions_len(a, NULL));
    NUL(gang_admissions_at(NULL, 0, &s, &status));
    NUL(gang_admissions_at(a, 0, NULL, &status));
    NUL(gang_admissions_at(a, 0, &s, NULL));
    NUL(gang_admissions_reservation(NULL, 0, &u64));
    NUL(gang_admissions_reservation(a, 0, NULL));
    NUL(gang_admissions_placement(NULL, 0, (gang_placement **)&out));
    NUL(gang_admissions_placement(a, 0, NULL));
    NUL(gang_admissions_diagnosis(NULL, 0, (gang_diagnosis **)&out));
    NUL(gang_admissions_diagnosis(a, 0, NULL));
    NUL(gang_admissions_blocked_by(NULL, 0, &s));
    NUL(gang_admissions_blocked_by(a, 0, NULL));
#undef NUL
    CHECK(out == SENTINEL);

    /* Strings that are not UTF-8. */
#define UTF(call) CHECK_RC(call, GANG_INVALID_UTF8)
    UTF(gang_inventory_remove_node(inv, LC_BAD_UTF8, (gang_change **)&out, NULL));
    UTF(gang_inventory_fail_node(inv, LC_BAD_UTF8, (gang_change **)&out, NULL));
    UTF(gang_inventory_cordon(inv, LC_BAD_UTF8, NULL));
    UTF(gang_inventory_uncordon(inv, LC_BAD_UTF8, NULL));
    UTF(gang_inventory_set_labels(inv, LC_BAD_UTF8, keys, values, 1, (gang_change **)&out, NULL));
    UTF(gang_inventory_set_labels(inv, "a1", keys, bad_strs, 1, (gang_change **)&out, &err));
    check_error(err, GANG_INVALID_UTF8, "invalid_utf8", "values[0]", NULL);
    gang_error_free(err);
    err = NULL;
    UTF(gang_inventory_set_capacity(inv, LC_BAD_UTF8, LC_GPU, "1", (gang_change **)&out, NULL));
    UTF(gang_inventory_set_capacity(inv, "a1", LC_BAD_UTF8, "1", (gang_change **)&out, NULL));
    UTF(gang_inventory_set_capacity(inv, "a1", LC_GPU, LC_BAD_UTF8, (gang_change **)&out, NULL));
    UTF(gang_inventory_set_capacity_millis(inv, "a1", LC_BAD_UTF8, 1, (gang_change **)&out, NULL));
    UTF(gang_inventory_set_used(inv, "a1", LC_GPU, LC_BAD_UTF8, (gang_change **)&out, NULL));
    UTF(gang_inventory_set_used_millis(inv, LC_BAD_UTF8, LC_GPU, 1, (gang_change **)&out, NULL));
    UTF(gang_inventory_spread(inv, g, 1, 0, LC_BAD_UTF8, NULL, &status, (gang_spread_outcome **)&out, NULL));
    UTF(gang_inventory_spread(inv, g, 1, 0, LC_RACK, LC_BAD_UTF8, &status, (gang_spread_outcome **)&out, NULL));
    UTF(gang_inventory_node_json(inv, LC_BAD_UTF8, (gang_string **)&out, NULL));
#undef UTF
    CHECK(out == SENTINEL);
    CHECK(live_reservations(inv) == before); /* nothing changed */
    valid(inv);

    /* The free contract of the new handles. */
    gang_reservation_free(NULL);
    gang_change_free(NULL);
    gang_replacement_free(NULL);
    gang_spread_outcome_free(NULL);
    gang_admissions_free(NULL);
    gang_reservation_free(r);
    r = NULL;
    gang_reservation_free(r);
    gang_change_free(fail);
    gang_change_free(over);
    gang_replacement_free(rep);
    gang_spread_outcome_free(sp);
    gang_admissions_free(a);
    gang_node_free(n);
    gang_placement_free(p);
    gang_gang_free(g);
    /* Freeing an inventory frees the reservations it holds (the leak checker agrees). */
    gang_inventory_free(inv);
}

/* Preemption (issue 22): at equal priority the two small jobs are evicted rather than
 * the big one; the plan comes back as the core's JSON document; preempt_reserve applies
 * it whole; with nothing of lower priority left, it is unschedulable and changes
 * nothing. NULL arguments are GANG_NULL_ARGUMENT. */
#define PJOB(name, count, gpus, prio, node)                                              \
    "{\"name\": \"" name "\", \"priority\": " prio ", \"roles\": [{\"name\": \"w\", "     \
    "\"count\": " count ", \"requests\": {\"" LC_GPU "\": " gpus "}, \"node_selector\": " \
    "{\"node\": \"" node "\"}}]}"
static void test_preempt(void) {
    gang_inventory *inv = inventory_from(
        "{\"topology\": {\"levels\": [\"rack\"]}, \"nodes\": ["
        "{\"name\": \"a1\", \"labels\": {\"rack\": \"a\", \"node\": \"a1\"}, \"capacity\": {\"" LC_GPU "\": 8}},"
        "{\"name\": \"a2\", \"labels\": {\"rack\": \"a\", \"node\": \"a2\"}, \"capacity\": {\"" LC_GPU "\": 8}}]}");
    const char *jobs[] = {PJOB("big", "4", "2", "10", "a1"), PJOB("small-a", "1", "2", "10", "a2"),
                          PJOB("small-b", "1", "2", "10", "a2")};
    for (size_t i = 0; i < 3; i++) {
        gang_gang *g = gang_from(jobs[i]);
        gang_placement *p = place(inv, g);
        uint64_t id = 0;
        OK(gang_inventory_reserve(inv, p, &id, NULL));
        gang_placement_free(p);
        gang_gang_free(g);
    }
    gang_gang *urgent = gang_from(
        "{\"name\": \"urgent\", \"priority\": 100, \"roles\": [{\"name\": \"w\", \"count\": 4, "
        "\"requests\": {\"" LC_GPU "\": 2}}], \"topology\": {\"required\": \"rack\"}}");
    gang_status status = 0;
    gang_string *js = NULL;
    OK(gang_inventory_preempt(inv, urgent, &status, &js, NULL));
    CHECK(status == GANG_STATUS_PLACED);
    gang_str v = {0};
    OK(gang_string_view(js, &v));
    CHECK(str_has(v, "\"name\":\"small-a\"") && str_has(v, "\"name\":\"small-b\""));
    CHECK(!str_has(v, "\"name\":\"big\""));
    gang_string_free(js);
    CHECK(live_reservations(inv) == 3); /* a what-if: nothing changed */

    uint64_t id = 0;
    js = NULL;
    OK(gang_inventory_preempt_reserve(inv, urgent, &status, &id, &js, NULL));
    CHECK(status == GANG_STATUS_PLACED && id != 0);
    CHECK(live_reservations(inv) == 2 && available(inv, "a2") == 0);
    gang_string_free(js);
    valid(inv);

    gang_gang *peer = gang_from(PJOB("peer", "1", "8", "10", "a1"));
    js = NULL;
    id = 77;
    OK(gang_inventory_preempt_reserve(inv, peer, &status, &id, &js, NULL));
    CHECK(status == GANG_STATUS_UNSCHEDULABLE && id == 0);
    OK(gang_string_view(js, &v));
    CHECK(str_has(v, "\"status\":\"unschedulable\"") && str_has(v, "\"message\""));
    gang_string_free(js);
    CHECK(live_reservations(inv) == 2);

    gang_error *err = NULL;
    CHECK_RC(gang_inventory_preempt(NULL, peer, &status, &js, &err), GANG_NULL_ARGUMENT);
    gang_error_free(err);
    CHECK_RC(gang_inventory_preempt(inv, NULL, &status, &js, NULL), GANG_NULL_ARGUMENT);
    CHECK_RC(gang_inventory_preempt(inv, peer, NULL, &js, NULL), GANG_NULL_ARGUMENT);
    CHECK_RC(gang_inventory_preempt(inv, peer, &status, NULL, NULL), GANG_NULL_ARGUMENT);
    CHECK_RC(gang_inventory_preempt_reserve(NULL, peer, &status, &id, &js, NULL), GANG_NULL_ARGUMENT);
    CHECK_RC(gang_inventory_preempt_reserve(inv, peer, &status, NULL, &js, NULL), GANG_NULL_ARGUMENT);
    gang_gang_free(peer);
    gang_gang_free(urgent);
    gang_inventory_free(inv);
}

/* Repeated preemption queries on one inventory (its kept candidate victims): after each
 * change the answer follows it. Rack a of a1, a2 (8 GPUs each); urgent wants 12 GPUs in
 * the rack at priority 10. Each expectation is worked out from the free GPUs. */
static uint64_t reserve_job(gang_inventory *inv, const char *doc) {
    gang_gang *g = gang_from(doc);
    gang_placement *p = place(inv, g);
    uint64_t id = 0;
    OK(gang_inventory_reserve(inv, p, &id, NULL));
    gang_placement_free(p);
    gang_gang_free(g);
    return id;
}

static gang_str preempt_answer(gang_inventory *inv, gang_gang *g, gang_string **js, gang_status want) {
    gang_status status = 0;
    gang_str v = {0};
    *js = NULL;
    OK(gang_inventory_preempt(inv, g, &status, js, NULL));
    CHECK(status == want);
    OK(gang_string_view(*js, &v));
    return v;
}

static void test_preempt_repeated(void) {
    gang_inventory *inv = inventory_from(
        "{\"topology\": {\"levels\": [\"rack\"]}, \"nodes\": ["
        "{\"name\": \"a1\", \"labels\": {\"rack\": \"a\", \"node\": \"a1\"}, \"capacity\": {\"" LC_GPU "\": 8}},"
        "{\"name\": \"a2\", \"labels\": {\"rack\": \"a\", \"node\": \"a2\"}, \"capacity\": {\"" LC_GPU "\": 8}}]}");
    gang_gang *urgent = gang_from(
        "{\"name\": \"urgent\", \"priority\": 10, \"roles\": [{\"name\": \"w\", \"count\": 12, "
        "\"requests\": {\"" LC_GPU "\": 1}}], \"topology\": {\"required\": \"rack\"}}");
    gang_string *js = NULL;
    /* low (p1) holds a1: 8 free, 4 short: low goes. */
    uint64_t low = reserve_job(inv, PJOB("low", "8", "1", "1", "a1"));
    gang_str v = preempt_answer(inv, urgent, &js, GANG_STATUS_PLACED);
    CHECK(str_has(v, "\"name\":\"low\""));
    gang_string_free(js);
    /* low released: 16 free, nothing to evict (a kept low would be offered). */
    OK(gang_inventory_release(inv, low, NULL));
    v = preempt_answer(inv, urgent, &js, GANG_STATUS_PLACED);
    CHECK(str_has(v, "\"victims\":[]") && !str_has(v, "\"name\":\"low\""));
    gang_string_free(js);
    /* mid (p2) takes a2, a unit nb (p0) 6 of a1: 2 free; mid alone gives 10, nb alone
     * 8: both go (both made since the last query). */
    reserve_job(inv, PJOB("mid", "8", "1", "2", "a2"));
    gang_evictable_amount nb[] = {{"a1", LC_GPU, NULL, 6000}};
    OK(gang_inventory_add_evictable(inv, "nb", 0, nb, 1, NULL));
    v = preempt_answer(inv, urgent, &js, GANG_STATUS_PLACED);
    CHECK(str_has(v, "\"name\":\"mid\"") && str_has(v, "{\"kind\":\"unit\",\"id\":\"nb\"}"));
    gang_string_free(js);
    /* nb withdrawn: 8 free, mid alone is enough. */
    OK(gang_inventory_remove_evictable(inv, "nb", NULL));
    v = preempt_answer(inv, urgent, &js, GANG_STATUS_PLACED);
    CHECK(str_has(v, "\"name\":\"mid\"") && !str_has(v, "\"nb\""));
    gang_string_free(js);
    /* Six GPUs of a1 used from outside: 2 free, evicting mid gives 10: no plan. */
    gang_change *change = NULL;
    OK(gang_inventory_set_used_millis(inv, "a1", LC_GPU, 6000, &change, NULL));
    gang_change_free(change);
    v = preempt_answer(inv, urgent, &js, GANG_STATUS_UNSCHEDULABLE);
    gang_string_free(js);
    gang_gang_free(urgent);
    gang_inventory_free(inv);
}

/* Evictable units (issue 22): running work gang did not reserve, declared with a
 * priority and per-node amounts. Declared, it counts as used; preempt may evict it
 * whole for a gang of strictly higher priority (and not for one of equal priority);
 * withdrawn, what it used comes back. Bad declarations change nothing and name the
 * field: a repeated id, an unknown node, a NULL string in amounts[i], invalid UTF-8. */
static void test_evictable(void) {
    gang_inventory *inv = inventory_from(
        "{\"topology\": {\"levels\": [\"rack\"]}, \"nodes\": ["
        "{\"name\": \"a1\", \"labels\": {\"rack\": \"a\"}, \"capacity\": {\"" LC_GPU "\": 8}},"
        "{\"name\": \"a2\", \"labels\": {\"rack\": \"a\"}, \"capacity\": {\"" LC_GPU "\": 8}}]}");
    /* Two pods of another workload: 6 GPUs on a1 (in milli-units; a1 given twice keeps
     * the last amount) and 2 on a2 (a quantity). */
    gang_evictable_amount batch[] = {
        {"a1", LC_GPU, NULL, 1000}, {"a1", LC_GPU, NULL, 6000}, {"a2", LC_GPU, "2", 0}};
    OK(gang_inventory_add_evictable(inv, "batch", 5, batch, 3, NULL));
    CHECK(available(inv, "a1") == 2000 && available(inv, "a2") == 6000);
    valid(inv);
    /* No amounts at all (NULL with 0) is a unit that uses nothing. */
    OK(gang_inventory_add_evictable(inv, "idle", 1, NULL, 0, NULL));

    gang_error *err = NULL;
    gang_evictable_amount one[] = {{"a2", LC_GPU, NULL, 1000}};
    CHECK_RC(gang_inventory_add_evictable(inv, "batch", 5, one, 1, &err), GANG_INVALID_INVENTORY);
    check_error(err, GANG_INVALID_INVENTORY, "invalid_inventory", "evictable[batch].id", NULL);
    gang_error_free(err);
    err = NULL;
    gang_evictable_amount nowhere[] = {{"a2", LC_GPU, NULL, 1000}, {"z9", LC_GPU, NULL, 1000}};
    CHECK_RC(gang_inventory_add_evictable(inv, "other", 5, nowhere, 2, &err), GANG_UNKNOWN_NODE);
    check_error(err, GANG_UNKNOWN_NODE, "unknown_node", NULL, "z9");
    gang_error_free(err);
    err = NULL;
    gang_evictable_amount null_node[] = {{"a2", LC_GPU, NULL, 1000}, {NULL, LC_GPU, NULL, 1000}};
    CHECK_RC(gang_inventory_add_evictable(inv, "other", 5, null_node, 2, &err), GANG_NULL_ARGUMENT);
    check_error(err, GANG_NULL_ARGUMENT, "null_argument", "amounts[1]", NULL);
    gang_error_free(err);
    gang_evictable_amount bad_utf8[] = {{"a2", LC_BAD_UTF8, NULL, 1000}};
    CHECK_RC(gang_inventory_add_evictable(inv, "other", 5, bad_utf8, 1, NULL), GANG_INVALID_UTF8);
    CHECK_RC(gang_inventory_add_evictable(inv, "other", 5, NULL, 1, NULL), GANG_NULL_ARGUMENT);
    err = NULL;
    gang_evictable_amount bad_quantity[] = {{"a2", LC_GPU, "two", 0}};
    CHECK_RC(gang_inventory_add_evictable(inv, "other", 5, bad_quantity, 1, &err), GANG_INVALID_QUANTITY);
    check_error(err, GANG_INVALID_QUANTITY, "invalid_quantity", "evictable[other].nodes[a2]." LC_GPU, NULL);
    gang_error_free(err);
    CHECK_RC(gang_inventory_add_evictable(inv, NULL, 5, one, 1, NULL), GANG_NULL_ARGUMENT);
    CHECK_RC(gang_inventory_add_evictable(NULL, "other", 5, one, 1, NULL), GANG_NULL_ARGUMENT);
    CHECK(available(inv, "a1") == 2000 && available(inv, "a2") == 6000); /* unchanged */

    /* Eight GPUs on one node: only if the batch unit goes. Priority 5 does not evict it. */
    gang_gang *peer = gang_from(
        "{\"name\": \"peer\", \"priority\": 5, \"roles\": [{\"name\": \"w\", \"count\": 1, "
        "\"requests\": {\"" LC_GPU "\": 8}}]}");
    gang_gang *urgent = gang_from(
        "{\"name\": \"urgent\", \"priority\": 10, \"roles\": [{\"name\": \"w\", \"count\": 1, "
        "\"requests\": {\"" LC_GPU "\": 8}}]}");
    gang_status status = 0;
    gang_string *js = NULL;
    gang_str v = {0};
    OK(gang_inventory_preempt(inv, peer, &status, &js, NULL));
    CHECK(status == GANG_STATUS_UNSCHEDULABLE);
    gang_string_free(js);
    js = NULL;
    OK(gang_inventory_preempt(inv, urgent, &status, &js, NULL));
    CHECK(status == GANG_STATUS_PLACED);
    OK(gang_string_view(js, &v));
    CHECK(str_has(v, "{\"kind\":\"unit\",\"id\":\"batch\"}") && !str_has(v, "\"idle\""));
    gang_string_free(js);

    /* The same gang raised to priority 6 with gang_gang_set_priority: it may evict. */
    OK(gang_gang_set_priority(peer, 6));
    js = NULL;
    OK(gang_inventory_preempt(inv, peer, &status, &js, NULL));
    CHECK(status == GANG_STATUS_PLACED);
    gang_string_free(js);
    CHECK_RC(gang_gang_set_priority(NULL, 6), GANG_NULL_ARGUMENT);

    OK(gang_inventory_remove_evictable(inv, "batch", NULL));
    CHECK(available(inv, "a1") == 8000 && available(inv, "a2") == 8000);
    err = NULL;
    CHECK_RC(gang_inventory_remove_evictable(inv, "batch", &err), GANG_INVALID_INVENTORY);
    check_error(err, GANG_INVALID_INVENTORY, "invalid_inventory", "evictable[batch]", NULL);
    gang_error_free(err);
    CHECK_RC(gang_inventory_remove_evictable(inv, NULL, NULL), GANG_NULL_ARGUMENT);
    CHECK_RC(gang_inventory_remove_evictable(NULL, "idle", NULL), GANG_NULL_ARGUMENT);
    OK(gang_inventory_remove_evictable(inv, "idle", NULL));
    valid(inv);
    gang_gang_free(peer);
    gang_gang_free(urgent);
    gang_inventory_free(inv);
}

/* Preemption options (gang_preempt_options): one full 8-GPU node holding a priority-1
 * gang "run" (4 GPUs) and two priority-1 units, "old" (2 GPUs) and "new" (2 GPUs and 8
 * CPUs); a priority-5 gang of 2 GPUs must evict one of the three. By GPUs the units tie
 * and the first id ("new") goes; given costs come first; the resource order is the
 * caller's; no cost resource leaves the fewest victims, then the ids (reservations
 * first); a search with no work left keeps its plan and says so. */
static gang_str preempt_with(gang_inventory *inv, gang_gang *g, const gang_preempt_options *o,
                             gang_string **js) {
    gang_status status = 0;
    gang_str v = {0};
    *js = NULL;
    OK(gang_inventory_preempt_with(inv, g, o, &status, js, NULL));
    CHECK(status == GANG_STATUS_PLACED);
    OK(gang_string_view(*js, &v));
    return v;
}

#define UNIT_VICTIM(id) "{\"kind\":\"unit\",\"id\":\"" id "\"}"

static void test_preempt_options(void) {
    gang_inventory *inv = inventory_from(
        "{\"topology\": {\"levels\": []}, \"nodes\": [{\"name\": \"n1\", \"capacity\": {\""
        LC_GPU "\": 8, \"cpu\": 16}}]}");
    uint64_t run = reserve_job(inv, "{\"name\": \"run\", \"priority\": 1, \"roles\": [{\"name\": \"w\", "
                                    "\"count\": 4, \"requests\": {\"" LC_GPU "\": 1}}]}");
    gang_evictable_amount old_amounts[] = {{"n1", LC_GPU, NULL, 2000}};
    gang_evictable_amount new_amounts[] = {{"n1", LC_GPU, NULL, 2000}, {"n1", "cpu", "8", 0}};
    OK(gang_inventory_add_evictable(inv, "old", 1, old_amounts, 1, NULL));
    OK(gang_inventory_add_evictable(inv, "new", 1, new_amounts, 2, NULL));
    gang_gang *g = gang_from("{\"name\": \"g\", \"priority\": 5, \"roles\": [{\"name\": \"w\", "
                             "\"count\": 2, \"requests\": {\"" LC_GPU "\": 1}}]}");
    gang_string *js = NULL;
    /* NULL options are the defaults, as gang_inventory_preempt. */
    gang_str v = preempt_with(inv, g, NULL, &js);
    CHECK(str_has(v, UNIT_VICTIM("new")) && !str_has(v, UNIT_VICTIM("old")));
    gang_string_free(js);

    gang_preempt_options *o = NULL;
    OK(gang_preempt_options_new(&o));
    v = preempt_with(inv, g, o, &js);
    CHECK(str_has(v, UNIT_VICTIM("new")) && str_has(v, "\"cost\":[\"0\",\"2000\"]"));
    gang_string_free(js);
    /* Work given no cost costs 0 there: run, unless it is given one too. */
    OK(gang_preempt_options_set_unit_cost(o, "new", 90, NULL));
    OK(gang_preempt_options_set_unit_cost(o, "old", 10, NULL));
    v = preempt_with(inv, g, o, &js);
    CHECK(str_has(v, "\"name\":\"run\"") && str_has(v, "\"cost\":[\"0\",\"4000\"]"));
    gang_string_free(js);
    OK(gang_preempt_options_set_reservation_cost(o, run, 100, NULL));
    v = preempt_with(inv, g, o, &js);
    CHECK(str_has(v, UNIT_VICTIM("old")) && str_has(v, "\"cost\":[\"10\",\"2000\"]"));
    gang_string_free(js);
    /* The reservation made free again: it goes, whatever its 4 GPUs. */
    OK(gang_preempt_options_set_reservation_cost(o, run, 0, NULL));
    v = preempt_with(inv, g, o, &js);
    CHECK(str_has(v, "\"name\":\"run\"") && str_has(v, "\"cost\":[\"0\",\"4000\"]"));
    gang_string_free(js);

    /* CPUs first: "new" (8 CPUs) is the dearer unit. */
    gang_preempt_options *by_cpu = NULL;
    OK(gang_preempt_options_new(&by_cpu));
    const char *cpu_first[] = {"cpu", LC_GPU};
    OK(gang_preempt_options_set_cost_resources(by_cpu, cpu_first, 2, NULL));
    v = preempt_with(inv, g, by_cpu, &js);
    CHECK(str_has(v, UNIT_VICTIM("old")) && str_has(v, "\"cost\":[\"0\",\"0\",\"2000\"]"));
    gang_string_free(js);
    /* No cost resource: one victim each; reservations come first in the tie-break. */
    OK(gang_preempt_options_set_cost_resources(by_cpu, NULL, 0, NULL));
    v = preempt_with(inv, g, by_cpu, &js);
    CHECK(str_has(v, "\"name\":\"run\"") && str_has(v, "\"cost\":[\"0\"]"));
    gang_string_free(js);
    /* No work for the search: the first plan is kept, not proven least. */
    OK(gang_preempt_options_set_max_work(by_cpu, 0, NULL));
    v = preempt_with(inv, g, by_cpu, &js);
    CHECK(str_has(v, "\"search_complete\":false"));
    gang_string_free(js);

    /* Bad arguments change nothing and name the field. */
    gang_error *err = NULL;
    const char *with_null[] = {"cpu", NULL};
    CHECK_RC(gang_preempt_options_set_cost_resources(o, with_null, 2, &err), GANG_NULL_ARGUMENT);
    check_error(err, GANG_NULL_ARGUMENT, "null_argument", "resources[1]", NULL);
    gang_error_free(err);
    const char *bad_utf8[] = {LC_BAD_UTF8};
    CHECK_RC(gang_preempt_options_set_cost_resources(o, bad_utf8, 1, NULL), GANG_INVALID_UTF8);
    CHECK_RC(gang_preempt_options_set_cost_resources(o, NULL, 1, NULL), GANG_NULL_ARGUMENT);
    CHECK_RC(gang_preempt_options_set_cost_resources(NULL, cpu_first, 2, NULL), GANG_NULL_ARGUMENT);
    CHECK_RC(gang_preempt_options_set_unit_cost(o, NULL, 1, NULL), GANG_NULL_ARGUMENT);
    CHECK_RC(gang_preempt_options_set_unit_cost(o, LC_BAD_UTF8, 1, NULL), GANG_INVALID_UTF8);
    CHECK_RC(gang_preempt_options_set_unit_cost(NULL, "old", 1, NULL), GANG_NULL_ARGUMENT);
    CHECK_RC(gang_preempt_options_set_reservation_cost(NULL, run, 1, NULL), GANG_NULL_ARGUMENT);
    CHECK_RC(gang_preempt_options_set_max_work(NULL, 1, NULL), GANG_NULL_ARGUMENT);
    CHECK_RC(gang_preempt_options_new(NULL), GANG_NULL_ARGUMENT);
    gang_status status = 0;
    err = NULL;
    /* Another handle where options go is refused before it is read. */
    CHECK_RC(gang_inventory_preempt_with(inv, g, (const gang_preempt_options *)g, &status, &js, &err),
             GANG_INVALID_HANDLE);
    check_error(err, GANG_INVALID_HANDLE, "invalid_handle", "options", "gang_preempt_options");
    gang_error_free(err);
    CHECK_RC(gang_inventory_preempt_with(NULL, g, o, &status, &js, NULL), GANG_NULL_ARGUMENT);
    CHECK_RC(gang_inventory_preempt_with(inv, g, o, NULL, &js, NULL), GANG_NULL_ARGUMENT);
    uint64_t id = 0;
    CHECK_RC(gang_inventory_preempt_reserve_with(inv, g, o, &status, NULL, &js, NULL), GANG_NULL_ARGUMENT);
    CHECK(live_reservations(inv) == 1);

    /* Evict and reserve with the options: "old" (10) goes, not "new" (90) or run (now
     * 5). */
    OK(gang_preempt_options_set_reservation_cost(o, run, 50, NULL));
    js = NULL;
    OK(gang_inventory_preempt_reserve_with(inv, g, o, &status, &id, &js, NULL));
    CHECK(status == GANG_STATUS_PLACED && id != 0);
    OK(gang_string_view(js, &v));
    CHECK(str_has(v, UNIT_VICTIM("old")));
    gang_string_free(js);
    CHECK(live_reservations(inv) == 2 && available(inv, "n1") == 0);
    /* "old" is gone: withdrawing it again is an error; "new" is still declared. */
    CHECK_RC(gang_inventory_remove_evictable(inv, "old", NULL), GANG_INVALID_INVENTORY);
    OK(gang_inventory_remove_evictable(inv, "new", NULL));
    valid(inv);

    gang_preempt_options_free(by_cpu);
    gang_preempt_options_free(o);
    gang_preempt_options_free(NULL);
    gang_gang_free(g);
    gang_inventory_free(inv);
}

void test_lifecycle(void) {
    CHECK(GANG_STATUS_PENDING == 4 && GANG_STATUS_WAITING == 5);
    CHECK(GANG_ADMIT_FIFO == 1 && GANG_ADMIT_BACKFILL == 2);
    CHECK(GANG_CONFLICT == 6 && GANG_UNKNOWN_RESERVATION == 7 && GANG_UNKNOWN_NODE == 8);
    CHECK(strcmp(gang_result_name(GANG_CONFLICT), "conflict") == 0);
    CHECK(strcmp(gang_result_name(GANG_UNKNOWN_RESERVATION), "unknown_reservation") == 0);
    CHECK(strcmp(gang_result_name(GANG_UNKNOWN_NODE), "unknown_node") == 0);
    test_reserve_release();
    test_nodes_and_replace();
    test_spread();
    test_admit();
    test_lifecycle_bad_arguments();
    test_preempt();
    test_preempt_repeated();
    test_evictable();
    test_preempt_options();
}
