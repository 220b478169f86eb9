//! Integral images (summed-area tables) and O(1) window statistics.
//!
//! For a `w × h` `u8` image the tables are `(w + 1) × (h + 1)`: entry `(x, y)` holds the sum of
//! all pixels above and left of it (row 0 and column 0 are zero), so any window's sum is four
//! reads. The plain table is `u32` (valid while `255·w·h < 2³²`, about 16.8 Mpixel); the
//! squared table is `u64`.
//!
//! Each row is a prefix sum plus the row above. On x86 the prefix runs in vectors at every
//! instruction-set level (`prefix_sse2`, `prefix_avx2`, `prefix_avx512`, exact integers, so
//! every level writes the same tables); with AVX-512 both tables come from one pass, and tables
//! larger than the caches are written in bands of rows with non-temporal stores.

#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
#[allow(unsafe_code)]
mod prefix_avx2;
#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
#[allow(unsafe_code)]
mod prefix_avx512;
#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
#[allow(unsafe_code)]
mod prefix_sse2;

use crate::error::{Error, Result};
use crate::geometry::Rect;
use crate::image::{same_size, ImageView, ImageViewMut};

/// Largest pixel count whose `u8` sum fits the `u32` integral image.
pub const MAX_INTEGRAL_PIXELS: u64 = u32::MAX as u64 / 255;

/// The size an integral image of a `width × height` image has: `(width + 1, height + 1)`.
pub fn integral_size(width: usize, height: usize) -> (usize, usize) {
    (width.saturating_add(1), height.saturating_add(1))
}

/// Computes the integral image `sum` and, if given, the squared integral image `sqsum` of a
/// `u8` image.
///
/// Errors: [`Error::SizeMismatch`] unless the tables are `(w + 1) × (h + 1)`;
/// [`Error::Overflow`] if the image has more than [`MAX_INTEGRAL_PIXELS`] pixels.
pub fn integral_u8(
    src: &ImageView<'_, u8>,
    sum: &mut ImageViewMut<'_, u32>,
    sqsum: Option<&mut ImageViewMut<'_, u64>>,
) -> Result<()> {
    let (w, h) = src.size();
    let size = integral_size(w, h);
    same_size(size, sum.size())?;
    if let Some(sq) = sqsum.as_deref() {
        same_size(size, sq.size())?;
    }
    if (w as u64).saturating_mul(h as u64) > MAX_INTEGRAL_PIXELS {
        return Err(Error::Overflow);
    }
    #[cfg(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2"
    ))]
    let (fast_sum, fast_both) = (sum_row_x86 as FastRow, sum_sq_row_x86 as FastRows);
    #[cfg(not(all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "sse2"
    )))]
    let (fast_sum, fast_both) = (no_fast_row as FastRow, no_fast_rows as FastRows);
    match sqsum {
        None => fill_sum_table(src, sum, fast_sum),
        Some(sq) => fill_tables(src, sum, sq, fast_both),
    }
    Ok(())
}

/// Unsigned table entries: exact sums that never exceed the type (checked by the caller), so
/// window queries may use wrapping arithmetic on the four corners.
trait TableEntry: crate::pixel::Pixel + core::ops::Add<Output = Self> {
    fn wrapping_corner_sum(a: Self, b: Self, c: Self, d: Self) -> Self;
}

macro_rules! table_entry {
    ($t:ty) => {
        impl TableEntry for $t {
            #[inline]
            fn wrapping_corner_sum(a: Self, b: Self, c: Self, d: Self) -> Self {
                a.wrapping_sub(b).wrapping_sub(c).wrapping_add(d)
            }
        }
    };
}
table_entry!(u32);
table_entry!(u64);

/// A vectorised row of [`fill_sum_table`]: `(row, above, out)` fills a prefix of `out` as the
/// scalar loop would, and returns its length and the running sum after it.
type FastRow = fn(&[u8], &[u32], &mut [u32]) -> (usize, u32);

/// The sum table's [`FastRow`] on x86: AVX-512 where [`crate::cpu::active`] allows it, else
/// SSE2.
#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
fn sum_row_x86(row: &[u8], above: &[u32], out: &mut [u32]) -> (usize, u32) {
    if crate::cpu::active() >= crate::cpu::Level::X86V4 {
        // SAFETY: `active()` only reports x86-64-v4 where the CPU and the OS support
        // AVX-512 F/BW/DQ/VL (and AVX2).
        #[allow(unsafe_code)]
        return unsafe { prefix_avx512::sum_row(row, above, out) };
    }
    prefix_sse2::sum_row(row, above, out)
}

