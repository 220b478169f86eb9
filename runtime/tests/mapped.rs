//! Mapped (zero-copy where the device shares host memory) images behave like any other image:
//! filled and read through `with_host`, used by operations in place, on every backend present.

use mvision_core::{filter, Border, ImageView, ImageViewMut};
use mvision_runtime::{available, ops, Context, Image};

#[test]
fn mapped_images_round_trip_through_an_operation_on_every_backend() {
    let (w, h) = (37, 23);
    let src: Vec<u8> = (0..w * h).map(|i| (i * 37 % 251) as u8).collect();
    let mut want = vec![0u8; w * h];
    filter::box_blur_u8(
        &ImageView::packed(&src, w, h).unwrap(),
        &mut ImageViewMut::packed(&mut want, w, h).unwrap(),
        5,
        Border::Reflect101,
        &mut vec![0; filter::separable_scratch_len(w, 5, 5)],
    )
    .unwrap();
    for backend in available().iter() {
        let ctx = Context::new(available()).unwrap();
        let mut a = Image::<u8>::new_mapped(&ctx, backend, w, h).unwrap();
        let mut b = Image::<u8>::new_mapped(&ctx, backend, w, h).unwrap();
        a.with_host(|px| px.copy_from_slice(&src)).unwrap();
        ops::box_blur_u8(&a, &mut b, 5, Border::Reflect101).unwrap();
        let got = b.with_host(|px| px.to_vec()).unwrap();
        assert_eq!(got, want, "{}", backend.name());
        // A plain device image goes through a staged copy, written back on return.
        let mut c = Image::<u8>::new(&ctx, backend, w, h).unwrap();
        c.with_host(|px| px.fill(9)).unwrap();
        let mut back = vec![0u8; w * h];
        c.download(&mut ImageViewMut::packed(&mut back, w, h).unwrap())
            .unwrap();
        assert!(back.iter().all(|&v| v == 9), "{}", backend.name());
    }
}
