/*
 * libmvision from C99: blur and differentiate a generated image, then query window statistics
 * from its integral images. Every call's status is checked; a failure prints the status name
 * and description and exits non-zero.
 */
#include <mvision.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 64u
#define HEIGHT 48u

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

int main(void)
{
    /* Caller-owned storage: the library never allocates image memory. */
    static uint8_t pixels[HEIGHT][WIDTH];
    static uint8_t blurred[HEIGHT][WIDTH];
    static int16_t dx[HEIGHT][WIDTH];
    static int16_t dy[HEIGHT][WIDTH];
    static uint32_t sum[HEIGHT + 1][WIDTH + 1];
    static uint64_t sqsum[HEIGHT + 1][WIDTH + 1];
    mv_image src, dst, gx, gy, tsum, tsq;
    mv_context *ctx = NULL;
    mv_backend backends = 0;
    mv_border replicate;
    mv_rect square, window;
    uint32_t x, y, window_sum = 0;
    double mean = 0.0, variance = 0.0;
    int32_t max_dx = 0, min_dx = 0;
    unsigned long blurred_total = 0;

    replicate.mode = MV_BORDER_REPLICATE;
    replicate.value = 0.0f;

    printf("libmvision %s (header %s)\n", mv_version(), MV_VERSION_STRING);
    if (strcmp(mv_version(), MV_VERSION_STRING) != 0) {
        fprintf(stderr, "header/library version mismatch\n");
        return 1;
    }
    printf("backends available: 0x%x\n", (unsigned)mv_backends_available());
    MV_TRY(mv_context_create(MV_BACKEND_CPU, &ctx));
    MV_TRY(mv_context_backends(ctx, &backends));
    printf("context backends:   0x%x\n", (unsigned)backends);

    /* A bright 16 x 16 square on a horizontal ramp. */
    for (y = 0; y < HEIGHT; y++) {
        for (x = 0; x < WIDTH; x++) {
            int inside = x >= 24 && x < 40 && y >= 16 && y < 32;
            pixels[y][x] = (uint8_t)(inside ? 220 : 2 * x);
        }
    }

    MV_TRY(mv_image_init(pixels, sizeof pixels, WIDTH, HEIGHT, 0, MV_PIXEL_U8, &src));
    MV_TRY(mv_image_init(blurred, sizeof blurred, WIDTH, HEIGHT, 0, MV_PIXEL_U8, &dst));
    MV_TRY(mv_image_init(dx, sizeof dx, WIDTH, HEIGHT, 0, MV_PIXEL_I16, &gx));
    MV_TRY(mv_image_init(dy, sizeof dy, WIDTH, HEIGHT, 0, MV_PIXEL_I16, &gy));
    MV_TRY(mv_image_init(sum, sizeof sum, WIDTH + 1, HEIGHT + 1, 0, MV_PIXEL_U32, &tsum));
    MV_TRY(mv_image_init(sqsum, sizeof sqsum, WIDTH + 1, HEIGHT + 1, 0, MV_PIXEL_U64, &tsq));

    /* 5 x 5 Gaussian, sigma derived from the size (ksize 5, sigma 0). */
    MV_TRY(mv_gaussian_blur(&src, &dst, 5, 0.0f, replicate));
    for (y = 0; y < HEIGHT; y++) {
        for (x = 0; x < WIDTH; x++) {
            blurred_total += blurred[y][x];
        }
    }
    printf("gaussian 5x5: blurred[16][24] = %u (was %u), blurred[24][32] = %u, mean = %.2f\n",
           (unsigned)blurred[16][24], (unsigned)pixels[16][24], (unsigned)blurred[24][32],
           (double)blurred_total / (WIDTH * HEIGHT));

    /* Sobel on the blurred image. */
    MV_TRY(mv_sobel(&dst, &gx, &gy, replicate));
    for (y = 0; y < HEIGHT; y++) {
        for (x = 0; x < WIDTH; x++) {
            if (dx[y][x] > max_dx) max_dx = dx[y][x];
            if (dx[y][x] < min_dx) min_dx = dx[y][x];
        }
    }
    printf("sobel: dx in [%d, %d]; ramp dx[4][4] = %d (4 x 2 x 2 = 16), dy[4][4] = %d\n",
           (int)min_dx, (int)max_dx, (int)dx[4][4], (int)dy[4][4]);

    /* Integral images and O(1) window statistics. */
    MV_TRY(mv_integral(&src, &tsum, &tsq));
    square.x = 24;
    square.y = 16;
    square.width = 16;
    square.height = 16;
    MV_TRY(mv_integral_window_sum(&tsum, square, &window_sum));
    MV_TRY(mv_integral_window_stats(&tsum, &tsq, square, &mean, &variance));
    printf("square window: sum = %u (16 x 16 x 220 = 56320), mean = %.2f, variance = %.2f\n",
           (unsigned)window_sum, mean, variance);
    window.x = 0;
    window.y = 0;
    window.width = 8;
    window.height = 4;
    MV_TRY(mv_integral_window_stats(&tsum, &tsq, window, &mean, &variance));
    printf("ramp window 8x4: mean = %.2f (7), variance = %.2f (21)\n", mean, variance);

    mv_context_destroy(ctx);
    if (window_sum != 16u * 16u * 220u || dx[4][4] != 16 || dy[4][4] != 0) {
        fprintf(stderr, "unexpected results\n");
        return 1;
    }
    printf("example_c: OK\n");
    return 0;

fail:
    mv_context_destroy(ctx);
    return 1;
}
