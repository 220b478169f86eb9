//! [`ModelFile`]: a `.mvnn` file's bytes held in a 16-byte aligned buffer, as
//! [`Model::parse`] needs them (4-byte alignment at least; 16 lets the weights be read with
//! vector loads). On Linux the buffer's whole 2 MiB pages are asked to be transparent huge
//! pages before the bytes are copied in (`mvision_core::nn::model::advise_huge_pages`).

use std::path::Path;

use mvision_core::nn::model::Model;

use crate::ConvertError;

/// An owned copy of a model file in 16-byte aligned memory.
#[derive(Clone, Debug, Default)]
pub struct ModelFile {
    words: Vec<u128>,
    len: usize,
}

impl ModelFile {
    /// Copies `bytes` (a whole model file) into an aligned buffer.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        let mut words = vec![0u128; bytes.len().div_ceil(16)];
        mvision_core::nn::model::advise_huge_pages(&mut words);
        bytemuck::cast_slice_mut::<u128, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
        Self {
            words,
            len: bytes.len(),
        }
    }

    /// Reads the file at `path`.
    ///
    /// # Errors
    /// [`ConvertError::Io`] if it cannot be read.
    pub fn read(path: impl AsRef<Path>) -> Result<Self, ConvertError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path)
            .map_err(|e| ConvertError::Io(format!("cannot read {}: {e}", path.display())))?;
        Ok(Self::from_bytes(&bytes))
    }

    /// The file's bytes (16-byte aligned).
    pub fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice::<u128, u8>(&self.words)[..self.len]
    }

    /// The model, viewed in place and fully validated ([`Model::parse`]).
    ///
    /// # Errors
    /// Those of [`Model::parse`] (a truncated or corrupt file, another format version…).
    pub fn model(&self) -> Result<Model<'_>, mvision_core::Error> {
        Model::parse(self.bytes())
    }
}
