/*
 * ctest suite of the CNN C API (mv_net_*), in C99 (-Wall -Wextra -Werror -pedantic, run plain
 * and under ASan + UBSan). Usage: test_net <path of data/tiny.mvnn>.
 *
 * (a) the tiny model of ffi/tests/net.rs (image 1x2x6x6 and a per-channel bias -> conv 3x3 ->
 *     + bias -> ReLU -> max-pool 2 = "pooled" -> fully connected -> softmax = "probs") loads
 *     copied and borrowed, reports its counts, shapes and names, and reproduces, bit for bit,
 *     the outputs the Rust test recorded in data/tiny_expected.h for the same fixed inputs
 *     (which this file recomputes from their formula and compares first); the probabilities
 *     sum to 1;
 * (b) every bad input returns its documented status and leaves every output untouched: NULL
 *     pointers, unknown flags, a misaligned borrowed model, the file truncated at every length,
 *     a flipped bit in every byte, wrong counts and lengths, overlapping buffers.
 *
 * Prints one line per failed check and finally "N passed, N failed"; exits non-zero if anything
 * failed.
 */
#include <mvision.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "data/tiny_expected.h"

#define IMAGE_LEN 72u
#define BIAS_LEN 3u
#define PROBS_LEN 4u
#define POOLED_LEN 27u

static unsigned char *g_file;
static size_t g_size;
static float g_image[IMAGE_LEN];
static float g_bias[BIAS_LEN];

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Reads the whole file; exits on failure (nothing else can be tested without it). */
static void load(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n;
    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 ||
        fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    g_size = (size_t)n;
    g_file = (unsigned char *)malloc(g_size);
    if (g_file == NULL || fread(g_file, 1, g_size, f) != g_size) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
}

/* One forward pass of `net` on the fixed inputs into `probs` and `pooled`. */
static mv_status run(mv_net *net, float *probs, float *pooled)
{
    const float *inputs[2];
    float *outputs[2];
    size_t in_lens[2] = {IMAGE_LEN, BIAS_LEN};
    size_t out_lens[2] = {PROBS_LEN, POOLED_LEN};
    inputs[0] = g_image;
    inputs[1] = g_bias;
    outputs[0] = probs;
    outputs[1] = pooled;
    return mv_net_forward(net, inputs, in_lens, 2, outputs, out_lens, 2);
}

static void check_outputs(const float *probs, const float *pooled)
{
    unsigned i, same = 1;
    double sum = 0.0;
    for (i = 0; i < PROBS_LEN; i++) {
        same = same && bits_of(probs[i]) == tiny_probs_bits[i];
        sum += probs[i];
    }
    for (i = 0; i < POOLED_LEN; i++) {
        same = same && bits_of(pooled[i]) == tiny_pooled_bits[i];
        CHECK(pooled[i] >= 0.0f); /* after ReLU */
    }
    CHECK(same);
    CHECK_NEAR(sum, 1.0, 1e-6);
}

static void test_inputs_match_the_recorded_ones(void)
{
    unsigned i, same = 1;
    for (i = 0; i < IMAGE_LEN; i++) {
        same = same && bits_of(g_image[i]) == tiny_image_bits[i];
    }
    for (i = 0; i < BIAS_LEN; i++) {
        same = same && bits_of(g_bias[i]) == tiny_bias_bits[i];
    }
    CHECK(same);
}

