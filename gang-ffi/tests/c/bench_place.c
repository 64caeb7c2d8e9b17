/*
 * Timing of one placement query through the C ABI: the same instances (same generator
 * and seed) and query as examples/timing.rs and the Go benchmarks. Measured, not
 * asserted. Built by gang-ffi/test.sh --bench (-O2, release library):
 *
 *   bench_place [iterations]
 *
 * "10k": 20 blocks x 16 racks x 32 nodes of 8 GPUs, splitmix64(42) % 9 GPUs used per
 * node. "tiny": one rack of 4 free nodes. The query: 4 workers x 8 GPUs, rack
 * required, compiled once, one warm solver; each iteration places and frees the result.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gang.h"

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define TRY(call)                                                              \
    do {                                                                       \
        gang_result rc_ = (call);                                              \
        if (rc_ != GANG_OK) {                                                  \
            fprintf(stderr, "%s failed: %s\n", #call, gang_result_name(rc_));  \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static const char *levels[] = {"topology.example.com/block", "topology.example.com/rack"};

static gang_inventory *cluster(int blocks, int racks, int nodes, int busy) {
    uint64_t state = 42;
    gang_inventory_builder *b = NULL;
    TRY(gang_inventory_builder_new(levels, 2, &b, NULL));
    for (int bl = 0; bl < blocks; bl++) {
        for (int r = 0; r < racks; r++) {
            for (int n = 0; n < nodes; n++) {
                int i = (bl * racks + r) * nodes + n;
                uint64_t used = busy ? splitmix64(&state) % 9 : 0;
                char name[16], bv[16], rv[16];
                snprintf(name, sizeof name, "n%05d", i);
                snprintf(bv, sizeof bv, "b%02d", bl);
                snprintf(rv, sizeof rv, "r%02d", r);
                gang_node *node = NULL;
                TRY(gang_node_new(name, &node));
                TRY(gang_node_add_label(node, levels[0], bv));
                TRY(gang_node_add_label(node, levels[1], rv));
                TRY(gang_node_add_label(node, "nvidia.com/gpu.product", "H200"));
                TRY(gang_node_set_capacity_millis(node, "nvidia.com/gpu", 8000));
                TRY(gang_node_set_used_millis(node, "nvidia.com/gpu", used * 1000));
                TRY(gang_inventory_builder_add_node(b, node));
                gang_node_free(node);
            }
        }
    }
    gang_inventory *inv = NULL;
    TRY(gang_inventory_builder_build(b, &inv, NULL));
    gang_inventory_builder_free(b);
    return inv;
}

static void measure(const char *name, gang_inventory *inv, long iters, int batches) {
    gang_role *role = NULL;
    TRY(gang_role_new("worker", 4, &role));
    TRY(gang_role_set_request_millis(role, "nvidia.com/gpu", 8000));
    gang_gang *g = NULL;
    TRY(gang_gang_new("bench", &g));
    TRY(gang_gang_add_role(g, role));
    TRY(gang_gang_set_required(g, levels[1]));
    gang_compiled *c = NULL;
    TRY(gang_inventory_compile(inv, g, &c, NULL));
    gang_solver *s = NULL;
    TRY(gang_solver_new(&s));

    gang_status status = 0;
    gang_placement *p = NULL;
    gang_diagnosis *d = NULL;
    TRY(gang_solver_place(s, inv, c, &status, &p, &d, NULL));
    if (status != GANG_STATUS_PLACED) {
        fprintf(stderr, "the benchmark gang should fit\n");
        exit(1);
    }
    gang_str path;
    size_t n_nodes = 0, len = 0;
    TRY(gang_placement_domain_path(p, &path));
    TRY(gang_inventory_node_count(inv, &n_nodes));
    printf("%s: nodes=%zu domain=%s assignments=", name, n_nodes, path.data);
    TRY(gang_placement_assignments_len(p, &len));
    for (size_t i = 0; i < len; i++) {
        gang_str role_name, node;
        uint32_t k;
        TRY(gang_placement_assignment_at(p, i, &role_name, &node, &k));
        printf("%s%.*s:%u", i ? "," : "", (int)node.len, node.data, k);
    }
    printf("\n");
    gang_placement_free(p);

    double *place = malloc(sizeof(double) * (size_t)batches);
    double *read = malloc(sizeof(double) * (size_t)batches);
    uint64_t members = 0;
    for (long i = 0; i < iters; i++) { /* warm */
        TRY(gang_solver_place(s, inv, c, &status, &p, &d, NULL));
        gang_placement_free(p);
        gang_diagnosis_free(d);
    }
    for (int b = 0; b < batches; b++) {
        double t0 = now_ns();
        for (long i = 0; i < iters; i++) {
            TRY(gang_solver_place(s, inv, c, &status, &p, &d, NULL));
            gang_placement_free(p);
            gang_diagnosis_free(d);
        }
        place[b] = (now_ns() - t0) / (double)iters;
        /* The same, also reading every assignment (views, no copies). */
        t0 = now_ns();
        for (long i = 0; i < iters; i++) {
            TRY(gang_solver_place(s, inv, c, &status, &p, &d, NULL));
            TRY(gang_placement_assignments_len(p, &len));
            for (size_t j = 0; j < len; j++) {
                gang_str role_name, node;
                uint32_t k;
                TRY(gang_placement_assignment_at(p, j, &role_name, &node, &k));
                members += k;
            }
            gang_placement_free(p);
        }
        read[b] = (now_ns() - t0) / (double)iters;
    }
    qsort(place, (size_t)batches, sizeof(double), cmp_double);
    qsort(read, (size_t)batches, sizeof(double), cmp_double);
    printf("  C via the ABI place:        %10.0f ns/op (median of %d batches of %ld)\n",
           place[batches / 2], batches, iters);
    printf("  C place + read assignments: %10.0f ns/op (%llu members read)\n", read[batches / 2],
           (unsigned long long)members);
    free(place);
    free(read);
    gang_solver_free(s);
    gang_compiled_free(c);
    gang_gang_free(g);
    gang_role_free(role);
}

int main(int argc, char **argv) {
    long iters = argc > 1 ? atol(argv[1]) : 2000;
    int batches = argc > 2 ? atoi(argv[2]) : 15;
    if (iters < 1 || batches < 1) {
        fprintf(stderr, "usage: bench_place [iterations per batch] [batches]\n");
        return 2;
    }
    gang_inventory *big = cluster(20, 16, 32, 1);
    measure("10k", big, iters, batches);
    gang_inventory_free(big);
    gang_inventory *tiny = cluster(1, 1, 4, 0);
    measure("tiny", tiny, iters * 100, batches);
    gang_inventory_free(tiny);
    return 0;
}
