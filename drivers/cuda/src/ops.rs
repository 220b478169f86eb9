//! The image operations of [`Context`] (`filter2d_u8` … `resize_bilinear_f32`), generated from
//! the plans of `mvision_kernels` by its `device_ops!` macro, as in the OpenCL driver: the
//! checks, argument lists and launch geometry are written once there, and this driver supplies
//! only `Context::enqueue` and the other hooks the macro names.

use crate::{Context, DeviceImage, Error};

mvision_kernels::device_ops!(Context, DeviceImage, Error);
