//! The parts of the driver API (`kernels/SPEC.md`) that are the same in both drivers, as macros
//! each driver expands once: [`crate::device_ops!`] (the image operations of a context, from the
//! plans), [`crate::device_image_accessors!`] (sizes and views of device and mapped images) and
//! [`crate::driver_error_conversions!`] (what a driver's `Error` converts from).

/// Defines the image operations of a driver's context (`kernels/SPEC.md`, "Driver API"):
/// `filter2d_u8` … `resize_bilinear_f32`, each a [`plan`](crate::plan) of this crate enqueued by
/// the driver. Expand it once in the driver crate:
///
/// ```text
/// mvision_kernels::device_ops!(Context, DeviceImage, Error);
/// ```
///
/// The driver provides, visible where the macro expands (they need not be public):
/// * `Context::planner(&self) -> &Planner` — the context's [`Planner`](crate::plan::Planner);
/// * `Context::enqueue(&self, Launch<B>) -> Result<(), Error>` — binds the launch's buffers and
///   tables and enqueues it, where `B` is the driver's buffer handle;
/// * `Context::integral_group_limit(&self) -> Result<usize, Error>` — the largest work-group
///   the integral kernels accept once compiled, where the API reports one (else `usize::MAX`);
/// * `Context::integral_scratch(&self, IntegralScratch) -> Result<G, Error>` — the context's
///   scratch buffers for the tiled integral scan, grown to at least the sizes asked, behind a
///   guard `G` that keeps other threads from them until dropped, with `G::bufs(&self) -> (B,
///   Option<B>)` (the `u32` buffer, and the `u64` one when asked for bytes);
/// * `DeviceImage::<T>::plan_img(&self) -> Img<B>` — the image as a plan sees it;
/// * `Error: From<PlanError>`.
///
/// Every operation checks its arguments exactly as the `mvision-core` function it mirrors
/// (same checks, same order, same `mvision_core::Error` in `Error::Invalid`), after checking
/// that every image belongs to this context (`Invalid(InvalidArgument)` otherwise), and
/// enqueues nothing when a check fails. Then it enqueues and returns: results are there once
/// `download`, `map` or `sync` has waited.
#[macro_export]
macro_rules! device_ops {
    ($ctx:ident, $img:ident, $err:ty) => {
        impl $ctx {
            /// Dense fixed-point convolution of a `u8` image, as
            /// `mvision_core::filter::filter2d_u8`, naive or tiled as `variant` says.
            ///
            /// Errors: `Invalid(SizeMismatch)` unless `dst` is `src`'s size; for
            /// `Variant::Tiled`, `Invalid(ZeroSize)` for a zero tile side, and `Device` (the
            /// API's invalid work-group / invalid value code) for a tile beyond the device's
            /// work-group or local-memory limits; driver errors.
            pub fn filter2d_u8(
                &self,
                src: &$img<u8>,
                dst: &mut $img<u8>,
                kernel: &$crate::__private::mvision_core::filter::Kernel2dQ,
                border: $crate::__private::mvision_core::Border<u8>,
                variant: $crate::Variant,
            ) -> ::core::result::Result<(), $err> {
                let (s, d) = (src.plan_img(), dst.plan_img());
                self.enqueue(self.planner().filter2d_u8(s, d, kernel, border, variant)?)
            }

            /// Dense float convolution of an `f32` image, as
            /// `mvision_core::filter::filter2d_f32`.
            ///
            /// Errors: as `filter2d_u8`.
            pub fn filter2d_f32(
                &self,
                src: &$img<f32>,
                dst: &mut $img<f32>,
                kernel: &$crate::__private::mvision_core::filter::Kernel2dF32,
                border: $crate::__private::mvision_core::Border<f32>,
                variant: $crate::Variant,
            ) -> ::core::result::Result<(), $err> {
                let (s, d) = (src.plan_img(), dst.plan_img());
                self.enqueue(self.planner().filter2d_f32(s, d, kernel, border, variant)?)
            }

            /// Separable fixed-point convolution of a `u8` image, as
            /// `mvision_core::filter::sep_filter_u8`.
            ///
            /// Errors: `Invalid(SizeMismatch)` unless `dst` is `src`'s size; driver errors.
            pub fn sep_filter_u8(
                &self,
                src: &$img<u8>,
                dst: &mut $img<u8>,
                kernel: &$crate::__private::mvision_core::filter::SepKernelQ,
                border: $crate::__private::mvision_core::Border<u8>,
            ) -> ::core::result::Result<(), $err> {
                let (s, d) = (src.plan_img(), dst.plan_img());
                self.enqueue(self.planner().sep_filter_u8(s, d, kernel, border)?)
            }

            /// Separable float convolution of an `f32` image, as
            /// `mvision_core::filter::sep_filter_f32`.
            ///
            /// Errors: as `sep_filter_u8`.
            pub fn sep_filter_f32(
                &self,
                src: &$img<f32>,
                dst: &mut $img<f32>,
                kernel: &$crate::__private::mvision_core::filter::SepKernelF32,
                border: $crate::__private::mvision_core::Border<f32>,
            ) -> ::core::result::Result<(), $err> {
                let (s, d) = (src.plan_img(), dst.plan_img());
                self.enqueue(self.planner().sep_filter_f32(s, d, kernel, border)?)
            }

            /// Box blur of a `u8` image (exact sum, rounded division by `ksize²`), as
            /// `mvision_core::filter::box_blur_u8`.
            ///
            /// Errors: `Invalid(ZeroSize)` / `Invalid(InvalidKernel)` for a bad `ksize`, then
            /// `Invalid(SizeMismatch)`; driver errors.
            pub fn box_blur_u8(
                &self,
                src: &$img<u8>,
                dst: &mut $img<u8>,
                ksize: usize,
                border: $crate::__private::mvision_core::Border<u8>,
            ) -> ::core::result::Result<(), $err> {
                let (s, d) = (src.plan_img(), dst.plan_img());
                self.enqueue(self.planner().box_blur_u8(s, d, ksize, border)?)
            }

            /// Box blur of an `f32` image (window sum times `1/ksize²`), as
            /// `mvision_core::filter::box_blur_f32`.
            ///
            /// Errors: as `box_blur_u8`.
            pub fn box_blur_f32(
                &self,
                src: &$img<f32>,
                dst: &mut $img<f32>,
                ksize: usize,
                border: $crate::__private::mvision_core::Border<f32>,
            ) -> ::core::result::Result<(), $err> {
                let (s, d) = (src.plan_img(), dst.plan_img());
                self.enqueue(self.planner().box_blur_f32(s, d, ksize, border)?)
            }

            /// Gaussian blur of a `u8` image with the fixed-point kernel of
            /// `mvision_core::filter::gaussian_kernel_q` (`ksize` 0: from `sigma_px`;
            /// `sigma_px` ≤ 0: from `ksize`), as `mvision_core::filter::gaussian_blur_u8`.
            ///
            /// Errors: those of `gaussian_kernel_q`, then as `sep_filter_u8`.
            pub fn gaussian_blur_u8(
                &self,
                src: &$img<u8>,
                dst: &mut $img<u8>,
                ksize: usize,
                sigma_px: f32,
                border: $crate::__private::mvision_core::Border<u8>,
            ) -> ::core::result::Result<(), $err> {
                let (s, d) = (src.plan_img(), dst.plan_img());
                let plan = self
                    .planner()
                    .gaussian_blur_u8(s, d, ksize, sigma_px, border)?;
                self.enqueue(plan)
            }

            /// Gaussian blur of an `f32` image, as `mvision_core::filter::gaussian_blur_f32`.
            ///
            /// Errors: those of `mvision_core::filter::gaussian_kernel_f32`, then as
            /// `sep_filter_f32`.
            pub fn gaussian_blur_f32(
                &self,
                src: &$img<f32>,
                dst: &mut $img<f32>,
                ksize: usize,
                sigma_px: f32,
                border: $crate::__private::mvision_core::Border<f32>,
            ) -> ::core::result::Result<(), $err> {
                let (s, d) = (src.plan_img(), dst.plan_img());
                let plan = self
                    .planner()
                    .gaussian_blur_f32(s, d, ksize, sigma_px, border)?;
                self.enqueue(plan)
            }

            /// 3 × 3 Sobel derivatives of a `u8` image into `i16` images, as
            /// `mvision_core::filter::sobel_u8`.
            ///
            /// Errors: `Invalid(SizeMismatch)` unless `dx` and `dy` have `src`'s size; driver
            /// errors.
            pub fn sobel_u8(
                &self,
                src: &$img<u8>,
                dx: &mut $img<i16>,
                dy: &mut $img<i16>,
                border: $crate::__private::mvision_core::Border<u8>,
            ) -> ::core::result::Result<(), $err> {
                let (s, x, y) = (src.plan_img(), dx.plan_img(), dy.plan_img());
                self.enqueue(self.planner().sobel_u8(s, x, y, border)?)
            }

            /// 3 × 3 Sobel derivatives of an `f32` image, as
            /// `mvision_core::filter::sobel_f32`.
            ///
            /// Errors: as `sobel_u8`.
            pub fn sobel_f32(
                &self,
                src: &$img<f32>,
                dx: &mut $img<f32>,
                dy: &mut $img<f32>,
                border: $crate::__private::mvision_core::Border<f32>,
            ) -> ::core::result::Result<(), $err> {
                let (s, x, y) = (src.plan_img(), dx.plan_img(), dy.plan_img());
                self.enqueue(self.planner().sobel_f32(s, x, y, border)?)
            }

            /// The integral image `sum` and, if given, the squared integral image `sqsum` of a
            /// `u8` image, as `mvision_core::integral::integral_u8`: a look-back scan of one
            /// launch per table where the device allows it (`mvision_kernels::IntegralScan`),
            /// else a tiled scan in three launches (tile sums, carries, tiles; a fourth for the
            /// squares), both through the context's integral scratch, or, on a device too
            /// small for them, a scan of every row then a running sum down every column.
            ///
            /// Errors: `Invalid(SizeMismatch)` unless the tables are `(w + 1) × (h + 1)`;
            /// `Invalid(Overflow)` above `mvision_core::integral::MAX_INTEGRAL_PIXELS`
            /// pixels; driver errors (`OutOfDeviceMemory` when the scratch cannot grow).
            pub fn integral_u8(
                &self,
                src: &$img<u8>,
                sum: &mut $img<u32>,
                sqsum: ::core::option::Option<&mut $img<u64>>,
            ) -> ::core::result::Result<(), $err> {
                let sq = sqsum.map(|q| q.plan_img());
                let plan = self
                    .planner()
                    .integral_u8(src.plan_img(), sum.plan_img(), sq)?;
                let limit = self.integral_group_limit()?;
                if plan.tiled_group(limit).is_none() {
                    for launch in plan.launches(limit, ::core::option::Option::None) {
                        self.enqueue(launch)?;
                    }
                    return ::core::result::Result::Ok(());
                }
                // Held until the launches are queued: another thread's integral cannot
                // grow (free) the scratch or interleave its own passes with these.
                let scratch = self.integral_scratch(plan.scratch(limit))?;
                for launch in plan.launches(limit, ::core::option::Option::Some(scratch.bufs())) {
                    self.enqueue(launch)?;
                }
                ::core::result::Result::Ok(())
            }

            /// One Gaussian pyramid level down of a `u8` image, as
            /// `mvision_core::pyramid::pyr_down_u8`.
            ///
            /// Errors: `Invalid(SizeMismatch)` unless `dst` is
            /// `mvision_core::pyramid::pyr_down_size` of `src`; driver errors.
            pub fn pyr_down_u8(
                &self,
                src: &$img<u8>,
                dst: &mut $img<u8>,
                border: $crate::__private::mvision_core::Border<u8>,
            ) -> ::core::result::Result<(), $err> {
                let (s, d) = (src.plan_img(), dst.plan_img());
                self.enqueue(self.planner().pyr_down_u8(s, d, border)?)
            }

            /// One Gaussian pyramid level down of an `f32` image, as
            /// `mvision_core::pyramid::pyr_down_f32`.
            ///
            /// Errors: as `pyr_down_u8`.
            pub fn pyr_down_f32(
                &self,
                src: &$img<f32>,
                dst: &mut $img<f32>,
                border: $crate::__private::mvision_core::Border<f32>,
            ) -> ::core::result::Result<(), $err> {
                let (s, d) = (src.plan_img(), dst.plan_img());
                self.enqueue(self.planner().pyr_down_f32(s, d, border)?)
            }

            /// Bilinear resize of a `u8` image to `dst`'s size (pixel-centre aligned, Q11
            /// coordinates), as `mvision_core::resize::resize_bilinear_u8`.
            ///
            /// Errors: driver errors only (any two sizes are a valid resize).
            pub fn resize_bilinear_u8(
                &self,
                src: &$img<u8>,
                dst: &mut $img<u8>,
            ) -> ::core::result::Result<(), $err> {
                let (s, d) = (src.plan_img(), dst.plan_img());
                self.enqueue(self.planner().resize_bilinear_u8(s, d)?)
            }

            /// Bilinear resize of an `f32` image to `dst`'s size, as
            /// `mvision_core::resize::resize_bilinear_f32`.
            ///
            /// Errors: as `resize_bilinear_u8`.
            pub fn resize_bilinear_f32(
                &self,
                src: &$img<f32>,
                dst: &mut $img<f32>,
            ) -> ::core::result::Result<(), $err> {
                let (s, d) = (src.plan_img(), dst.plan_img());
                self.enqueue(self.planner().resize_bilinear_f32(s, d)?)
            }
        }
    };
}

