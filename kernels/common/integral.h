/* Integral images (summed-area tables), as mvision_core::integral::integral_u8: for a w x h u8
 * image the tables are (w + 1) x (h + 1), row 0 and column 0 zero, entry (x, y) the sum of the
 * pixels above and left of it; a u32 table of pixels and, on request, a u64 table of squares.
 * All sums are exact (the host rejects images whose total could pass 2^32 - 1).
 *
 * The host runs the tiled scan below (three launches, each with work for the whole device).
 * Devices that allow fewer than 32 work-items per group run two passes instead:
 * mv_integral_rows_u8 writes the prefix sum of every source row into the next table row (one
 * work-group per row, a work-group-wide scan per chunk of MV_LSIZE_X pixels, carried from chunk
 * to chunk); mv_integral_cols then accumulates each table column down the rows (one work-item
 * per column, coalesced across the group).
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

/* ---- Tiled scan: three launches, each with work for the whole device ----
 *
 * The table is cut into tiles of MV_ITILE_W (256) columns x MV_ITILE_H (default 64) rows of the
 * source; tile (tx, ty) starts at source pixel (x0, y0) = (tx * MV_ITILE_W, ty * MV_ITILE_H), and
 * ntx = ceil(w / MV_ITILE_W), nty = ceil(h / MV_ITILE_H). With C(x) = sum of the source column x
 * above row y0 and E(y) = I(x0, y + 1) (everything left of the tile in rows <= y), a table entry
 * of the tile is
 *     I(x + 1, y + 1) = E(y) + sum over x0 <= x' <= x of (C(x') + sum of column x' in rows y0..y).
 * 1. mv_integral_tile_sums_u8: each tile's column sums (nty x w), row sums (ntx x h) and total
 *    TT (nty x ntx).
 * 2. mv_integral_carries: C, the exclusive scan of the column sums over ty (in place), and E,
 *    for tx >= 1 the inclusive scan down the rows of the row sums left of x0: by default
 *    (MVISION_INTEGRAL_CARRIES=tiled) one group per tile, from the corner (the totals of the
 *    tiles above-left) plus a scan of its own MV_ITILE_H rows (MV_INTEGRAL_TILED_LEFT).
 * 3. mv_integral_tiles_u8: each tile rescans its pixels from C and E and writes its part of
 *    the table once (plus row 0 / column 0 where it borders them).
 * The source is read twice (the second time mostly from cache), the table written once; the
 * scratch holds nty x w + 2 x ntx x h + ntx x nty elements (u32, and u64 for the squares:
 * scratch32, scratch64), laid out as [column sums / C: nty x w][row sums: ntx x h][E: ntx x h]
 * [TT: nty x ntx, tile (tx, ty) at ty * ntx + tx].
 *
 * Work-groups of n = MV_LSIZE_X work-items, n in {32, 64, 128, 256}: 32 lanes of 8 adjacent
 * pixels per row (MV_ITILE_W = 32 x 8 columns), n / 32 rows at a time ("a band"); the range is
 * 1-D. All sums wrap modulo 2^32 / 2^64, which is exact as the true table values fit. */

#define MV_ILANES 32
/* The 32 lanes of a tile row are one warp (work-items ly * 32 .. ly * 32 + 31): with
 * MV_ISHFL_WANT (generated from MVISION_INTEGRAL_VARIANT) and a prelude that has shuffles,
 * they combine their sums by shuffles instead of local memory and barriers. */
#if MV_ISHFL_WANT && MV_HAS_SHFL
#define MV_ISHFL 1
#else
#define MV_ISHFL 0
#endif
#define MV_IPX 8
/* Local rows are padded by one word per 8 so that lanes 8 words apart hit distinct banks. */
#define MV_IPITCH (MV_ITILE_W + MV_ITILE_W / 8)
#define MV_IPAD(c) ((c) + ((c) >> 3))
#define MV_IBAND_MAX (MV_IGROUP_MAX / MV_ILANES)
#define MV_IMIN(a, b) ((a) < (b) ? (a) : (b))
#define MV_IMAX(a, b) ((a) > (b) ? (a) : (b))

/* The 8 pixels of row y at columns x..x+7 (0 outside the image or when !inside), as u32. */
MV_INLINE void mv_integral_load8(MV_GLOBAL const mv_u8* src, int src_stride, int width, int y,
                                 int x, int inside, mv_u32* p)
{
    MV_GLOBAL const mv_u8* row = src + y * src_stride;
    if (inside && x + MV_IPX <= width && ((mv_u64)(row + x) & 7) == 0) {
        mv_u32x2 v = *((MV_GLOBAL const mv_u32x2*)(row + x));
        p[0] = MV_BYTE(v.x, 0);
        p[1] = MV_BYTE(v.x, 1);
        p[2] = MV_BYTE(v.x, 2);
        p[3] = MV_BYTE(v.x, 3);
        p[4] = MV_BYTE(v.y, 0);
        p[5] = MV_BYTE(v.y, 1);
        p[6] = MV_BYTE(v.y, 2);
        p[7] = MV_BYTE(v.y, 3);
    } else {
        MV_UNROLL
        for (int k = 0; k < MV_IPX; ++k) {
            p[k] = inside && x + k < width ? (mv_u32)row[x + k] : 0u;
        }
    }
}

/* Pass 1: one work-group per tile (group g: tx = g % ntx, ty = g / ntx). Writes the tile's
 * column sums to scratch[ty * width + x], its row sums to scratch[nty * width + tx * height
 * + y] and its total to scratch[nty * width + 2 * ntx * height + g] (and the sums of squares
 * at the same places of scratch64 when want_sq). */
