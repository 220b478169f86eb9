use super::*;

#[test]
fn reference_reflection_is_right() {
    // The reference itself, against hand-written sequences (n = 3: period 0 1 2 1).
    let want = [0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2];
    for (k, &w) in want.iter().enumerate() {
        assert_eq!(common::reflect101(k as i64, 3), w);
        assert_eq!(common::reflect101(-(k as i64), 3), w);
    }
    assert_eq!(common::reflect101(-7, 2), 1);
    assert_eq!(common::reflect101(1000, 1), 0);
    assert_eq!(common::replicate(-3, 4), 0);
    assert_eq!(common::replicate(9, 4), 3);
}

#[test]
fn border_map_index_matches_definitions() {
    for n in 1..12usize {
        for i in -70isize..70 {
            let ni = n as i64;
            let inside = (0..n as isize).contains(&i);
            let rep = Border::<u8>::Replicate.map_index(i, n);
            assert_eq!(
                rep,
                Some(common::replicate(i as i64, ni) as usize),
                "{i} {n}"
            );
            let refl = Border::<u8>::Reflect101.map_index(i, n);
            assert_eq!(
                refl,
                Some(common::reflect101(i as i64, ni) as usize),
                "{i} {n}"
            );
            let c = Border::Constant(7u8).map_index(i, n);
            assert_eq!(c, inside.then_some(i as usize), "{i} {n}");
        }
    }
}

#[test]
fn pixel_formats_and_error_messages() {
    let all = [
        (PixelFormat::U8, 1, "u8"),
        (PixelFormat::U16, 2, "u16"),
        (PixelFormat::I16, 2, "i16"),
        (PixelFormat::U32, 4, "u32"),
        (PixelFormat::U64, 8, "u64"),
        (PixelFormat::F32, 4, "f32"),
    ];
    for (f, bytes, name) in all {
        assert_eq!((f.bytes(), f.name()), (bytes, name));
    }
    use mvision_core::Pixel;
    assert_eq!(<u8 as Pixel>::FORMAT, PixelFormat::U8);
    assert_eq!(<i16 as Pixel>::FORMAT, PixelFormat::I16);
    assert_eq!(<f32 as Pixel>::FORMAT, PixelFormat::F32);
    assert_eq!(<u64 as Pixel>::FORMAT, PixelFormat::U64);

    let errors = [
        Error::ZeroSize,
        Error::StrideTooSmall,
        Error::BufferTooSmall,
        Error::Overflow,
        Error::SizeMismatch,
        Error::InvalidKernel,
        Error::InvalidArgument,
        Error::OutOfBounds,
    ];
    for (i, e) in errors.iter().enumerate() {
        assert!(!e.message().is_empty());
        assert_eq!(e.to_string(), e.message());
        for f in &errors[i + 1..] {
            assert_ne!(e.message(), f.message());
        }
    }
    assert!(!mvision_core::VERSION.is_empty());
}