static void test_good_path(void)
{
    mv_net *net = NULL, *borrowed = NULL;
    size_t n = 0, arena = 0, scratch = 0;
    uint32_t dims[4];
    float probs[PROBS_LEN], pooled[POOLED_LEN];
    unsigned char *copy;

    CHECK_OK(mv_net_create(g_file, g_size, 0, MV_NET_DEFAULT_WORKSPACE_BYTES, &net));
    if (net == NULL) {
        return;
    }
    CHECK_OK(mv_net_input_count(net, &n));
    CHECK_INT(n, 2);
    CHECK_OK(mv_net_output_count(net, &n));
    CHECK_INT(n, 2);
    CHECK_OK(mv_net_arena_size(net, &arena));
    CHECK_OK(mv_net_scratch_size(net, &scratch));
    CHECK(arena > 0 && arena % 4 == 0 && scratch % 4 == 0);
    CHECK_OK(mv_net_input_shape(net, 0, dims));
    CHECK(dims[0] == 1 && dims[1] == 2 && dims[2] == 6 && dims[3] == 6);
    CHECK_OK(mv_net_input_shape(net, 1, dims));
    CHECK(dims[0] == 1 && dims[1] == 3 && dims[2] == 1 && dims[3] == 1);
    CHECK_OK(mv_net_output_shape(net, 0, dims));
    CHECK(dims[0] == 1 && dims[1] == 4 && dims[2] == 1 && dims[3] == 1);
    CHECK_OK(mv_net_output_shape(net, 1, dims));
    CHECK(dims[0] == 1 && dims[1] == 3 && dims[2] == 3 && dims[3] == 3);
    CHECK(strcmp(mv_net_input_name(net, 0), "image") == 0);
    CHECK(strcmp(mv_net_input_name(net, 1), "bias") == 0);
    CHECK(strcmp(mv_net_output_name(net, 0), "probs") == 0);
    CHECK(strcmp(mv_net_output_name(net, 1), "pooled") == 0);
    CHECK(mv_net_input_name(net, 2) == NULL);
    CHECK(mv_net_output_name(net, 2) == NULL);
    CHECK(mv_net_input_name(NULL, 0) == NULL);

    CHECK_OK(run(net, probs, pooled));
    check_outputs(probs, pooled);
    CHECK_OK(run(net, probs, pooled)); /* again: the arena's old contents do not matter */
    check_outputs(probs, pooled);

    /* Borrowed: malloc's memory is aligned for any type; the bytes must outlive the net. */
    copy = (unsigned char *)malloc(g_size);
    if (copy != NULL) {
        memcpy(copy, g_file, g_size);
        CHECK_OK(mv_net_create(copy, g_size, MV_NET_BORROW, 0, &borrowed));
        if (borrowed != NULL) {
            CHECK_OK(run(borrowed, probs, pooled));
            check_outputs(probs, pooled); /* budget 0: direct, as the default picks for 3 channels */
        }
        mv_net_destroy(borrowed);
        free(copy);
    }
    mv_net_destroy(net);
    mv_net_destroy(NULL);
}

static void test_create_errors(void)
{
    mv_net *net;
    size_t len, i;
    unsigned char *buf = (unsigned char *)malloc(g_size + 4);
    if (buf == NULL) {
        CHECK(buf != NULL);
        return;
    }
    CHECK_FAILS(MV_STATUS_NULL_POINTER, net, mv_net_create(NULL, g_size, 0, 0, &net));
    CHECK_STATUS(mv_net_create(g_file, g_size, 0, 0, NULL), MV_STATUS_NULL_POINTER);
    CHECK_FAILS(MV_STATUS_INVALID_ARGUMENT, net, mv_net_create(g_file, g_size, 2, 0, &net));
    CHECK_FAILS(MV_STATUS_OVERFLOW, net, mv_net_create(g_file, SIZE_MAX, 0, 0, &net));

    /* A borrowed model must be 4-byte aligned; a copied one need not be. */
    memcpy(buf + 1, g_file, g_size);
    CHECK_FAILS(MV_STATUS_MISALIGNED, net,
                mv_net_create(buf + 1, g_size, MV_NET_BORROW, 0, &net));
    net = NULL;
    CHECK_OK(mv_net_create(buf + 1, g_size, 0, 0, &net));
    mv_net_destroy(net);

    /* Every truncation. */
    for (len = 0; len < g_size; len++) {
        set_context("truncated to %zu of %zu bytes", len, g_size);
        CHECK_FAILS(MV_STATUS_MALFORMED, net, mv_net_create(g_file, len, 0, 0, &net));
    }
    /* One flipped bit in every byte: the checksum catches it (the version field says so). */
    for (i = 0; i < g_size; i++) {
        uint32_t want = (i >= 4 && i < 8) ? MV_STATUS_UNSUPPORTED_VERSION : MV_STATUS_MALFORMED;
        set_context("bit %zu flipped", i * 8 + i % 8);
        memcpy(buf, g_file, g_size);
        buf[i] ^= (unsigned char)(1u << (i % 8));
        CHECK_FAILS(want, net, mv_net_create(buf, g_size, 0, 0, &net));
    }
    g_context[0] = '\0';
    free(buf);
}

