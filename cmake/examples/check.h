/*
 * The checking harness shared by the C test suites (test_api.c, test_tld.c, test_kcf.c):
 * counters, CHECK macros that print file:line and status names, a context line for loops, and
 * the sentinel checks that prove a failing call left its outputs untouched. C99; functions are `static
 * inline` so a suite that does not use one gets no unused-function warning under -Werror.
 * Include it once, from the suite's .c file.
 */
#ifndef MVISION_TEST_CHECK_H
#define MVISION_TEST_CHECK_H

#include <mvision.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* Checking                                                                                   */
/* ------------------------------------------------------------------------------------------ */

static unsigned g_passed;
static unsigned g_failed;
static char g_context[200]; /* what the current loop iteration tests; printed with failures */

static inline void set_context(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_context, sizeof g_context, fmt, ap);
    va_end(ap);
}

static inline void fail_prefix(const char *file, int line)
{
    g_failed++;
    fflush(stdout); /* keep notes and failures in order when both streams share a pipe */
    fprintf(stderr, "%s:%d: ", file, line);
    if (g_context[0] != '\0') {
        fprintf(stderr, "[%s] ", g_context);
    }
}

static inline void check_true(int ok, const char *file, int line, const char *what)
{
    if (ok) {
        g_passed++;
        return;
    }
    fail_prefix(file, line);
    fprintf(stderr, "CHECK failed: %s\n", what);
}

static inline void check_status(mv_status got, uint32_t want, const char *file, int line,
                         const char *call)
{
    if ((uint32_t)got == want) {
        g_passed++;
        return;
    }
    fail_prefix(file, line);
    fprintf(stderr, "%s returned %s, expected %s\n", call, mv_status_name(got),
            mv_status_name(want));
}

static inline void check_int(long long got, long long want, const char *file, int line,
                      const char *what)
{
    if (got == want) {
        g_passed++;
        return;
    }
    fail_prefix(file, line);
    fprintf(stderr, "%s is %lld, expected %lld\n", what, got, want);
}

static inline void check_near(double got, double want, double tol, const char *file, int line,
                       const char *what)
{
    double d = got > want ? got - want : want - got;
    if (d <= tol) {
        g_passed++;
        return;
    }
    fail_prefix(file, line);
    fprintf(stderr, "%s is %.9g, expected %.9g (tolerance %g)\n", what, got, want, tol);
}

#define CHECK(cond) check_true((cond) != 0, __FILE__, __LINE__, #cond)
#define CHECK_STATUS(call, want) check_status((call), (uint32_t)(want), __FILE__, __LINE__, #call)
#define CHECK_OK(call) CHECK_STATUS(call, MV_STATUS_OK)
#define CHECK_INT(got, want) \
    check_int((long long)(got), (long long)(want), __FILE__, __LINE__, #got)
#define CHECK_NEAR(got, want, tol) \
    check_near((double)(got), (double)(want), (double)(tol), __FILE__, __LINE__, #got)

#define SENTINEL 0xA5

static inline void poison(void *p, size_t n) { memset(p, SENTINEL, n); }

static inline int untouched(const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < n; i++) {
        if (b[i] != SENTINEL) {
            return 0;
        }
    }
    return 1;
}

/* `call` must return `want` and leave the object `out` (an array or struct) untouched. */
#define CHECK_FAILS(want, out, call)                                                           \
    do {                                                                                       \
        poison(&(out), sizeof(out));                                                           \
        CHECK_STATUS(call, want);                                                              \
        check_true(untouched(&(out), sizeof(out)), __FILE__, __LINE__,                         \
                   "output '" #out "' unchanged after " #call);                               \
    } while (0)

/* As CHECK_FAILS, with two outputs. */
#define CHECK_FAILS2(want, out1, out2, call)                                                   \
    do {                                                                                       \
        poison(&(out1), sizeof(out1));                                                         \
        poison(&(out2), sizeof(out2));                                                         \
        CHECK_STATUS(call, want);                                                              \
        check_true(untouched(&(out1), sizeof(out1)) && untouched(&(out2), sizeof(out2)),      \
                   __FILE__, __LINE__, "outputs '" #out1 "', '" #out2 "' unchanged after " #call); \
    } while (0)

/* An mv_rect from its four fields (C99 has compound literals, but not in every C++ reader). */
static inline mv_rect rect(int32_t x, int32_t y, int32_t w, int32_t h)
{
    mv_rect r;
    r.x = x;
    r.y = y;
    r.width = w;
    r.height = h;
    return r;
}

/* An integer hash of a lattice point and a seed, in [0, 255] (test textures). */
static inline uint8_t hash8(uint32_t x, uint32_t y, uint32_t seed)
{
    uint32_t h = x * 0x9E3779B9u ^ y * 0x85EBCA6Bu ^ seed * 0xC2B2AE35u;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    return (uint8_t)(h >> 24);
}

/* An image descriptor taken as given (no validation), so tests can build invalid ones: data_size
 * exactly the documented minimum, stride·(height−1) + width·pixel size. */
static inline mv_image image(void *data, uint32_t w, uint32_t h, size_t stride, mv_pixel_format f)
{
    mv_image im;
    im.data = data;
    im.width = w;
    im.height = h;
    im.stride = stride;
    im.format = f;
    im.data_size = stride * (h - 1) + (size_t)w * mv_pixel_format_size(f);
    return im;
}

/* A tracker update (`call`) must return `want` and leave its three outputs, the caller's
 * variables `box`, `found` and `conf`, untouched. */
#define CHECK_UPDATE_FAILS(want, call)                                                         \
    do {                                                                                       \
        poison(&box, sizeof box);                                                              \
        poison(&found, sizeof found);                                                          \
        poison(&conf, sizeof conf);                                                            \
        CHECK_STATUS(call, want);                                                              \
        check_true(untouched(&box, sizeof box) && untouched(&found, sizeof found) &&           \
                       untouched(&conf, sizeof conf),                                          \
                   __FILE__, __LINE__, "update outputs unchanged after " #call);              \
    } while (0)

#endif /* MVISION_TEST_CHECK_H */