/// A vectorised row of [`fill_tables`]: `(row, above_sum, out_sum, above_sq, out_sq)` fills
/// the same prefix of `out_sum` and `out_sq` as the scalar loop would, and returns its length
/// and the two running sums after it.
type FastRows = fn(&[u8], &[u32], &mut [u32], &[u64], &mut [u64]) -> (usize, u32, u64);

/// [`FastRows`] on x86: AVX-512 (both tables in one pass) or AVX2 (squares) where
/// [`crate::cpu::active`] allows it, else SSE2; one table after the other below x86-64-v4, on
/// the same row while it is in the L1 cache.
#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
fn sum_sq_row_x86(
    row: &[u8],
    above_sum: &[u32],
    out_sum: &mut [u32],
    above_sq: &[u64],
    out_sq: &mut [u64],
) -> (usize, u32, u64) {
    use crate::cpu::{active, Level};
    let level = active();
    if level >= Level::X86V4 {
        // SAFETY: `active()` only reports x86-64-v4 where the CPU and the OS support
        // AVX-512 F/BW/DQ/VL (and AVX2).
        #[allow(unsafe_code)]
        return unsafe { prefix_avx512::sum_sq_row(row, above_sum, out_sum, above_sq, out_sq) };
    }
    let (done_sum, acc_sum) = prefix_sse2::sum_row(row, above_sum, out_sum);
    let (done_sq, acc_sq) = if level >= Level::X86V3 {
        // SAFETY: `active()` only reports x86-64-v3 where the CPU and the OS support AVX2.
        #[allow(unsafe_code)]
        unsafe {
            prefix_avx2::sq_row(row, above_sq, out_sq)
        }
    } else {
        prefix_sse2::sq_row(row, above_sq, out_sq)
    };
    // Both step 16 pixels over the same row, so they stop at the same place.
    debug_assert_eq!(done_sum, done_sq);
    (done_sum.min(done_sq), acc_sum, acc_sq)
}

/// The [`FastRow`] of targets without one: nothing done.
#[allow(dead_code)]
fn no_fast_row(_: &[u8], _: &[u32], _: &mut [u32]) -> (usize, u32) {
    (0, 0)
}

/// The [`FastRows`] of targets without one: nothing done.
#[allow(dead_code)]
fn no_fast_rows(_: &[u8], _: &[u32], _: &mut [u32], _: &[u64], _: &mut [u64]) -> (usize, u32, u64) {
    (0, 0, 0)
}

/// Writes the summed-area table of `src` into `sum` (row 0 and column 0 zero), each row
/// through `fast` first, the rest of it by the scalar loop.
fn fill_sum_table(src: &ImageView<'_, u8>, sum: &mut ImageViewMut<'_, u32>, fast: FastRow) {
    sum.row_mut(0).fill(0);
    #[cfg(target_arch = "x86_64")]
    let first = fill_bands_streamed::<SUM_BAND_ROWS>(src, sum, None);
    #[cfg(not(target_arch = "x86_64"))]
    let first = 0;
    for y in first..src.height() {
        let (above, out) = split_rows(sum, y);
        let (done, acc) = fast(src.row(y), &above[1..], &mut out[1..]);
        finish_row(src, sum, y, done, acc);
    }
}

/// Completes row `y + 1` of the sum table after a vectorised prefix of `done` pixels whose
/// running sum is `acc`: the zero column and the scalar tail.
fn finish_row(
    src: &ImageView<'_, u8>,
    sum: &mut ImageViewMut<'_, u32>,
    y: usize,
    done: usize,
    mut acc: u32,
) {
    let (above, out) = split_rows(sum, y);
    out[0] = 0;
    for ((o, &a), &p) in out[1 + done..]
        .iter_mut()
        .zip(&above[1 + done..])
        .zip(&src.row(y)[done..])
    {
        acc += p as u32;
        *o = a + acc;
    }
}

/// Writes both summed-area tables of `src`, pixels into `sum` and squares into `sq`, row by
/// row: each row through `fast` first, the rest of it by the scalar loop. One pass over the
/// image instead of one per table: each source row is read once and both tables' rows are
/// written while the row above each is still in the cache.
fn fill_tables(
    src: &ImageView<'_, u8>,
    sum: &mut ImageViewMut<'_, u32>,
    sq: &mut ImageViewMut<'_, u64>,
    fast: FastRows,
) {
    sum.row_mut(0).fill(0);
    sq.row_mut(0).fill(0);
    #[cfg(target_arch = "x86_64")]
    let first = fill_bands_streamed::<SQ_BAND_ROWS>(src, sum, Some(sq));
    #[cfg(not(target_arch = "x86_64"))]
    let first = 0;
    for y in first..src.height() {
        let (above_sum, out_sum) = split_rows(sum, y);
        let (above_sq, out_sq) = split_rows(sq, y);
        let (done, acc_sum, acc_sq) = fast(
            src.row(y),
            &above_sum[1..],
            &mut out_sum[1..],
            &above_sq[1..],
            &mut out_sq[1..],
        );
        finish_rows(src, sum, sq, y, done, acc_sum, acc_sq);
    }
}

