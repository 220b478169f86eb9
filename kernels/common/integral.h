/* Integral images (summed-area tables), as mvision_core::integral::integral_u8: for a w x h u8
 * image the tables are (w + 1) x (h + 1), row 0 and column 0 zero, entry (x, y) the sum of the
 * pixels above and left of it; a u32 table of pixels and, on request, a u64 table of squares.
 * All sums are exact (the host rejects images whose total could pass 2^32 - 1).
 *
 * Two passes: mv_integral_rows_u8 writes the prefix sum of every source row into the next table
 * row (one work-group per row, a work-group-wide scan per chunk of MV_LSIZE_X pixels, carried
 * from chunk to chunk); mv_integral_cols then accumulates each table column down the rows (one
 * work-item per column, coalesced across the group).
 *
 * Needs from the prelude MV_KERNEL, MV_GLOBAL, MV_LOCAL_ARRAY, MV_BARRIER, the MV_ indices and
 * the mv_ types; generated: MV_SCAN_MAX (the largest work-group the row pass may run with). */

/* One work-group of n = MV_LSIZE_X <= MV_SCAN_MAX work-items per source row; the row is
 * MV_GROUP_X (a 1-D range of n x height work-items), so CUDA's 2^31 - 1 grid x-limit applies,
 * not the 65535 y-limit. sqsum may be null when want_sq is 0. */
MV_KERNEL mv_integral_rows_u8(MV_GLOBAL const mv_u8* src, int src_stride, MV_GLOBAL mv_u32* sum,
                              int sum_stride, MV_GLOBAL mv_u64* sqsum, int sqsum_stride,
                              int width, int height, int want_sq)
{
    MV_LOCAL_ARRAY(mv_u32, scan, MV_SCAN_MAX);
    MV_LOCAL_ARRAY(mv_u64, scan_sq, MV_SCAN_MAX);
    int y = MV_GROUP_X;
    int lid = MV_LID_X;
    int n = MV_LSIZE_X;
    if (y >= height) {
        return; /* uniform across the group: no barrier is skipped by part of it */
    }
    MV_GLOBAL const mv_u8* in = src + y * src_stride;
    MV_GLOBAL mv_u32* out = sum + (y + 1) * sum_stride;
    int sq_row = (y + 1) * sqsum_stride; /* only dereferenced when want_sq */
    if (lid == 0) {
        out[0] = 0;
        if (want_sq) {
            sqsum[sq_row] = 0;
        }
    }
    mv_u32 carry = 0;
    mv_u64 carry_sq = 0;
    for (int base = 0; base < width; base += n) {
        int x = base + lid;
        mv_u32 p = x < width ? (mv_u32)in[x] : 0u;
        scan[lid] = p;
        scan_sq[lid] = (mv_u64)p * p;
        MV_BARRIER();
        /* Inclusive Hillis-Steele scan: log2(n) rounds, each reading before anyone writes. */
        for (int off = 1; off < n; off <<= 1) {
            mv_u32 a = lid >= off ? scan[lid - off] : 0u;
            mv_u64 b = lid >= off ? scan_sq[lid - off] : (mv_u64)0;
            MV_BARRIER();
            scan[lid] += a;
            scan_sq[lid] += b;
            MV_BARRIER();
        }
        if (x < width) {
            out[x + 1] = carry + scan[lid];
            if (want_sq) {
                sqsum[sq_row + x + 1] = carry_sq + scan_sq[lid];
            }
        }
        carry += scan[n - 1];
        carry_sq += scan_sq[n - 1];
        MV_BARRIER(); /* everyone has read scan[n - 1] before the next chunk overwrites it */
    }
}

/* One work-item per table column 0..=width: zero row 0, then running sums down rows 1..=height
 * of the row prefix sums written by mv_integral_rows_u8. */
MV_KERNEL mv_integral_cols(MV_GLOBAL mv_u32* sum, int sum_stride, MV_GLOBAL mv_u64* sqsum,
                           int sqsum_stride, int width, int height, int want_sq)
{
    int x = MV_GID_X;
    if (x > width) {
        return;
    }
    mv_u32 acc = 0;
    sum[x] = 0;
    for (int y = 1; y <= height; ++y) {
        acc += sum[y * sum_stride + x];
        sum[y * sum_stride + x] = acc;
    }
    if (want_sq) {
        mv_u64 acc_sq = 0;
        sqsum[x] = 0;
        for (int y = 1; y <= height; ++y) {
            acc_sq += sqsum[y * sqsum_stride + x];
            sqsum[y * sqsum_stride + x] = acc_sq;
        }
    }
}