/// Defines the accessors of a driver's device images that do not depend on where the pixels
/// live: `DeviceImage::{width, height, size, len, is_empty}` and `MappedImage::{view,
/// view_mut}`. Expand it once in the driver module that defines both types:
///
/// ```text
/// mvision_kernels::device_image_accessors!(DeviceImage, MappedImage);
/// ```
///
/// The driver provides: fields `width` and `height` (`usize`) of `DeviceImage<T>`; a field
/// `image: &mut DeviceImage<T>` and methods `as_slice(&self) -> &[T]` and
/// `as_mut_slice(&mut self) -> &mut [T]` (the `width · height` packed pixels) of
/// `MappedImage<'_, T>`.
#[macro_export]
macro_rules! device_image_accessors {
    ($img:ident, $mapped:ident) => {
        impl<T: $crate::__private::mvision_core::Pixel> $img<T> {
            /// Width in pixels.
            pub fn width(&self) -> usize {
                self.width
            }

            /// Height in pixels.
            pub fn height(&self) -> usize {
                self.height
            }

            /// `(width, height)` in pixels.
            pub fn size(&self) -> (usize, usize) {
                (self.width, self.height)
            }

            /// Number of pixels (`width · height`: rows are packed, the row pitch is the width).
            pub fn len(&self) -> usize {
                self.width * self.height
            }

            /// Always false: images have at least one pixel (present for symmetry with `len`).
            pub fn is_empty(&self) -> bool {
                false
            }
        }

        impl<T: $crate::__private::mvision_core::Pixel> $mapped<'_, T> {
            /// A packed read-only view of the pixels.
            pub fn view(&self) -> $crate::__private::mvision_core::ImageView<'_, T> {
                let (w, h) = self.image.size();
                $crate::__private::mvision_core::ImageView::packed(self.as_slice(), w, h)
                    .expect("a mapped image holds w·h > 0 pixels")
            }

            /// A packed writable view of the pixels.
            pub fn view_mut(&mut self) -> $crate::__private::mvision_core::ImageViewMut<'_, T> {
                let (w, h) = self.image.size();
                $crate::__private::mvision_core::ImageViewMut::packed(self.as_mut_slice(), w, h)
                    .expect("a mapped image holds w·h > 0 pixels")
            }
        }
    };
}