/// Completes row `y + 1` of both tables after a vectorised prefix of `done` pixels whose
/// running sums are `acc_sum` and `acc_sq`: the zero column and the scalar tail.
fn finish_rows(
    src: &ImageView<'_, u8>,
    sum: &mut ImageViewMut<'_, u32>,
    sq: &mut ImageViewMut<'_, u64>,
    y: usize,
    done: usize,
    mut acc_sum: u32,
    mut acc_sq: u64,
) {
    let (above_sum, out_sum) = split_rows(sum, y);
    let (above_sq, out_sq) = split_rows(sq, y);
    out_sum[0] = 0;
    out_sq[0] = 0;
    let tail = out_sum[1 + done..]
        .iter_mut()
        .zip(&above_sum[1 + done..])
        .zip(out_sq[1 + done..].iter_mut().zip(&above_sq[1 + done..]))
        .zip(&src.row(y)[done..]);
    for (((os, &a_s), (oq, &a_q)), &p) in tail {
        acc_sum += p as u32;
        acc_sq += (p as u64) * (p as u64);
        *os = a_s + acc_sum;
        *oq = a_q + acc_sq;
    }
}

/// Source rows per band of [`fill_bands_streamed`] with the squared table: the memory traffic
/// per pixel is the tables' 12 bytes plus 12 / `SQ_BAND_ROWS` for the cached last row (read
/// before it is written). Measured on Zen 5 at 3840x2160: 16 rows ~15 % faster than 8.
#[cfg(target_arch = "x86_64")]
const SQ_BAND_ROWS: usize = 16;

/// As [`SQ_BAND_ROWS`] for the sum table alone, where 8 rows measured faster than 16 (fewer
/// values held across the band).
#[cfg(target_arch = "x86_64")]
const SUM_BAND_ROWS: usize = 8;

/// Tables (both together) at least this large are written with non-temporal stores: larger
/// than most last-level caches, so they would be evicted before use anyway, while smaller
/// ones are faster written (and later read) through the cache.
#[cfg(target_arch = "x86_64")]
const STREAM_MIN_BYTES: usize = 16 << 20;

/// On x86-64-v4, for tables of at least [`STREAM_MIN_BYTES`]: rows of the sum table and, if
/// given, the squared table in bands of `K` rows with `prefix_avx512::band_streamed`;
/// returns how many source rows are done (0 where this does not apply), the rest left to the
/// row-by-row loop.
#[cfg(target_arch = "x86_64")]
fn fill_bands_streamed<const K: usize>(
    src: &ImageView<'_, u8>,
    sum: &mut ImageViewMut<'_, u32>,
    mut sq: Option<&mut ImageViewMut<'_, u64>>,
) -> usize {
    let (w, h) = src.size();
    let entry_bytes = if sq.is_some() { 4 + 8 } else { 4 };
    let bytes = (w + 1).saturating_mul(h + 1).saturating_mul(entry_bytes);
    if crate::cpu::active() < crate::cpu::Level::X86V4 || bytes < STREAM_MIN_BYTES {
        return 0;
    }
    let (src_stride, sum_stride) = (src.stride(), sum.stride());
    let sq_stride = sq.as_ref().map_or(0, |q| q.stride());
    let mut y = 0;
    while y + K <= h {
        // Source rows y..y + K; table rows y..=y + K from column 1.
        let rows = &src.as_slice()[y * src_stride..];
        let sum_rows = sum.rows_mut_raw(y * sum_stride + 1, K * sum_stride + w);
        // SAFETY (both calls): `active()` only reports x86-64-v4 where the CPU and the OS
        // support AVX-512 F/BW/DQ/VL (and AVX2).
        #[allow(unsafe_code)]
        let band = match sq.as_deref_mut() {
            Some(q) => {
                let sq_rows = q.rows_mut_raw(y * sq_stride + 1, K * sq_stride + w);
                unsafe {
                    prefix_avx512::band_streamed::<K, true>(
                        rows, src_stride, sum_rows, sum_stride, sq_rows, sq_stride, w,
                    )
                }
            }
            None => unsafe {
                prefix_avx512::band_streamed::<K, false>(
                    rows,
                    src_stride,
                    sum_rows,
                    sum_stride,
                    &mut [],
                    0,
                    w,
                )
            },
        };
        let Some((done, acc_sum, acc_sq)) = band else {
            break;
        };
        for r in 0..K {
            match sq.as_deref_mut() {
                Some(q) => finish_rows(src, sum, q, y + r, done, acc_sum[r], acc_sq[r]),
                None => finish_row(src, sum, y + r, done, acc_sum[r]),
            }
        }
        y += K;
    }
    y
}

