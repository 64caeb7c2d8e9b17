/* The main job through the C ABI: the same cluster and questions as
 * `cargo run --release --example quickstart`.
 *
 * A cluster of two blocks and three racks, two 8-GPU nodes per rack. Place four
 * 1-GPU workers in one rack; then change the external usage to a snapshot where seven
 * GPUs are free but no rack has four, and print the diagnosis and what `preferred`
 * would do instead.
 *
 * Build and run (gang-ffi/test.sh does this under AddressSanitizer):
 *   cargo build --release -p gang-ffi
 *   cc -Igang-ffi/include examples/c/quickstart.c target/release/libgang_ffi.a \
 *      -lgcc_s -lutil -lrt -lpthread -lm -ldl -o quickstart && ./quickstart
 */
#include <stdio.h>
#include <stdlib.h>

#include "gang.h"

#define BLOCK "topology.example.com/block"
#define RACK "topology.example.com/rack"
#define GPU "nvidia.com/gpu"

/* Exits with the error's message when a call fails. */
static void check(gang_result rc, gang_error *err, const char *what) {
    if (rc == GANG_OK) {
        return;
    }
    gang_str msg = {"", 0};
    if (err != NULL) {
        gang_error_message(err, &msg);
    }
    fprintf(stderr, "%s failed (%u): %.*s\n", what, (unsigned)rc, (int)msg.len, msg.data);
    gang_error_free(err);
    exit(1);
}

static gang_inventory *cluster(void) {
    static const char *const levels[] = {BLOCK, RACK};
    static const char *const nodes[][3] = {
        {"a1", "b1", "a"}, {"a2", "b1", "a"}, {"b1", "b1", "b"},
        {"b2", "b1", "b"}, {"c1", "b2", "c"}, {"c2", "b2", "c"},
    };
    static const char *const used[] = {"6", "6", "8", "8", "8", "8"};
    gang_error *err = NULL;
    gang_inventory_builder *b = NULL;
    check(gang_inventory_builder_new(levels, 2, &b, &err), err, "builder");
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
        gang_node *n = NULL;
        check(gang_node_new(nodes[i][0], &n), NULL, "node");
        check(gang_node_add_label(n, BLOCK, nodes[i][1]), NULL, "label");
        check(gang_node_add_label(n, RACK, nodes[i][2]), NULL, "label");
        check(gang_node_set_capacity(n, GPU, "8"), NULL, "capacity");
        check(gang_node_set_capacity(n, "cpu", "96"), NULL, "capacity");
        check(gang_node_set_used(n, GPU, used[i]), NULL, "used");
        check(gang_inventory_builder_add_node(b, n), NULL, "add node");
        gang_node_free(n);
    }
    gang_inventory *inv = NULL;
    check(gang_inventory_builder_build(b, &inv, &err), err, "build");
    gang_inventory_builder_free(b);
    return inv;
}

/* Four 1-GPU workers, rack required or only preferred. */
static gang_gang *workers(int required) {
    gang_role *w = NULL;
    check(gang_role_new("worker", 4, &w), NULL, "role");
    check(gang_role_set_request(w, GPU, "1"), NULL, "request");
    gang_gang *g = NULL;
    check(gang_gang_new("training-workers", &g), NULL, "gang");
    check(gang_gang_add_role(g, w), NULL, "add role");
    gang_role_free(w);
    check(required ? gang_gang_set_required(g, RACK) : gang_gang_set_preferred(g, RACK),
          NULL, "topology");
    return g;
}

static void show(const char *title, const gang_inventory *inv, const gang_gang *g) {
    gang_status status;
    gang_placement *p = NULL;
    gang_diagnosis *d = NULL;
    gang_error *err = NULL;
    check(gang_inventory_place(inv, g, &status, &p, &d, &err), err, "place");
    printf("== %s\n", title);
    if (status == GANG_STATUS_PLACED) {
        gang_str path;
        size_t n = 0;
        gang_placement_domain_path(p, &path);
        gang_placement_assignments_len(p, &n);
        printf("placed in %s:", path.data);
        for (size_t i = 0; i < n; i++) {
            gang_str role, node;
            uint32_t count;
            gang_placement_assignment_at(p, i, &role, &node, &count);
            printf(" %u %.*s on %.*s", count, (int)role.len, role.data, (int)node.len,
                   node.data);
        }
        printf("\n\n");
    } else {
        gang_str text;
        gang_diagnosis_text(d, &text);
        printf("%.*s\n\n", (int)text.len, text.data);
    }
    gang_placement_free(p); /* one of the two is NULL: fine */
    gang_diagnosis_free(d);
}

int main(void) {
    gang_inventory *inv = cluster();
    gang_gang *required = workers(1);
    gang_gang *preferred = workers(0);
    show("rack a has four free GPUs; rack required", inv, required);

    /* Other pods take GPUs: seven stay free, no rack has four. */
    static const char *const busy[][2] = {{"a2", "7"}, {"b1", "6"}, {"c1", "7"}, {"c2", "7"}};
    for (size_t i = 0; i < sizeof busy / sizeof busy[0]; i++) {
        gang_change *change = NULL;
        gang_error *err = NULL;
        check(gang_inventory_set_used(inv, busy[i][0], GPU, busy[i][1], &change, &err), err,
              "set used");
        gang_change_free(change);
    }
    show("seven GPUs free, no rack has four; rack required", inv, required);
    show("the same snapshot; rack only preferred", inv, preferred);

    gang_gang_free(required);
    gang_gang_free(preferred);
    gang_inventory_free(inv);
    return 0;
}
