//! Pixel element types that image views may hold.
//!
//! The set is closed (sealed trait): `u8`, `u16`, `i16`, `u32`, `u64` and `f32`, one channel per
//! element. [`PixelFormat`] names them at run time, for the C API and the CLI.

/// A pixel format tag, the run-time name of a [`Pixel`] type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PixelFormat {
    /// 8-bit unsigned.
    U8,
    /// 16-bit unsigned.
    U16,
    /// 16-bit signed (Sobel derivatives).
    I16,
    /// 32-bit unsigned (integral images).
    U32,
    /// 64-bit unsigned (squared integral images).
    U64,
    /// 32-bit IEEE float.
    F32,
}

impl PixelFormat {
    /// Size of one element in bytes.
    pub const fn bytes(self) -> usize {
        match self {
            PixelFormat::U8 => 1,
            PixelFormat::U16 | PixelFormat::I16 => 2,
            PixelFormat::U32 | PixelFormat::F32 => 4,
            PixelFormat::U64 => 8,
        }
    }

    /// Lower-case name (`"u8"`, `"f32"`…).
    pub const fn name(self) -> &'static str {
        match self {
            PixelFormat::U8 => "u8",
            PixelFormat::U16 => "u16",
            PixelFormat::I16 => "i16",
            PixelFormat::U32 => "u32",
            PixelFormat::U64 => "u64",
            PixelFormat::F32 => "f32",
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// An element type an image view may hold. Sealed: implemented for the six formats only.
pub trait Pixel: sealed::Sealed + Copy + Default + PartialEq + core::fmt::Debug + 'static {
    /// The run-time tag of this type.
    const FORMAT: PixelFormat;
}

macro_rules! pixel {
    ($t:ty, $f:ident) => {
        impl sealed::Sealed for $t {}
        impl Pixel for $t {
            const FORMAT: PixelFormat = PixelFormat::$f;
        }
    };
}
pixel!(u8, U8);
pixel!(u16, U16);
pixel!(i16, I16);
pixel!(u32, U32);
pixel!(u64, U64);
pixel!(f32, F32);