/// Rows `y` (read) and `y + 1` (write) of a table, borrowed together.
fn split_rows<'v, T: crate::pixel::Pixel>(
    t: &'v mut ImageViewMut<'_, T>,
    y: usize,
) -> (&'v [T], &'v mut [T]) {
    let (w, stride) = (t.width(), t.stride());
    let rows = t.rows_mut_raw(y * stride, stride + w);
    let (a, b) = rows.split_at_mut(stride);
    (&a[..w], &mut b[..w])
}

/// Window queries over integral images built by [`integral_u8`]: sums, means and variances of
/// any rectangle of the source image in constant time.
#[derive(Clone, Copy, Debug)]
pub struct IntegralImage<'a> {
    sum: ImageView<'a, u32>,
    sqsum: Option<ImageView<'a, u64>>,
}

impl<'a> IntegralImage<'a> {
    /// Wraps an integral image and, optionally, its squared counterpart.
    ///
    /// Errors: [`Error::SizeMismatch`] if the two tables differ in size.
    pub fn new(sum: ImageView<'a, u32>, sqsum: Option<ImageView<'a, u64>>) -> Result<Self> {
        if let Some(sq) = &sqsum {
            same_size(sum.size(), sq.size())?;
        }
        Ok(Self { sum, sqsum })
    }

    /// Width of the source image in pixels.
    pub fn width(&self) -> usize {
        self.sum.width() - 1
    }

    /// Height of the source image in pixels.
    pub fn height(&self) -> usize {
        self.sum.height() - 1
    }

    fn corners(&self, r: &Rect) -> Result<(usize, usize, usize, usize)> {
        if r.is_empty() {
            return Err(Error::ZeroSize);
        }
        if !r.is_inside(self.width(), self.height()) {
            return Err(Error::OutOfBounds);
        }
        let (x0, y0) = (r.x as usize, r.y as usize);
        Ok((x0, y0, x0 + r.width as usize, y0 + r.height as usize))
    }

    /// Sum of the pixels in `rect`.
    ///
    /// Errors: [`Error::ZeroSize`] for an empty rectangle; [`Error::OutOfBounds`] unless it
    /// lies inside the image.
    pub fn window_sum(&self, rect: Rect) -> Result<u32> {
        self.box_sum(&self.sum, &rect)
    }

    /// Sum of the squared pixels in `rect`.
    ///
    /// Errors: as [`IntegralImage::window_sum`]; [`Error::InvalidArgument`] if no squared table
    /// was given.
    pub fn window_sq_sum(&self, rect: Rect) -> Result<u64> {
        let sq = self.sqsum.as_ref().ok_or(Error::InvalidArgument)?;
        self.box_sum(sq, &rect)
    }

    /// The four-corner sum of `table` over `rect` (exact: the true value fits `T`).
    fn box_sum<T: TableEntry>(&self, table: &ImageView<'_, T>, rect: &Rect) -> Result<T> {
        let (x0, y0, x1, y1) = self.corners(rect)?;
        let at = |x: usize, y: usize| table.row(y)[x];
        Ok(T::wrapping_corner_sum(
            at(x1, y1),
            at(x0, y1),
            at(x1, y0),
            at(x0, y0),
        ))
    }

    /// Mean pixel value in `rect`.
    ///
    /// Errors: as [`IntegralImage::window_sum`].
    pub fn window_mean(&self, rect: Rect) -> Result<f64> {
        Ok(self.window_sum(rect)? as f64 / rect.area() as f64)
    }

    /// Population variance `E[p²] − E[p]²` of the pixels in `rect`. The numerator
    /// `n·Σp² − (Σp)²` is computed exactly in integers, so the only rounding is the final
    /// division.
    ///
    /// Errors: as [`IntegralImage::window_sq_sum`].
    pub fn window_variance(&self, rect: Rect) -> Result<f64> {
        let q = self.window_sq_sum(rect)? as u128;
        let s = self.window_sum(rect)? as u128;
        let n = rect.area() as u128;
        // Non-negative for tables built together by `integral_u8` (Cauchy–Schwarz); saturate so
        // that a caller's mismatched pair of tables gives 0, not a panic or a wrapped value.
        let num = (n * q).saturating_sub(s * s);
        Ok(num as f64 / (n * n) as f64)
    }
}
