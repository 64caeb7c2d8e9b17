/*
 * The C tests' checking macros and helpers, shared by test_gang.c (which defines the
 * counters and runs everything), test_lifecycle.c and test_limits.c.
 */
#ifndef GANG_TEST_CHECK_H
#define GANG_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

#include "gang.h"

extern int failures;
extern int checks;

#define CHECK(cond)                                                              \
    do {                                                                         \
        checks++;                                                                \
        if (!(cond)) {                                                           \
            failures++;                                                          \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                        \
    } while (0)

#define CHECK_RC(call, want)                                                     \
    do {                                                                         \
        gang_result rc_ = (call);                                                \
        checks++;                                                                \
        if (rc_ != (gang_result)(want)) {                                        \
            failures++;                                                          \
            fprintf(stderr, "%s:%d: %s returned %u (%s), want %s\n", __FILE__,     \
                    __LINE__, #call, (unsigned)rc_, gang_result_name(rc_), #want); \
        }                                                                        \
    } while (0)

#define OK(call) CHECK_RC(call, GANG_OK)

/* A sentinel: out-parameters set to it must still hold it after a failed call. */
extern char sentinel_byte;
#define SENTINEL ((void *)&sentinel_byte)

static inline int str_eq(gang_str s, const char *want) {
    return s.data != NULL && s.len == strlen(want) && memcmp(s.data, want, s.len) == 0;
}

static inline int str_has(gang_str s, const char *needle) {
    /* Views of generated text are NUL-terminated; names are not (use the length). */
    size_t n = strlen(needle);
    if (n > s.len) return 0;
    for (size_t i = 0; i + n <= s.len; i++)
        if (memcmp(s.data + i, needle, n) == 0) return 1;
    return 0;
}

static inline int nul_terminated(gang_str s) { return s.data != NULL && s.data[s.len] == '\0'; }

/* Checks an error object: code, kind, field (when not NULL), message (containing
 * in_message when not NULL) and JSON. */
void check_error(gang_error *err, gang_result code, const char *kind, const char *field,
                 const char *in_message);

/* The lifecycle tests (test_lifecycle.c). */
void test_lifecycle(void);

/* The tests of a solver's limits (test_limits.c). */
void test_limits(void);

#endif
