/*
 * libmvision from C99: run a CNN stored as a .mvnn model file.
 *
 * Usage: example_net <model.mvnn>
 *
 * Loads the file into memory, creates the net (copying the bytes, default workspace budget),
 * prints every input's and output's name and NCHW shape and the memory the net reserved, runs
 * it once on a deterministic input (element i of every input is ((i * 37) mod 17) / 8 - 1) and
 * prints the first values and the sum of every output. Exits non-zero on any failed call.
 */
#include <mvision.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "example_util.h"

#define MAX_TENSORS 16u
#define SHOWN 8u

/* The whole file in a malloc'd buffer (*size bytes), or NULL. */
static unsigned char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    unsigned char *data = NULL;
    long n;
    if (f == NULL) {
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
        data = (unsigned char *)malloc((size_t)n);
        if (data != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
            free(data);
            data = NULL;
        }
        *size = (size_t)n;
    }
    fclose(f);
    return data;
}

static size_t elements(const uint32_t dims[4])
{
    return (size_t)dims[0] * dims[1] * dims[2] * dims[3];
}

int main(int argc, char **argv)
{
    mv_net *net = NULL;
    unsigned char *file = NULL;
    size_t size = 0, n_in = 0, n_out = 0, arena = 0, scratch = 0, k, i;
    const float *inputs[MAX_TENSORS] = {0};
    float *outputs[MAX_TENSORS] = {0};
    size_t in_lens[MAX_TENSORS], out_lens[MAX_TENSORS];
    uint32_t dims[4];
    int rc = 1;

    if (argc != 2) {
        fprintf(stderr, "usage: %s <model.mvnn>\n", argv[0]);
        return 2;
    }
    file = read_file(argv[1], &size);
    if (file == NULL) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    MV_TRY(mv_net_create(file, size, 0, MV_NET_DEFAULT_WORKSPACE_BYTES, &net));
    free(file); /* the net holds its own copy */
    file = NULL;
    MV_TRY(mv_net_input_count(net, &n_in));
    MV_TRY(mv_net_output_count(net, &n_out));
    MV_TRY(mv_net_arena_size(net, &arena));
    MV_TRY(mv_net_scratch_size(net, &scratch));
    printf("%s: %zu input(s), %zu output(s), arena %zu bytes, scratch %zu bytes\n", argv[1], n_in,
           n_out, arena, scratch);
    if (n_in > MAX_TENSORS || n_out > MAX_TENSORS) {
        fprintf(stderr, "more than %u inputs or outputs\n", MAX_TENSORS);
        goto fail;
    }
    for (k = 0; k < n_in; k++) {
        float *x;
        MV_TRY(mv_net_input_shape(net, k, dims));
        in_lens[k] = elements(dims);
        printf("input %zu '%s': %ux%ux%ux%u\n", k, mv_net_input_name(net, k), dims[0], dims[1],
               dims[2], dims[3]);
        x = (float *)malloc(in_lens[k] * sizeof *x);
        if (x == NULL) {
            goto fail;
        }
        for (i = 0; i < in_lens[k]; i++) {
            x[i] = (float)((i * 37u) % 17u) / 8.0f - 1.0f;
        }
        inputs[k] = x;
    }
    for (k = 0; k < n_out; k++) {
        MV_TRY(mv_net_output_shape(net, k, dims));
        out_lens[k] = elements(dims);
        outputs[k] = (float *)malloc(out_lens[k] * sizeof(float));
        if (outputs[k] == NULL) {
            goto fail;
        }
    }
    MV_TRY(mv_net_forward(net, inputs, in_lens, n_in, outputs, out_lens, n_out));
    for (k = 0; k < n_out; k++) {
        double sum = 0.0;
        MV_TRY(mv_net_output_shape(net, k, dims));
        printf("output %zu '%s': %ux%ux%ux%u:", k, mv_net_output_name(net, k), dims[0],
               dims[1], dims[2], dims[3]);
        for (i = 0; i < out_lens[k]; i++) {
            if (i < SHOWN) {
                printf(" %.6g", (double)outputs[k][i]);
            }
            sum += outputs[k][i];
        }
        printf("%s (sum %.6g)\n", out_lens[k] > SHOWN ? " ..." : "", sum);
    }
    rc = 0;
fail:
    for (k = 0; k < MAX_TENSORS; k++) {
        free((void *)inputs[k]);
        free(outputs[k]);
    }
    free(file);
    mv_net_destroy(net);
    return rc;
}