/// Implements what every driver's `Error` (`kernels/SPEC.md`: `Unavailable`, `Device { call,
/// code }`, `KernelBuild`, `OutOfDeviceMemory`, `Invalid(mvision_core::Error)`) converts from
/// and reports as its source, identically in both drivers: `std::error::Error` (the source of
/// `Invalid` is the core's error), `From<mvision_core::Error>` (as `Invalid`) and
/// `From<PlanError>` (a [`Refusal`](crate::plan::Refusal) becomes `Device` with the API's
/// `refused_code` and the refusal's words for `backend`). Each driver writes its own `Display`.
///
/// ```text
/// mvision_kernels::driver_error_conversions!(Error, Backend::OpenCl, CL_INVALID_WORK_GROUP_SIZE);
/// ```
#[macro_export]
macro_rules! driver_error_conversions {
    ($err:ident, $backend:expr, $refused_code:expr) => {
        impl ::std::error::Error for $err {
            fn source(&self) -> ::core::option::Option<&(dyn ::std::error::Error + 'static)> {
                match self {
                    $err::Invalid(e) => ::core::option::Option::Some(e),
                    _ => ::core::option::Option::None,
                }
            }
        }

        impl ::core::convert::From<$crate::__private::mvision_core::Error> for $err {
            fn from(e: $crate::__private::mvision_core::Error) -> Self {
                $err::Invalid(e)
            }
        }

        impl ::core::convert::From<$crate::plan::PlanError> for $err {
            fn from(e: $crate::plan::PlanError) -> Self {
                match e {
                    $crate::plan::PlanError::Invalid(e) => $err::Invalid(e),
                    $crate::plan::PlanError::Refused(r) => $err::Device {
                        call: r.what($backend),
                        code: $refused_code,
                    },
                }
            }
        }
    };
}