MV_KERNEL mv_integral_tile_sums_u8(MV_GLOBAL const mv_u8* src, int src_stride,
                                   MV_GLOBAL mv_u32* scratch, MV_GLOBAL mv_u64* scratch64,
                                   int width, int height, int want_sq)
{
#if !MV_ISHFL
    MV_LOCAL_ARRAY(mv_u32, red, MV_IGROUP_MAX);
    MV_LOCAL_ARRAY(mv_u64, red64, MV_IGROUP_MAX);
#endif
    MV_LOCAL_ARRAY(mv_u64, cols64, MV_IBAND_MAX * MV_IPITCH);
    MV_LOCAL_ARRAY(mv_u32, ttl, MV_IBAND_MAX);
    MV_LOCAL_ARRAY(mv_u64, ttl64, MV_IBAND_MAX);
    MV_LOCAL mv_u32* cols = (MV_LOCAL mv_u32*)cols64;
    int ntx = (width + MV_ITILE_W - 1) / MV_ITILE_W;
    int nty = (height + MV_ITILE_H - 1) / MV_ITILE_H;
    int g = MV_GROUP_X;
    if (g >= ntx * nty) {
        return; /* uniform across the group */
    }
    int lid = MV_LID_X;
    int n = MV_LSIZE_X;
    int band = n / MV_ILANES;
    int lx = lid % MV_ILANES;
    int ly = lid / MV_ILANES;
    int tx = g % ntx;
    int ty = g / ntx;
    int x0 = tx * MV_ITILE_W;
    int y0 = ty * MV_ITILE_H;
    int y_end = MV_IMIN(y0 + MV_ITILE_H, height);
    int x = x0 + lx * MV_IPX;
    MV_GLOBAL mv_u32* rows = scratch + nty * width + tx * height;
    MV_GLOBAL mv_u64* rows64 = scratch64 + nty * width + tx * height;
    mv_u32 cs[MV_IPX];
    mv_u64 cq[MV_IPX];
    mv_u32 tt = 0; /* the band row's total over the tile's rows (in lane 31, or 0 without */
    mv_u64 ttq = 0; /* shuffles); rows past the image add 0 */
    MV_UNROLL
    for (int k = 0; k < MV_IPX; ++k) {
        cs[k] = 0;
        cq[k] = 0;
    }
    /* Each band's pixels are loaded one band ahead, so the load overlaps the reduction. */
    mv_u32 p[MV_IPX];
    mv_integral_load8(src, src_stride, width, y0 + ly, x, y0 + ly < y_end, p);
    for (int yb = y0; yb < y_end; yb += band) {
        int y = yb + ly;
        mv_u32 rs = 0;
        mv_u64 rq = 0;
        MV_UNROLL
        for (int k = 0; k < MV_IPX; ++k) {
            mv_u32 q = p[k] * p[k];
            cs[k] += p[k];
            cq[k] += q;
            rs += p[k];
            rq += q;
        }
        mv_integral_load8(src, src_stride, width, y + band, x, y + band < y_end, p);
#if MV_ISHFL
        /* Inclusive scan over the warp: lane 31 ends with the row's sum. */
        MV_UNROLL
        for (int off = 1; off < MV_ILANES; off <<= 1) {
            mv_u32 a = MV_SHFL_UP_mv_u32(rs, off);
            rs += lx >= off ? a : 0u;
        }
        if (want_sq) {
            MV_UNROLL
            for (int off = 1; off < MV_ILANES; off <<= 1) {
                mv_u64 b = MV_SHFL_UP_mv_u64(rq, off);
                rq += lx >= off ? b : (mv_u64)0;
            }
        }
        tt += rs;
        ttq += rq;
        if (lx == MV_ILANES - 1 && y < y_end) {
            rows[y] = rs;
            if (want_sq) {
                rows64[y] = rq;
            }
        }
#else
        red[lid] = rs;
        red64[lid] = rq;
        MV_BARRIER();
        for (int off = MV_ILANES / 2; off > 0; off >>= 1) {
            if (lx < off) {
                red[lid] += red[lid + off];
                if (want_sq) {
                    red64[lid] += red64[lid + off];
                }
            }
            MV_BARRIER();
        }
        tt += red[lid];
        ttq += red64[lid];
        if (lx == 0 && y < y_end) {
            rows[y] = red[lid];
            if (want_sq) {
                rows64[y] = red64[lid];
            }
        }
        MV_BARRIER(); /* red is rewritten by the next band */
#endif
    }
    /* The band's row-lanes hold partial column sums: add them up, u32 then u64 in one array. */
    MV_UNROLL
    for (int k = 0; k < MV_IPX; ++k) {
        cols[ly * MV_IPITCH + MV_IPAD(lx * MV_IPX + k)] = cs[k];
    }
    if (lx == (MV_ISHFL ? MV_ILANES - 1 : 0)) {
        ttl[ly] = tt;
        ttl64[ly] = ttq;
    }
    MV_BARRIER();
    if (lid == 0) { /* the tile's total, TT[ty][tx] */
        mv_u32 s = 0;
        mv_u64 q = 0;
        for (int r = 0; r < band; ++r) {
            s += ttl[r];
            q += ttl64[r];
        }
        int at = nty * width + 2 * ntx * height + g;
        scratch[at] = s;
        if (want_sq) {
            scratch64[at] = q;
        }
    }
    for (int c = lid; c < MV_ITILE_W; c += n) {
        mv_u32 s = 0;
        for (int r = 0; r < band; ++r) {
            s += cols[r * MV_IPITCH + MV_IPAD(c)];
        }
        if (x0 + c < width) {
            scratch[ty * width + x0 + c] = s;
        }
    }
    if (want_sq) {
        MV_BARRIER();
        MV_UNROLL
        for (int k = 0; k < MV_IPX; ++k) {
            cols64[ly * MV_IPITCH + MV_IPAD(lx * MV_IPX + k)] = cq[k];
        }
        MV_BARRIER();
        for (int c = lid; c < MV_ITILE_W; c += n) {
            mv_u64 q = 0;
            for (int r = 0; r < band; ++r) {
                q += cols64[r * MV_IPITCH + MV_IPAD(c)];
            }
            if (x0 + c < width) {
                scratch64[ty * width + x0 + c] = q;
            }
        }
    }
}

/* Values per work-item and round of the parallel pass 2, and tile columns summed per batch of
 * loads of its row groups. */
#define MV_ICK 8
#define MV_ICU 4

/* Pass 2, row groups: v[k] += the row sums of tiles 0 .. tx - 1 at row i0 + k (< height), MV_ICU
 * tile columns per batch, all of a batch's loads issued before their adds. */
