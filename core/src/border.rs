//! Border modes: how filters read pixels outside the image.
//!
//! For an image of `n` pixels along an axis and an outside coordinate `i`:
//! * [`Border::Replicate`]: `aaa|abcdefgh|hhh` — the nearest edge pixel;
//! * [`Border::Reflect101`]: `dcb|abcdefgh|gfe` — mirrored about the edge pixel, without
//!   repeating it (OpenCV's default); with `n == 1` every coordinate maps to pixel 0, and
//!   coordinates further out than `n` keep reflecting;
//! * [`Border::Constant`]: `vvv|abcdefgh|vvv` — a fixed value.

/// How pixels outside the image are defined, generic over the pixel type of the constant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Border<T> {
    /// Repeat the edge pixel.
    Replicate,
    /// Reflect about the edge pixel without repeating it (`gfedcb|abcdefgh|gfedcba`).
    Reflect101,
    /// Every outside pixel has this value.
    Constant(T),
}

impl<T> Border<T> {
    /// Maps coordinate `i` on an axis of `n ≥ 1` pixels to an inside coordinate, or `None`
    /// when the pixel is the constant border value.
    #[inline]
    pub fn map_index(&self, i: isize, n: usize) -> Option<usize> {
        let n_i = n as isize;
        if (0..n_i).contains(&i) {
            return Some(i as usize);
        }
        match self {
            Border::Replicate => Some(if i < 0 { 0 } else { n - 1 }),
            Border::Reflect101 => {
                if n == 1 {
                    return Some(0);
                }
                // One reflection (a kernel's border on an image wider than it): no division.
                if i < 0 && i > -n_i {
                    return Some(-i as usize);
                }
                if i >= n_i && i < 2 * n_i - 1 {
                    return Some((2 * (n_i - 1) - i) as usize);
                }
                let period = 2 * (n_i - 1);
                let m = i.rem_euclid(period);
                Some(if m >= n_i { period - m } else { m } as usize)
            }
            Border::Constant(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Border;

    /// Reflect101 against the periodic definition, for one reflection (the direct branch) and
    /// many, on both sides: `gfedcb|abcdefgh|gfedcba` repeated.
    #[test]
    fn reflect101_matches_the_periodic_definition() {
        for n in 1..12usize {
            for i in -40..40isize {
                let want = if n == 1 {
                    0
                } else {
                    let period = 2 * (n as isize - 1);
                    let m = i.rem_euclid(period);
                    (if m >= n as isize { period - m } else { m }) as usize
                };
                assert_eq!(
                    Border::<u8>::Reflect101.map_index(i, n),
                    Some(want),
                    "n {n} i {i}"
                );
            }
        }
    }
}
