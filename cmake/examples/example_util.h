/*
 * Helpers shared by the C examples that generate their own image sequences (example_tld.c,
 * example_kcf.c): a call-checking macro, and procedural texture without libm (a sine, value
 * noise from an integer hash), so the examples build with nothing but the library. C99;
 * `static inline` functions (no unused-function warning where one is not used), include once
 * from the example's .c file.
 */
#ifndef MVISION_EXAMPLE_UTIL_H
#define MVISION_EXAMPLE_UTIL_H

#include <mvision.h>

#include <stdint.h>
#include <stdio.h>

/* Evaluates a libmvision call; on failure reports it and leaves main with status 1. */
#define MV_TRY(call)                                                                   \
    do {                                                                               \
        mv_status mv_try_status_ = (call);                                             \
        if (mv_try_status_ != MV_STATUS_OK) {                                          \
            fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call,  \
                    mv_status_name(mv_try_status_),                                    \
                    mv_status_description(mv_try_status_));                            \
            goto fail;                                                                 \
        }                                                                              \
    } while (0)

/* sin(x) without libm: reduction to [-pi, pi], then the Taylor series to x^13 (error < 1e-6). */
static inline float sine(float x)
{
    const float pi = 3.14159265f, two_pi = 6.28318531f;
    float x2, term, sum;
    int k;
    while (x > pi) {
        x -= two_pi;
    }
    while (x < -pi) {
        x += two_pi;
    }
    x2 = x * x;
    term = x;
    sum = x;
    for (k = 1; k <= 6; k++) {
        term *= -x2 / (float)((2 * k) * (2 * k + 1));
        sum += term;
    }
    return sum;
}

static inline float floor_f(float v)
{
    float t = (float)(int32_t)v;
    return t > v ? t - 1.0f : t;
}

/* A hash of a lattice point, in [0, 255]. */
static inline float lattice(uint32_t seed, int32_t i, int32_t j)
{
    uint32_t h = seed * 0x9E3779B9u ^ (uint32_t)i * 0x85EBCA6Bu ^ (uint32_t)j * 0xC2B2AE35u;
    h ^= h >> 16;
    h *= 0x7FEB352Du;
    h ^= h >> 15;
    h *= 0x846CA68Bu;
    h ^= h >> 16;
    return (float)(h >> 24);
}

/* Smooth value noise in [0, 255]: bilinear interpolation of the lattice hash, `cell` px apart. */
static inline float value_noise(uint32_t seed, float x, float y, float cell)
{
    float fx = x / cell, fy = y / cell;
    float ix = floor_f(fx), iy = floor_f(fy);
    float tx = fx - ix, ty = fy - iy;
    int32_t i = (int32_t)ix, j = (int32_t)iy;
    float top = lattice(seed, i, j) * (1.0f - tx) + lattice(seed, i + 1, j) * tx;
    float bottom = lattice(seed, i, j + 1) * (1.0f - tx) + lattice(seed, i + 1, j + 1) * tx;
    return top * (1.0f - ty) + bottom * ty;
}

/* Intersection over union of two boxes (0 when either is empty). */
static inline float iou(mv_rectf a, mv_rectf b)
{
    float x1 = a.x > b.x ? a.x : b.x;
    float y1 = a.y > b.y ? a.y : b.y;
    float x2 = (a.x + a.width < b.x + b.width) ? a.x + a.width : b.x + b.width;
    float y2 = (a.y + a.height < b.y + b.height) ? a.y + a.height : b.y + b.height;
    float inter, uni;
    if (x2 <= x1 || y2 <= y1) {
        return 0.0f;
    }
    inter = (x2 - x1) * (y2 - y1);
    uni = a.width * a.height + b.width * b.height - inter;
    return uni > 0.0f ? inter / uni : 0.0f;
}

#endif /* MVISION_EXAMPLE_UTIL_H */