#define MV_ICARRY_ROWS(T, rows, v, i0, tx, height)                                            \
    do {                                                                                      \
        for (int u_ = 0; u_ < (tx); u_ += MV_ICU) {                                           \
            T a_[MV_ICU][MV_ICK];                                                             \
            MV_UNROLL                                                                         \
            for (int j_ = 0; j_ < MV_ICU; ++j_) {                                             \
                MV_UNROLL                                                                     \
                for (int k_ = 0; k_ < MV_ICK; ++k_) {                                         \
                    int y_ = (i0) + k_;                                                       \
                    a_[j_][k_] = u_ + j_ < (tx) && y_ < (height)                              \
                                     ? (rows)[(u_ + j_) * (height) + y_]                      \
                                     : (T)0;                                                  \
                }                                                                             \
            }                                                                                 \
            MV_UNROLL                                                                         \
            for (int j_ = 0; j_ < MV_ICU; ++j_) {                                             \
                MV_UNROLL                                                                     \
                for (int k_ = 0; k_ < MV_ICK; ++k_) {                                         \
                    (v)[k_] += a_[j_][k_];                                                    \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
    } while (0)

/* Pass 2, MVISION_INTEGRAL_CARRIES=tiled, row group gr (on: 0 in the column groups, which run
 * it without loads or stores for the shared barrier sequence): tile (tx, ty) = (1 + gr % (ntx - 1),
 * gr / (ntx - 1)). E(y) for the tile's rows y0 <= y < y0 + MV_ITILE_H is
 *     corner + sum over y0 <= y' <= y of (sum over u < tx of rowsum[u][y']),
 * corner = sum over u < tx, t < ty of TT[t][u] (the tile totals of pass 1). The work-items sum
 * the corner's values strided by n (tot) and, split into parts = n / MV_IMIN(n, H) per row, the row
 * sums left of the tile (part[p * H + r], one batch of MV_ICU loads at a time); after a barrier
 * the row's parts are added (hv), and one loop of Hillis-Steele rounds scans hv over the rows
 * and tot over the group (its last entry is the corner), ping-ponging between the two parts of hv
 * and between tot and part: one barrier a round. Uses the kernel's locals. */
#define MV_INTEGRAL_TILED_LEFT(gr, on)                                                        \
    do {                                                                                      \
        int nrg_ = MV_IMAX(ntx - 1, 1);                                                       \
        int tx_ = 1 + (gr) % nrg_;                                                            \
        int ty_ = (gr) / nrg_;                                                                \
        int y0_ = ty_ * MV_ITILE_H;                                                           \
        int tt_at_ = base + 2 * ntx * height;                                                 \
        MV_GLOBAL mv_u32* e_ = scratch + base + ntx * height + tx_ * height;                  \
        MV_GLOBAL mv_u64* e64_ = scratch64 + base + ntx * height + tx_ * height;              \
        mv_u32 c_ = 0;                                                                        \
        mv_u64 c64_ = 0;                                                                      \
        for (int j_ = lid; (on) && j_ < tx_ * ty_; j_ += n) {                                 \
            int at_ = tt_at_ + (j_ / tx_) * ntx + j_ % tx_;                                   \
            c_ += scratch[at_];                                                               \
            if (want_sq) {                                                                    \
                c64_ += scratch64[at_];                                                       \
            }                                                                                 \
        }                                                                                     \
        tot[lid] = c_;                                                                        \
        tot64[lid] = c64_;                                                                    \
        int hn_ = MV_IMIN(n, MV_ITILE_H);                                                     \
        int parts_ = n / hn_;                                                                 \
        int p_ = lid / hn_;                                                                   \
        for (int r_ = lid % hn_; r_ < MV_ITILE_H; r_ += hn_) {                                \
            int y_ = y0_ + r_;                                                                \
            mv_u32 h_ = 0;                                                                    \
            mv_u64 h64_ = 0;                                                                  \
            if ((on) && y_ < height) {                                                        \
                for (int u_ = p_; u_ < tx_; u_ += parts_ * MV_ICU) {                          \
                    mv_u32 a_[MV_ICU];                                                        \
                    mv_u64 a64_[MV_ICU];                                                      \
                    MV_UNROLL                                                                 \
                    for (int k_ = 0; k_ < MV_ICU; ++k_) {                                     \
                        int uu_ = u_ + k_ * parts_;                                           \
                        a_[k_] = uu_ < tx_ ? rows[uu_ * height + y_] : 0u;                    \
                        a64_[k_] = want_sq && uu_ < tx_ ? rows64[uu_ * height + y_]           \
                                                        : (mv_u64)0;                          \
                    }                                                                         \
                    MV_UNROLL                                                                 \
                    for (int k_ = 0; k_ < MV_ICU; ++k_) {                                     \
                        h_ += a_[k_];                                                         \
                        h64_ += a64_[k_];                                                     \
                    }                                                                         \
                }                                                                             \
            }                                                                                 \
            part[p_ * MV_ITILE_H + r_] = h_;                                                  \
            part64[p_ * MV_ITILE_H + r_] = h64_;                                              \
        }                                                                                     \
        MV_BARRIER();                                                                         \
        for (int r_ = lid; r_ < MV_ITILE_H; r_ += n) {                                        \
            mv_u32 h_ = 0;                                                                    \
            mv_u64 h64_ = 0;                                                                  \
            for (int q_ = 0; q_ < parts_; ++q_) {                                             \
                h_ += part[q_ * MV_ITILE_H + r_];                                             \
                h64_ += part64[q_ * MV_ITILE_H + r_];                                         \
            }                                                                                 \
            hv[r_] = h_;                                                                      \
            hv64[r_] = h64_;                                                                  \
        }                                                                                     \
        MV_BARRIER();                                                                         \
        int lim_ = MV_ITILE_H > n ? MV_ITILE_H : n;                                           \
        int cur_ = 0; /* ping-pong: round reads part cur_ of hv, writes the other */          \
        for (int off_ = 1; off_ < lim_; off_ <<= 1) {                                         \
            int nxt_ = cur_ ^ 1;                                                              \
            MV_LOCAL mv_u32* ts_ = cur_ ? part : tot;                                         \
            MV_LOCAL mv_u32* td_ = cur_ ? tot : part;                                         \
            MV_LOCAL mv_u64* ts64_ = cur_ ? part64 : tot64;                                   \
            MV_LOCAL mv_u64* td64_ = cur_ ? tot64 : part64;                                   \
            td_[lid] = ts_[lid] + (lid >= off_ ? ts_[lid - off_] : 0u);                       \
            td64_[lid] = ts64_[lid] + (lid >= off_ ? ts64_[lid - off_] : (mv_u64)0);          \
            for (int r_ = lid; r_ < MV_ITILE_H; r_ += n) {                                    \
                int s_ = cur_ * MV_ITILE_H + r_;                                              \
                int d_ = nxt_ * MV_ITILE_H + r_;                                              \
                hv[d_] = hv[s_] + (r_ >= off_ ? hv[s_ - off_] : 0u);                          \
                hv64[d_] = hv64[s_] + (r_ >= off_ ? hv64[s_ - off_] : (mv_u64)0);             \
            }                                                                                 \
            MV_BARRIER();                                                                     \
            cur_ = nxt_;                                                                      \
        }                                                                                     \
        mv_u32 corner_ = cur_ ? part[n - 1] : tot[n - 1];                                     \
        mv_u64 corner64_ = cur_ ? part64[n - 1] : tot64[n - 1];                               \
        for (int r_ = lid; r_ < MV_ITILE_H; r_ += n) {                                        \
            int y_ = y0_ + r_;                                                                \
            if ((on) && y_ < height) {                                                        \
                e_[y_] = corner_ + hv[cur_ * MV_ITILE_H + r_];                                \
                if (want_sq) {                                                                \
                    e64_[y_] = corner64_ + hv64[cur_ * MV_ITILE_H + r_];                      \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
    } while (0)

/* Pass 2: groups 0 .. ceil(w / 32) - 1 ("column groups") scan the column sums of 32 adjacent
 * columns (coalesced) over ty, n / 32 lanes per column; groups after them ("row groups") compute
 * E: MV_ICARRY_TILED (MVISION_INTEGRAL_CARRIES=tiled, the default) one per tile (tx >= 1, ty),
 * MV_INTEGRAL_TILED_LEFT, the column groups as with par; else one per tx in 1 .. ntx - 1 for
 * tile column tx, n work-items of consecutive rows.
 * Both kinds share one barrier sequence (a group-uniform count, no return): PoCL mishandles a
 * return after a barrier in one branch.
 * MV_ICARRY_PAR (MVISION_INTEGRAL_CARRIES=par): every value is loaded once into
 * registers, a batch of loads before their adds. A column group's round covers n / 32 * MV_ICK
 * tiles, lane ly holding tiles ly * MV_ICK .. + MV_ICK - 1 of it; a row group's round covers
 * n * MV_ICK rows, work-item lid holding rows lid * MV_ICK .. + MV_ICK - 1 of it, each the sum
 * of the tx row sums left of the tile column (MV_ICARRY_ROWS). Each work-item sums its values,
 * the group scans the totals in local memory (over the lanes of a column, or over the group)
 * and the work-item writes its exclusive (C) or inclusive (E) scan from that offset plus the
 * carry of the previous rounds: at 3840 x 2160 with 256 x 64 tiles, one round in the column
 * groups, two in the row groups. */
MV_KERNEL mv_integral_carries(MV_GLOBAL mv_u32* scratch, MV_GLOBAL mv_u64* scratch64, int width,
                              int height, int want_sq)
{
    MV_LOCAL_ARRAY(mv_u32, tot, MV_IGROUP_MAX);
    MV_LOCAL_ARRAY(mv_u64, tot64, MV_IGROUP_MAX);
#if MV_ICARRY_TILED
    MV_LOCAL_ARRAY(mv_u32, part, MV_IGROUP_MAX);
    MV_LOCAL_ARRAY(mv_u64, part64, MV_IGROUP_MAX);
    MV_LOCAL_ARRAY(mv_u32, hv, 2 * MV_ITILE_H);
    MV_LOCAL_ARRAY(mv_u64, hv64, 2 * MV_ITILE_H);
#endif
    int ntx = (width + MV_ITILE_W - 1) / MV_ITILE_W;
    int nty = (height + MV_ITILE_H - 1) / MV_ITILE_H;
    int ncol_groups = (width + MV_ILANES - 1) / MV_ILANES;
    int g = MV_GROUP_X;
    int lid = MV_LID_X;
    int n = MV_LSIZE_X;
    int col_group = g < ncol_groups;
    int lanes = n / MV_ILANES;
    int lx = lid % MV_ILANES;
    int ly = lid / MV_ILANES;
    int x = g * MV_ILANES + lx;
    int col_ok = col_group && x < width;
    int tx = col_group ? 0 : g - ncol_groups + 1;
    int base = nty * width;
    MV_GLOBAL const mv_u32* rows = scratch + base;
    MV_GLOBAL const mv_u64* rows64 = scratch64 + base;
    MV_GLOBAL mv_u32* e = scratch + base + ntx * height + tx * height;
    MV_GLOBAL mv_u64* e64 = scratch64 + base + ntx * height + tx * height;
    int per_round = col_group ? lanes * MV_ICK : n * MV_ICK;
    int len = col_group ? nty : height;
    int rounds = (len + per_round - 1) / per_round;
    int first = (col_group ? ly : lid) * MV_ICK;
    int last = col_group ? (lanes - 1) * MV_ILANES + lx : n - 1;
#if MV_ICARRY_TILED
    /* Row groups run the tiled pass instead of the rounds below. Every group runs both (the
     * column groups with on = 0: no loads, no stores; the row groups with 0 rounds), so all
     * share one barrier sequence: PoCL (pthread, groups of 256) gave wrong left carries with
     * the tiled pass behind a group-uniform branch or a loop of 0 / 1 iterations. */
    MV_INTEGRAL_TILED_LEFT(col_group ? 0 : g - ncol_groups, !col_group);
    rounds = col_group ? rounds : 0;
#endif
    mv_u32 carry = 0;
    mv_u64 carry64 = 0;
    for (int r = 0; r < rounds; ++r) {
        int i0 = r * per_round + first;
        mv_u32 v[MV_ICK];
        mv_u64 v64[MV_ICK];
        if (col_group) {
            MV_UNROLL
            for (int k = 0; k < MV_ICK; ++k) {
                int t = i0 + k;
                v[k] = col_ok && t < nty ? scratch[t * width + x] : 0u;
                v64[k] = want_sq && col_ok && t < nty ? scratch64[t * width + x] : (mv_u64)0;
            }
        } else {
            MV_UNROLL
            for (int k = 0; k < MV_ICK; ++k) {
                v[k] = 0;
                v64[k] = 0;
            }
            MV_ICARRY_ROWS(mv_u32, rows, v, i0, tx, height);
            if (want_sq) {
                MV_ICARRY_ROWS(mv_u64, rows64, v64, i0, tx, height);
            }
        }
        mv_u32 s = 0;
        mv_u64 q = 0;
        MV_UNROLL
        for (int k = 0; k < MV_ICK; ++k) {
            s += v[k];
            q += v64[k];
        }
        tot[lid] = s;
        tot64[lid] = q;
        MV_BARRIER();
        /* Inclusive Hillis-Steele scan of the totals: over the lanes of each column (steps of
         * 32) or over the whole group. */
        for (int off = col_group ? MV_ILANES : 1; off < n; off <<= 1) {
            mv_u32 a = lid >= off ? tot[lid - off] : 0u;
            mv_u64 a64 = lid >= off ? tot64[lid - off] : (mv_u64)0;
            MV_BARRIER();
            tot[lid] += a;
            tot64[lid] += a64;
            MV_BARRIER();
        }
        mv_u32 acc = carry + tot[lid] - s;
        mv_u64 acc64 = carry64 + tot64[lid] - q;
        carry += tot[last];
        carry64 += tot64[last];
        if (col_group) {
            MV_UNROLL
            for (int k = 0; k < MV_ICK; ++k) {
                int t = i0 + k;
                if (col_ok && t < nty) {
                    scratch[t * width + x] = acc;
                    if (want_sq) {
                        scratch64[t * width + x] = acc64;
                    }
                }
                acc += v[k];
                acc64 += v64[k];
            }
        } else {
            MV_UNROLL
            for (int k = 0; k < MV_ICK; ++k) {
                int y = i0 + k;
                acc += v[k];
                acc64 += v64[k];
                if (y < height) {
                    e[y] = acc;
                    if (want_sq) {
                        e64[y] = acc64;
                    }
                }
            }
        }
        MV_BARRIER(); /* everyone has read tot before the next round overwrites it */
    }
}

/* Pass 3: `out` = the sum of `run` over the lanes left of the calling one in its tile row (T of
 * the table); `tot` is the kernel's local array of n T (unused with shuffles). */
#if MV_ISHFL
#define MV_ILANE_EXCL(T, run, out, tot)                                                       \
    do {                                                                                      \
        T s_ = (run);                                                                         \
        MV_UNROLL                                                                             \
        for (int o_ = 1; o_ < MV_ILANES; o_ <<= 1) {                                          \
            T a_ = MV_SHFL_UP_##T(s_, o_);                                                    \
            s_ += lx >= o_ ? a_ : (T)0;                                                       \
        }                                                                                     \
        (out) = s_ - (run);                                                                   \
    } while (0)
#else
#define MV_ILANE_EXCL(T, run, out, tot)                                                       \
    do {                                                                                      \
        (tot)[lid] = (run);                                                                   \
        MV_BARRIER();                                                                         \
        for (int o_ = 1; o_ < MV_ILANES; o_ <<= 1) {                                          \
            T a_ = lx >= o_ ? (tot)[lid - o_] : (T)0;                                         \
            MV_BARRIER();                                                                     \
            (tot)[lid] += a_;                                                                 \
            MV_BARRIER();                                                                     \
        }                                                                                     \
        (out) = (tot)[lid] - (run);                                                           \
    } while (0)
#endif

/* Pass 3 for one table (T = mv_u32 for the sums of pixels, mv_u64 with SQ = 1 for the sums of
 * squares), run by the whole work-group of a pass-3 kernel over its tile: `band`, `carry`, `tot`
 * and `lefts` are that kernel's local arrays of T; COLV(x) gives C at image column x (the
 * carry from above), LEFTV(i) E at the tile's row i (the carry from the left, corner included;
 * both function-like macros). C is added to the tile's first
 * row, so the column walks carry it down. Per band of n / 32 rows: each work-item scans its 8
 * pixels of one row in registers, the 32 lanes of the row scan their totals in local memory,
 * the band's in-tile row prefixes go to local rows, and one work-item per column runs down them
 * from its carry, adds E and stores the table row by row (adjacent work-items on adjacent
 * columns). */
#define MV_INTEGRAL_TILE_PASS(T, SQ, table, stride, COLV, LEFTV, band, carry, tot, lefts)     \
    do {                                                                                      \
        for (int c_ = lid; c_ < MV_ITILE_W; c_ += n) {                                        \
            (carry)[c_] = 0;                                                                  \
        }                                                                                     \
        for (int i_ = lid; i_ < MV_ITILE_H; i_ += n) {                                        \
            (lefts)[i_] = LEFTV(i_);                                                          \
        }                                                                                     \
        /* Each band's pixels are loaded one band ahead, so the load overlaps the scans. */    \
        mv_u32 p_[MV_IPX];                                                                    \
        mv_integral_load8(src, src_stride, width, y0 + ly, x, y0 + ly < y_end, p_);           \
        for (int yb_ = y0; yb_ < y_end; yb_ += rows) {                                        \
            /* C joins the tile's first row: the column walks carry it down every row. */    \
            int top_ = yb_ == y0 && ly == 0;                                                  \
            T v_[MV_IPX];                                                                     \
            T run_ = 0;                                                                       \
            MV_UNROLL                                                                         \
            for (int k_ = 0; k_ < MV_IPX; ++k_) {                                             \
                run_ += (T)(SQ ? p_[k_] * p_[k_] : p_[k_]);                                   \
                if (top_ && x + k_ < width) {                                                 \
                    run_ += COLV(x + k_);                                                     \
                }                                                                             \
                v_[k_] = run_;                                                                \
            }                                                                                 \
            int yn_ = yb_ + rows + ly;                                                        \
            mv_integral_load8(src, src_stride, width, yn_, x, yn_ < y_end, p_);               \
            T l_;                                                                             \
            MV_ILANE_EXCL(T, run_, l_, tot);                                                  \
            MV_UNROLL                                                                         \
            for (int k_ = 0; k_ < MV_IPX; ++k_) {                                             \
                (band)[ly * MV_IPITCH + MV_IPAD(lx * MV_IPX + k_)] = l_ + v_[k_];             \
            }                                                                                 \
            MV_BARRIER();                                                                     \
            for (int c_ = lid; c_ < MV_ITILE_W && x0 + c_ < width; c_ += n) {                 \
                T a_ = (carry)[c_];                                                           \
                for (int r_ = 0; r_ < rows && yb_ + r_ < y_end; ++r_) {                       \
                    a_ += (band)[r_ * MV_IPITCH + MV_IPAD(c_)];                               \
                    (table)[(yb_ + r_ + 1) * (stride) + x0 + c_ + 1] =                        \
                        a_ + (lefts)[yb_ + r_ - y0];                                          \
                }                                                                             \
                (carry)[c_] = a_;                                                             \
            }                                                                                 \
            if (tx == 0 && lid < rows && yb_ + lid < y_end) {                                 \
                (table)[(yb_ + lid + 1) * (stride)] = 0;                                      \
            }                                                                                 \
            MV_BARRIER(); /* the next band rewrites band and tot */                           \
        }                                                                                     \
        if (ty == 0) { /* row 0 of the table above the tile, and its corner (0, 0) */         \
            for (int c_ = lid; c_ < MV_ITILE_W && x0 + c_ < width; c_ += n) {                 \
                (table)[x0 + c_ + 1] = 0;                                                     \
            }                                                                                 \
            if (tx == 0 && lid == 0) {                                                        \
                (table)[0] = 0;                                                               \
            }                                                                                 \
        }                                                                                     \
    } while (0)

/* Pass 3's carries read from the scratch (colp: C of the tile's row of tiles, leftp: E of its
 * column of tiles, unused for tx = 0). */
#define MV_ICOL_SCRATCH(xi) colp[xi]
#define MV_ILEFT_SCRATCH(i) (tx > 0 && y0 + (i) < y_end ? leftp[y0 + (i)] : 0)

/* The work-group's tile, as pass 1 (group g: tx = g % ntx, ty = g / ntx); uniform exit for the
 * groups past the last tile. */
#define MV_INTEGRAL_TILE_SETUP()                                                              \
    int ntx = (width + MV_ITILE_W - 1) / MV_ITILE_W;                                          \
    int nty = (height + MV_ITILE_H - 1) / MV_ITILE_H;                                         \
    int g = MV_GROUP_X;                                                                       \
    if (g >= ntx * nty) {                                                                     \
        return;                                                                               \
    }                                                                                         \
    int lid = MV_LID_X;                                                                       \
    int n = MV_LSIZE_X;                                                                       \
    int rows = n / MV_ILANES;                                                                 \
    int lx = lid % MV_ILANES;                                                                 \
    int ly = lid / MV_ILANES;                                                                 \
    int tx = g % ntx;                                                                         \
    int ty = g / ntx;                                                                         \
    int x0 = tx * MV_ITILE_W;                                                                 \
    int y0 = ty * MV_ITILE_H;                                                                 \
    int y_end = MV_IMIN(y0 + MV_ITILE_H, height);                                             \
    int x = x0 + lx * MV_IPX;                                                                 \
    int e_at = nty * width + ntx * height + tx * height

/* Pass 3, the table of pixels: one work-group per tile. Separate from the squares so that
 * the common case keeps few registers and local memory (more groups per multiprocessor). */
MV_KERNEL mv_integral_tiles_u8(MV_GLOBAL const mv_u8* src, int src_stride, MV_GLOBAL mv_u32* sum,
                               int sum_stride, MV_GLOBAL const mv_u32* scratch, int width,
                               int height)
{
    MV_LOCAL_ARRAY(mv_u32, band, MV_IBAND_MAX * MV_IPITCH);
    MV_LOCAL_ARRAY(mv_u32, tot, MV_ISHFL ? 1 : MV_IGROUP_MAX);
    MV_LOCAL_ARRAY(mv_u32, carry, MV_ITILE_W);
    MV_LOCAL_ARRAY(mv_u32, lefts, MV_ITILE_H);
    MV_INTEGRAL_TILE_SETUP();
    MV_GLOBAL const mv_u32* colp = scratch + ty * width;
    MV_GLOBAL const mv_u32* leftp = scratch + e_at;
    MV_INTEGRAL_TILE_PASS(mv_u32, 0, sum, sum_stride, MV_ICOL_SCRATCH, MV_ILEFT_SCRATCH, band,
                          carry, tot, lefts);
}

/* Pass 3, the table of squares (launched only with it). Capped at 64 registers on CUDA (80
 * uncapped: 3 groups of 256 an SM instead of 4), as NVIDIA's OpenCL caps every program. */
MV_KERNEL_LEAN mv_integral_tiles_sq_u8(MV_GLOBAL const mv_u8* src, int src_stride,
                                       MV_GLOBAL mv_u64* sqsum, int sqsum_stride,
                                       MV_GLOBAL const mv_u64* scratch64, int width, int height)
{
    MV_LOCAL_ARRAY(mv_u64, band, MV_IBAND_MAX * MV_IPITCH);
    MV_LOCAL_ARRAY(mv_u64, tot, MV_ISHFL ? 1 : MV_IGROUP_MAX);
    MV_LOCAL_ARRAY(mv_u64, carry, MV_ITILE_W);
    MV_LOCAL_ARRAY(mv_u64, lefts, MV_ITILE_H);
    MV_INTEGRAL_TILE_SETUP();
    MV_GLOBAL const mv_u64* colp = scratch64 + ty * width;
    MV_GLOBAL const mv_u64* leftp = scratch64 + e_at;
    MV_INTEGRAL_TILE_PASS(mv_u64, 1, sqsum, sqsum_stride, MV_ICOL_SCRATCH, MV_ILEFT_SCRATCH, band,
                          carry, tot, lefts);
}

/* ---- Look-back scan: one launch per table ----
 *
 * mv_integral_lookback_u8 (the table of pixels) and mv_integral_lookback_sq_u8 (squares): work-
 * groups of exactly MV_LB_N (128) work-items, one per tile of MV_LB_W (128) x MV_LB_H (64)
 * source pixels: MV_LB_WARPS rows of 32 lanes, row of lanes w holding rows w * MV_LB_WROWS ..
 * + MV_LB_WROWS - 1 of the tile in registers, lane l columns x0 + 4l .. x0 + 4l + 3 of them;
 * for the sums, work-item c owns column x0 + c and work-item r < H row y0 + r. Tiles are taken
 * in row-major order from a
 * counter (ctl[0]), so every tile above or left of a work-group's tile belongs to a work-group
 * that started earlier. The table entry at (x0 + c + 1, y0 + r + 1) of tile (tx, ty) is
 *     corner + sum_{c' <= c} above[c'] + sum_{r' <= r} left[r'] + (the tile's own sum),
 * above[c'] = the pixels of column x0 + c' above y0, left[r'] = those of row y0 + r' left of x0,
 * corner = everything above-left. Each work-group
 *  A. loads its tile, sums its columns and rows and publishes them (col_agg, row_agg;
 *     flag_row = 1);
 *  B. looks back along its row of tiles (MV_LB_WALK: the flags of up to 32 earlier tiles read
 *     at once, one per work-item) and adds the row sums of every tile up to the nearest one whose
 *     inclusive row sums are published (flag_row = 2: row_inc, the sums of the whole row left of
 *     that tile's right edge), or of all of them; publishes its own (flag_row = 2) and the total
 *     of its left[] (left_tot; flag_col = 1);
 *  C. looks back up its column of tiles the same way for above[] (col_agg / col_inc) and the
 *     corner (left_tot / corner_inc), publishing col_inc and corner_inc (flag_col = 2);
 *  D. writes its part of the table: each row of lanes starts from the column sums above its
 *     rows (above[] plus the column sums of the rows of lanes before it), keeps running column
 *     sums in registers, adds each row's prefix across the lanes and stages the row in local
 *     memory so that the stores are coalesced.
 * That is the walk, in mv_integral_lookback_walk_u8 / _walk_sq_u8. In mv_integral_lookback_u8 /
 * _sq_u8, B and C are replaced by the direct sums (MV_LB_DIRECT_SUMS below): phase A also
 * publishes the tile's total and counts the tile in flag_col[ty] (the finished tiles of its row
 * of tiles: flag_col is unused otherwise), and nothing else is published. Each way is its own
 * kernel, so neither holds the other's code (registers); the host picks one per image size.
 * A work-group only waits on tiles of smaller index, whose work-groups are running or done, so
 * the waits end. Flags are stored after MV_FENCE_GLOBAL and read (like the data they guard)
 * with MV_VLOAD. The last work-group to finish (ctl[1] counts them) zeroes the control words,
 * so each launch starts from zeros (the host zeroes the control buffer when it allocates it).
 * ctl (u32): [counter, done, flag_row[nt], flag_col[nt]]; data (T): row_agg[nt][H],
 * row_inc[nt][H], col_agg[nt][W], col_inc[nt][W], left_tot[nt] (with the direct sums: each
 * tile's total instead), corner_inc[nt]; nt = ntx * nty.
 * All sums wrap modulo 2^32 / 2^64, which is exact as the true table values fit. */
#define MV_LB_PX (MV_LB_W / MV_ILANES)
/* Work-items of a look-back work-group: MV_LB_WARPS rows of 32 lanes, each over MV_LB_WROWS
 * consecutive rows of the tile. */
#define MV_LB_WARPS 4
#define MV_LB_N (MV_LB_WARPS * MV_ILANES)
#define MV_LB_WROWS (MV_LB_H / MV_LB_WARPS)
#if MV_LB_PX != 4 || MV_LB_H % (2 * MV_LB_WARPS) != 0 || MV_LB_H > MV_LB_N ||                 \
    MV_LB_H * (MV_ILANES + 1) < 2 * MV_LB_WARPS * MV_LB_W
#error "look-back tiles: 128 columns (4 a lane), MV_LB_WARPS rows of lanes of an even row count"
#endif

/* The 4 pixels of row y at columns x .. x + 3 as one word (byte k = column x + k; 0 outside the
 * image or when !inside). */
MV_INLINE mv_u32 mv_lb_load4(MV_GLOBAL const mv_u8* src, int src_stride, int width, int y, int x,
                             int inside)
{
    MV_GLOBAL const mv_u8* row = src + (inside ? y : 0) * src_stride;
    if (inside && x + 4 <= width && ((mv_u64)(row + x) & 3) == 0) {
        return *((MV_GLOBAL const mv_u32*)(row + x));
    }
    mv_u32 b[4];
    MV_UNROLL
    for (int k = 0; k < 4; ++k) {
        b[k] = inside && x + k < width ? (mv_u32)row[x + k] : 0u;
    }
    return MV_PACK4(b[0], b[1], b[2], b[3]);
}

/* Look-back over the `count` tiles g - step, g - 2 step, ...: per window of 32, work-item j < 32
 * waits for the flag of tile g - step (base + j + 1) to leave 0 and shares it (stat); then every
 * work-item runs SUM for each tile t of the window, nearest first, with its status st (1:
 * aggregate, 2: inclusive), up to and including the first inclusive one, which ends the walk.
 * SUM runs for MV_LB_BATCH tiles at a time and must add nothing where on_ is 0 (past the end).
 * Uniform: every work-item takes the same branches and barriers. */
#ifndef MV_LB_STASH
#define MV_LB_STASH 0
#endif
#if MV_LB_STASH
#define MV_LB_BATCH 8
#else
#define MV_LB_BATCH 1
#endif
#define MV_LB_WALK(flags, step, count, SUM)                                                   \
    for (int base_ = 0; base_ < (count); base_ += MV_ILANES) {                                \
        if (lid == 0) {                                                                       \
            first2[0] = MV_ILANES;                                                            \
        }                                                                                     \
        MV_BARRIER();                                                                         \
        if (lid < MV_ILANES) {                                                                \
            int j_ = base_ + lid;                                                             \
            mv_u32 f_ = 0u;                                                                   \
            if (j_ < (count)) {                                                               \
                MV_GLOBAL mv_u32* fp_ = (flags) + g - (step) * (j_ + 1);                      \
                do {                                                                          \
                    f_ = MV_VLOAD(mv_u32, fp_);                                               \
                } while (f_ == 0u);                                                           \
                if (f_ == 2u) {                                                               \
                    MV_ATOMIC_MIN_LOCAL(first2, lid);                                         \
                }                                                                             \
            }                                                                                 \
            stat[lid] = f_;                                                                   \
            MV_FENCE_GLOBAL();                                                                \
        }                                                                                     \
        MV_BARRIER();                                                                         \
        int n_ = MV_IMIN(MV_ILANES, (count) - base_);                                         \
        int found_ = first2[0] < n_;                                                          \
        int stop_ = found_ ? first2[0] + 1 : n_;                                              \
        /* MV_LB_BATCH tiles at a time, without branches, so that their loads are in flight */\
        /* together instead of one round trip a tile. */                                      \
        for (int q0_ = 0; q0_ < stop_; q0_ += MV_LB_BATCH) {                                  \
            MV_UNROLL for (int j_ = 0; j_ < MV_LB_BATCH; ++j_)                                \
            {                                                                                 \
                int q_ = q0_ + j_;                                                            \
                int on_ = q_ < stop_;                                                         \
                int t = g - (step) * (base_ + q_ + 1);                                        \
                mv_u32 st = stat[on_ ? q_ : 0];                                               \
                SUM                                                                           \
            }                                                                                 \
        }                                                                                     \
        MV_BARRIER();                                                                         \
        if (found_) {                                                                         \
            break;                                                                            \
        }                                                                                     \
    }

/* Publishes status v of the work-group's tile in flags where cond (uniform) holds: behind a
 * barrier (every work-item's stores before it), one work-item fences, which orders them all
 * device-wide (the fence is cumulative, as in CUDA's grid sync), then stores the flag. The
 * barrier is passed whether cond holds or not, so that every work-item of every work-group
 * reaches the same barriers (PoCL's work-item loops need that). */
#define MV_LB_PUBLISH_IF(cond, flags, v)                                                      \
    MV_BARRIER();                                                                             \
    if ((cond) && lid == 0) {                                                                 \
        MV_FENCE_GLOBAL();                                                                    \
        MV_VSTORE(mv_u32, (flags) + g, (v));                                                  \
    }

/* Direct sums (the kernels without _walk_ in their names; the host runs them on images of at
 * most INTEGRAL_LOOKBACK_DIRECT_MAX_SIDE tiles a side, the walks on larger ones): no inclusive
 * sums and a single publication. Each work-group publishes its tile's row sums,
 * column sums and total (left_tot[g]) once (flag_row = 1, then flag_col[ty] += 1), waits until
 * every row of tiles above its own has finished (flag_col[i] = ntx; all their tiles started
 * earlier) and the tiles left of it in its row have published, one word per work-item, all
 * polled at once (polling every tile of the rectangle, a work-item waited a round trip per
 * flag, up to 9 at 4K, where the kernel took 1.2x as long), then adds their sums
 * directly: left[r] over the tiles left of it in its row, above[c] over those above it in its
 * column, the corner over the rectangle above-left (spread over the warps and lanes, then
 * reduced). The loads are independent of each other and unrolled MV_LB_DBATCH at a time, so
 * they are in flight together, where the walks below chain up to four publications per tile;
 * but they grow with the tiles above-left (at 3840 x 2160, 30 x 34 tiles: at most 957 totals
 * over 128 work-items, 29 row and 33 column sums each), hence the walks on images wider or
 * taller than the bound. */
#define MV_LB_DBATCH 8
#define MV_LB_DIRECT_SUMS(T)                                                                  \
    {                                                                                         \
        /* Trip counts 0 unless direct_, barriers always (uniform for PoCL).  */              \
        int dtx_ = direct_ ? tx : 0;                                                          \
        int dty_ = direct_ ? ty : 0;                                                          \
        for (int q_ = lid; q_ < (direct_ ? ty + tx : 0); q_ += MV_LB_N) {                     \
            MV_GLOBAL mv_u32* fp_ = q_ < ty ? flag_col + q_ : flag_row + ty * ntx + q_ - ty;  \
            mv_u32 want_ = q_ < ty ? (mv_u32)ntx : 1u;                                        \
            while (MV_VLOAD(mv_u32, fp_) != want_) {                                          \
            }                                                                                 \
        }                                                                                     \
        MV_FENCE_GLOBAL();                                                                    \
        MV_BARRIER();                                                                         \
        if (lid < MV_LB_H) {                                                                  \
            for (int j0_ = 0; j0_ < dtx_; j0_ += MV_LB_DBATCH) {                              \
                MV_UNROLL for (int k_ = 0; k_ < MV_LB_DBATCH; ++k_)                           \
                {                                                                             \
                    int j_ = j0_ + k_;                                                        \
                    left += j_ < tx ? MV_VLOAD(T, row_agg + (ty * ntx + j_) * MV_LB_H + lid)  \
                                    : (T)0;                                                   \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
        for (int i0_ = 0; i0_ < dty_; i0_ += MV_LB_DBATCH) {                                  \
            MV_UNROLL for (int k_ = 0; k_ < MV_LB_DBATCH; ++k_)                               \
            {                                                                                 \
                int i_ = i0_ + k_;                                                            \
                above += i_ < ty ? MV_VLOAD(T, col_agg + (i_ * ntx + tx) * MV_LB_W + lid) : (T)0;\
            }                                                                                 \
        }                                                                                     \
        /* The corner: warp wv takes the tile rows wv, wv + MV_LB_WARPS, ..., lane lx the     */\
        /* tile columns lx, lx + 32, ...; MV_LB_DBATCH loads in flight at once.                */\
        T cp_ = 0;                                                                            \
        for (int j0_ = 0; j0_ < dtx_; j0_ += MV_ILANES) {                                     \
            int j_ = j0_ + lx;                                                                \
            for (int i0_ = 0; i0_ < dty_; i0_ += MV_LB_WARPS * MV_LB_DBATCH) {                \
                MV_UNROLL for (int k_ = 0; k_ < MV_LB_DBATCH; ++k_)                           \
                {                                                                             \
                    int i_ = i0_ + k_ * MV_LB_WARPS + wv;                                     \
                    cp_ += i_ < ty && j_ < tx ? MV_VLOAD(T, left_tot + i_ * ntx + j_) : (T)0; \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
        T ex_;                                                                                \
        MV_ILANE_EXCL(T, cp_, ex_, tot);                                                      \
        MV_BARRIER(); /* wtot was read for the total */                                       \
        if (lx == MV_ILANES - 1) {                                                            \
            wtot[wv] = ex_ + cp_;                                                             \
        }                                                                                     \
        MV_BARRIER();                                                                         \
        for (int w_ = 0; w_ < MV_LB_WARPS; ++w_) {                                            \
            corner += wtot[w_];                                                               \
        }                                                                                     \
    }

#define MV_INTEGRAL_LOOKBACK(T, SQ, DIRECT)                                                   \
    MV_LOCAL_ARRAY(T, red, MV_LB_H * (MV_ILANES + 1));                                        \
    MV_LOCAL_ARRAY(T, colpart, MV_LB_WARPS * MV_LB_W);                                        \
    MV_LOCAL_ARRAY(T, tot, MV_ISHFL ? 1 : MV_LB_N);                                           \
    MV_LOCAL_ARRAY(mv_u32, totu, MV_ISHFL ? 1 : MV_LB_N);                                     \
    MV_LOCAL_ARRAY(T, ecol, MV_LB_H);                                                         \
    /* With MV_LB_STASH, the tile's pixels between phases A and D (the registers they held   */\
    /* would spill under the batched walks).                                                 */\
    MV_LOCAL_ARRAY(mv_u32, tpx, MV_LB_STASH ? MV_LB_WROWS * MV_LB_N : 1);                    \
    MV_LOCAL_ARRAY(mv_u32, stat, MV_ILANES);                                                  \
    MV_LOCAL_ARRAY(int, first2, 1);                                                           \
    MV_LOCAL_ARRAY(T, cshare, 1);                                                             \
    MV_LOCAL_ARRAY(T, wtot, MV_LB_WARPS);                                                     \
    MV_LOCAL_ARRAY(mv_u32, gid, 2);                                                           \
    /* From phase C on, red (no longer used) holds two row buffers per row of lanes. */        \
    MV_LOCAL T* stage = red;                                                                  \
    int ntx = (width + MV_LB_W - 1) / MV_LB_W;                                                \
    int nty = (height + MV_LB_H - 1) / MV_LB_H;                                               \
    int nt = ntx * nty;                                                                       \
    int direct_ = (DIRECT); /* else walked; a constant, so each kernel keeps one way's code */\
    int lid = MV_LID_X;                                                                       \
    int lx = lid % MV_ILANES;                                                                 \
    int wv = lid / MV_ILANES;                                                                 \
    if (lid == 0) {                                                                           \
        gid[0] = MV_ATOMIC_INC(ctl);                                                          \
    }                                                                                         \
    MV_BARRIER();                                                                             \
    int g = (int)gid[0];                                                                      \
    int tx = g % ntx;                                                                         \
    int ty = g / ntx;                                                                         \
    int x0 = tx * MV_LB_W;                                                                    \
    int y0 = ty * MV_LB_H;                                                                    \
    int x = x0 + lx * MV_LB_PX;                                                               \
    int yw = y0 + wv * MV_LB_WROWS; /* the first row of the work-item's row of lanes */       \
    MV_GLOBAL mv_u32* flag_row = ctl + 2;                                                     \
    MV_GLOBAL mv_u32* flag_col = ctl + 2 + nt;                                                \
    MV_GLOBAL T* row_agg = data;                                                              \
    MV_GLOBAL T* row_inc = row_agg + nt * MV_LB_H;                                            \
    MV_GLOBAL T* col_agg = row_inc + nt * MV_LB_H;                                            \
    MV_GLOBAL T* col_inc = col_agg + nt * MV_LB_W;                                            \
    MV_GLOBAL T* left_tot = col_inc + nt * MV_LB_W;                                           \
    MV_GLOBAL T* corner_inc = left_tot + nt;                                                  \
    /* A: the tile (lane: 4 columns of MV_LB_WROWS rows, in registers), its column sums      */\
    /* (work-item c: column c) and row sums (work-item r < H: row r).                         */\
    mv_u32 pw[MV_LB_WROWS];                                                                   \
    MV_UNROLL for (int r = 0; r < MV_LB_WROWS; ++r)                                           \
    {                                                                                         \
        pw[r] = mv_lb_load4(src, src_stride, width, yw + r, x, yw + r < height);              \
    }                                                                                         \
    {                                                                                         \
        T cs[MV_LB_PX];                                                                       \
        MV_UNROLL for (int k = 0; k < MV_LB_PX; ++k) { cs[k] = 0; }                           \
        MV_UNROLL for (int r = 0; r < MV_LB_WROWS; ++r)                                       \
        {                                                                                     \
            T rs = 0;                                                                         \
            MV_UNROLL for (int k = 0; k < MV_LB_PX; ++k)                                      \
            {                                                                                 \
                mv_u32 b = MV_BYTE(pw[r], k);                                                 \
                T v = (T)(SQ ? b * b : b);                                                    \
                cs[k] += v;                                                                   \
                rs += v;                                                                      \
            }                                                                                 \
            red[(wv * MV_LB_WROWS + r) * (MV_ILANES + 1) + lx] = rs;                          \
            if (MV_LB_STASH) {                                                                \
                tpx[r * MV_LB_N + lid] = pw[r];                                               \
            }                                                                                 \
        }                                                                                     \
        MV_UNROLL for (int k = 0; k < MV_LB_PX; ++k)                                          \
        {                                                                                     \
            colpart[wv * MV_LB_W + lx * MV_LB_PX + k] = cs[k];                                \
        }                                                                                     \
    }                                                                                         \
    MV_BARRIER();                                                                             \
    T rowsum = 0;                                                                             \
    if (lid < MV_LB_H) {                                                                      \
        for (int l = 0; l < MV_ILANES; ++l) {                                                 \
            rowsum += red[lid * (MV_ILANES + 1) + l];                                         \
        }                                                                                     \
        row_agg[g * MV_LB_H + lid] = rowsum;                                                  \
    }                                                                                         \
    T colsum = 0;                                                                             \
    for (int w = 0; w < MV_LB_WARPS; ++w) {                                                   \
        colsum += colpart[w * MV_LB_W + lid];                                                 \
    }                                                                                         \
    col_agg[g * MV_LB_W + lid] = colsum;                                                      \
    { /* the tile's total, into left_tot[g] with the direct sums */                           \
        T ex_;                                                                                \
        MV_ILANE_EXCL(T, colsum, ex_, tot);                                                   \
        if (lx == MV_ILANES - 1) {                                                            \
            wtot[wv] = ex_ + colsum;                                                          \
        }                                                                                     \
        MV_BARRIER();                                                                         \
        if (direct_ && lid == 0) {                                                            \
            T s_ = 0;                                                                         \
            for (int w_ = 0; w_ < MV_LB_WARPS; ++w_) {                                        \
                s_ += wtot[w_];                                                               \
            }                                                                                 \
            left_tot[g] = s_;                                                                 \
        }                                                                                     \
    }                                                                                         \
    MV_LB_PUBLISH_IF(1, flag_row, 1u);                                                        \
    if (direct_ && lid == 0) {                                                                \
        MV_ATOMIC_INC(flag_col + ty);                                                         \
    }                                                                                         \
    /* B: the sums of the tile's rows left of x0, and their scan down the rows (ecol). */     \
    T left = 0;                                                                               \
    T above = 0;                                                                              \
    T corner = 0;                                                                             \
    MV_LB_DIRECT_SUMS(T) /* all zero unless direct_ */                                        \
    MV_LB_WALK(flag_row, 1, direct_ ? 0 : tx, {                                               \
        if (on_ && lid < MV_LB_H) {                                                           \
            left += MV_VLOAD(T, (st == 2u ? row_inc : row_agg) + t * MV_LB_H + lid);          \
        }                                                                                     \
    })                                                                                        \
    if (lid < MV_LB_H) {                                                                      \
        if (!direct_) {                                                                       \
            row_inc[g * MV_LB_H + lid] = left + rowsum;                                       \
        }                                                                                     \
        red[lid] = left;                                                                      \
    }                                                                                         \
    MV_LB_PUBLISH_IF(!direct_, flag_row, 2u);                                                 \
    /* Inclusive scan of left[] over the rows: Hillis-Steele, red <-> ecol. */               \
    {                                                                                         \
        int cur_ = 0;                                                                         \
        for (int off_ = 1; off_ < MV_LB_H; off_ <<= 1) {                                      \
            MV_LOCAL T* from_ = cur_ ? ecol : red;                                            \
            MV_LOCAL T* to_ = cur_ ? red : ecol;                                              \
            if (lid < MV_LB_H) {                                                              \
                to_[lid] = from_[lid] + (lid >= off_ ? from_[lid - off_] : (T)0);             \
            }                                                                                 \
            MV_BARRIER();                                                                     \
            cur_ ^= 1;                                                                        \
        }                                                                                     \
        if (cur_ == 0 && lid < MV_LB_H) { /* the result is in red: move it */                \
            ecol[lid] = red[lid];                                                             \
        }                                                                                     \
        MV_BARRIER();                                                                         \
    }                                                                                         \
    T left_total = ecol[MV_LB_H - 1];                                                         \
    if (!direct_ && lid == 0) {                                                               \
        left_tot[g] = left_total;                                                             \
    }                                                                                         \
    MV_LB_PUBLISH_IF(!direct_, flag_col, 1u);                                                 \
    /* C: the sum of column lid above y0, and the corner. */                                  \
    MV_LB_WALK(flag_col, ntx, direct_ ? 0 : ty, {                                             \
        if (on_) {                                                                            \
            above += MV_VLOAD(T, (st == 2u ? col_inc : col_agg) + t * MV_LB_W + lid);         \
        }                                                                                     \
        if (on_ && lid == 0) {                                                                \
            corner += MV_VLOAD(T, (st == 2u ? corner_inc : left_tot) + t);                    \
        }                                                                                     \
    })                                                                                        \
    if (!direct_) {                                                                           \
        col_inc[g * MV_LB_W + lid] = above + colsum;                                          \
        if (lid == 0) {                                                                       \
            corner_inc[g] = corner + left_total;                                              \
            cshare[0] = corner;                                                               \
        }                                                                                     \
    }                                                                                         \
    /* Column c's sum above the first row of each row of lanes (above[c] plus the rows of  */\
    /* the rows of lanes before it), into stage (free until D's first row).                 */\
    {                                                                                         \
        T a = above;                                                                          \
        for (int w = 0; w < MV_LB_WARPS; ++w) {                                               \
            stage[w * MV_LB_W + lid] = a;                                                     \
            a += colpart[w * MV_LB_W + lid];                                                  \
        }                                                                                     \
    }                                                                                         \
    MV_LB_PUBLISH_IF(!direct_, flag_col, 2u);                                                 \
    if (!direct_) {                                                                           \
        corner = cshare[0];                                                                   \
    }                                                                                         \
    /* D: acc[k] = the sum from x0 to column x + k of everything above the current row,     */\
    /* plus each row's prefix; staged per row of lanes, then stored coalesced.               */\
    T acc[MV_LB_PX];                                                                          \
    {                                                                                         \
        T run = 0;                                                                            \
        MV_UNROLL for (int k = 0; k < MV_LB_PX; ++k)                                          \
        {                                                                                     \
            run += stage[wv * MV_LB_W + lx * MV_LB_PX + k];                                   \
            acc[k] = run;                                                                     \
        }                                                                                     \
        T ex;                                                                                 \
        MV_ILANE_EXCL(T, run, ex, tot);                                                       \
        MV_UNROLL for (int k = 0; k < MV_LB_PX; ++k) { acc[k] += ex; }                        \
    }                                                                                         \
    MV_BARRIER(); /* stage is rewritten below */                                              \
    /* Whole tiles (all but the right and bottom edges) store without per-column checks;    */\
    /* orow: the table row of the work-item's first column in the row of lanes, stepped.    */\
    int whole = x0 + MV_LB_W <= width && y0 + MV_LB_H <= height;                              \
    MV_GLOBAL T* orow = table + (yw + 1) * stride + x0 + 1 + lx;                              \
    /* Two rows at a time: their in-row prefixes fit 32 bits (128 x 255^2 at most), the      */\
    /* pixels' 16 bits (128 x 255), so both rows of pixels scan the lanes in one packed word. */\
    MV_UNROLL for (int r = 0; r < MV_LB_WROWS; r += 2)                                        \
    {                                                                                         \
        mv_u32 v[2][MV_LB_PX];                                                                \
        mv_u32 run[2];                                                                        \
        MV_UNROLL for (int j = 0; j < 2; ++j)                                                 \
        {                                                                                     \
            run[j] = 0u;                                                                      \
            mv_u32 w = MV_LB_STASH ? tpx[(r + j) * MV_LB_N + lid] : pw[r + j];                \
            MV_UNROLL for (int k = 0; k < MV_LB_PX; ++k)                                      \
            {                                                                                 \
                mv_u32 b = MV_BYTE(w, k);                                                     \
                run[j] += SQ ? b * b : b;                                                     \
                v[j][k] = run[j];                                                             \
            }                                                                                 \
        }                                                                                     \
        mv_u32 ex[2];                                                                         \
        if (SQ) {                                                                             \
            MV_ILANE_EXCL(mv_u32, run[0], ex[0], totu);                                       \
            MV_ILANE_EXCL(mv_u32, run[1], ex[1], totu);                                       \
        } else {                                                                              \
            mv_u32 pk = run[0] | (run[1] << 16);                                              \
            mv_u32 pe;                                                                        \
            MV_ILANE_EXCL(mv_u32, pk, pe, totu);                                              \
            ex[0] = pe & 0xffffu;                                                             \
            ex[1] = pe >> 16;                                                                 \
        }                                                                                     \
        MV_UNROLL for (int j = 0; j < 2; ++j)                                                 \
        {                                                                                     \
            MV_LOCAL T* sg = stage + (j * MV_LB_WARPS + wv) * MV_LB_W;                        \
            T e = corner + ecol[wv * MV_LB_WROWS + r + j];                                    \
            MV_UNROLL for (int k = 0; k < MV_LB_PX; ++k)                                      \
            {                                                                                 \
                acc[k] += (T)(ex[j] + v[j][k]);                                               \
                sg[lx * MV_LB_PX + k] = acc[k] + e;                                           \
            }                                                                                 \
        }                                                                                     \
        MV_WARP_BARRIER(); /* the pair is staged */                                           \
        MV_UNROLL for (int j = 0; j < 2; ++j)                                                 \
        {                                                                                     \
            MV_LOCAL T* sg = stage + (j * MV_LB_WARPS + wv) * MV_LB_W;                        \
            int y = yw + r + j;                                                               \
            if (whole) {                                                                      \
                MV_UNROLL for (int i = 0; i < MV_LB_PX; ++i)                                  \
                {                                                                             \
                    orow[i * MV_ILANES] = sg[i * MV_ILANES + lx];                             \
                }                                                                             \
            } else if (y < height) {                                                          \
                MV_UNROLL for (int i = 0; i < MV_LB_PX; ++i)                                  \
                {                                                                             \
                    if (x0 + i * MV_ILANES + lx < width) {                                    \
                        orow[i * MV_ILANES] = sg[i * MV_ILANES + lx];                         \
                    }                                                                         \
                }                                                                             \
            }                                                                                 \
            if (tx == 0 && lx == 0 && y < height) { /* column 0 of the table */               \
                orow[-1] = 0;                                                                 \
            }                                                                                 \
            orow += stride;                                                                   \
        }                                                                                     \
        MV_WARP_BARRIER(); /* the stores have read the pair before the next one is staged */  \
    }                                                                                         \
    if (ty == 0) { /* row 0 of the table above the tile, and its corner (0, 0) */             \
        if (x0 + lid < width) {                                                               \
            table[x0 + lid + 1] = 0;                                                          \
        }                                                                                     \
        if (tx == 0 && lid == 0) {                                                            \
            table[0] = 0;                                                                     \
        }                                                                                     \
    }                                                                                         \
    /* The last work-group to get here zeroes the control words for the next launch. */       \
    MV_BARRIER();                                                                             \
    if (lid == 0) {                                                                           \
        MV_FENCE_GLOBAL();                                                                    \
        gid[1] = MV_ATOMIC_INC(ctl + 1);                                                      \
    }                                                                                         \
    MV_BARRIER();                                                                             \
    if (gid[1] == (mv_u32)(nt - 1)) {                                                         \
        for (int i = lid; i < 2 + 2 * nt; i += MV_LB_N) {                                     \
            ctl[i] = 0u;                                                                      \
        }                                                                                     \
    }

MV_KERNEL_LEAN mv_integral_lookback_u8(MV_GLOBAL const mv_u8* src, int src_stride,
                                  MV_GLOBAL mv_u32* table, int stride, MV_GLOBAL mv_u32* ctl,
                                  MV_GLOBAL mv_u32* data, int width, int height)
{
    MV_INTEGRAL_LOOKBACK(mv_u32, 0, 1)
}

MV_KERNEL_LEAN mv_integral_lookback_sq_u8(MV_GLOBAL const mv_u8* src, int src_stride,
                                     MV_GLOBAL mv_u64* table, int stride, MV_GLOBAL mv_u32* ctl,
                                     MV_GLOBAL mv_u64* data, int width, int height)
{
    MV_INTEGRAL_LOOKBACK(mv_u64, 1, 1)
}

MV_KERNEL_LEAN mv_integral_lookback_walk_u8(MV_GLOBAL const mv_u8* src, int src_stride,
                                       MV_GLOBAL mv_u32* table, int stride,
                                       MV_GLOBAL mv_u32* ctl, MV_GLOBAL mv_u32* data, int width,
                                       int height)
{
    MV_INTEGRAL_LOOKBACK(mv_u32, 0, 0)
}

MV_KERNEL_LEAN mv_integral_lookback_walk_sq_u8(MV_GLOBAL const mv_u8* src, int src_stride,
                                          MV_GLOBAL mv_u64* table, int stride,
                                          MV_GLOBAL mv_u32* ctl, MV_GLOBAL mv_u64* data,
                                          int width, int height)
{
    MV_INTEGRAL_LOOKBACK(mv_u64, 1, 0)
}