static void test_forward_errors(void)
{
    mv_net *net = NULL;
    float probs[PROBS_LEN], pooled[POOLED_LEN], wide[40];
    const float *inputs[2];
    float *outputs[2];
    size_t in_lens[2] = {IMAGE_LEN, BIAS_LEN};
    size_t out_lens[2] = {PROBS_LEN, POOLED_LEN};
    size_t bad_lens[2];

    CHECK_OK(mv_net_create(g_file, g_size, 0, MV_NET_DEFAULT_WORKSPACE_BYTES, &net));
    if (net == NULL) {
        return;
    }
    inputs[0] = g_image;
    inputs[1] = g_bias;
    outputs[0] = probs;
    outputs[1] = pooled;

    CHECK_FAILS2(MV_STATUS_NULL_POINTER, probs, pooled,
                 mv_net_forward(NULL, inputs, in_lens, 2, outputs, out_lens, 2));
    CHECK_FAILS2(MV_STATUS_NULL_POINTER, probs, pooled,
                 mv_net_forward(net, NULL, in_lens, 2, outputs, out_lens, 2));
    CHECK_FAILS2(MV_STATUS_NULL_POINTER, probs, pooled,
                 mv_net_forward(net, inputs, NULL, 2, outputs, out_lens, 2));
    CHECK_FAILS2(MV_STATUS_NULL_POINTER, probs, pooled,
                 mv_net_forward(net, inputs, in_lens, 2, outputs, NULL, 2));
    CHECK_FAILS2(MV_STATUS_INVALID_ARGUMENT, probs, pooled,
                 mv_net_forward(net, inputs, in_lens, 1, outputs, out_lens, 2));
    CHECK_FAILS2(MV_STATUS_INVALID_ARGUMENT, probs, pooled,
                 mv_net_forward(net, inputs, in_lens, 2, outputs, out_lens, 3));

    bad_lens[0] = IMAGE_LEN - 1;
    bad_lens[1] = BIAS_LEN;
    CHECK_FAILS2(MV_STATUS_SIZE_MISMATCH, probs, pooled,
                 mv_net_forward(net, inputs, bad_lens, 2, outputs, out_lens, 2));
    bad_lens[0] = PROBS_LEN;
    bad_lens[1] = POOLED_LEN + 1;
    CHECK_FAILS2(MV_STATUS_SIZE_MISMATCH, probs, pooled,
                 mv_net_forward(net, inputs, in_lens, 2, outputs, bad_lens, 2));

    inputs[1] = NULL;
    CHECK_FAILS2(MV_STATUS_NULL_POINTER, probs, pooled,
                 mv_net_forward(net, inputs, in_lens, 2, outputs, out_lens, 2));
    inputs[1] = g_bias;

    /* Two outputs in one buffer. */
    outputs[0] = wide;
    outputs[1] = wide + 2;
    CHECK_FAILS(MV_STATUS_OVERLAP, wide,
                mv_net_forward(net, inputs, in_lens, 2, outputs, out_lens, 2));
    outputs[0] = probs;
    outputs[1] = pooled;

    mv_net_destroy(net);
}

int main(int argc, char **argv)
{
    unsigned i;
    if (argc != 2) {
        fprintf(stderr, "usage: %s <tiny.mvnn>\n", argv[0]);
        return 2;
    }
    load(argv[1]);
    /* The fixed inputs, the same formulas as fixed_inputs() in ffi/tests/net.rs. */
    for (i = 0; i < IMAGE_LEN; i++) {
        g_image[i] = (float)((i * 37u) % 17u) / 8.0f - 1.0f;
    }
    for (i = 0; i < BIAS_LEN; i++) {
        g_bias[i] = 0.25f * (float)i - 0.25f;
    }

    test_inputs_match_the_recorded_ones();
    test_good_path();
    test_create_errors();
    test_forward_errors();

    free(g_file);
    printf("%u passed, %u failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
