//! Reading the pieces of an ONNX protobuf message that the converter needs: tensor data
//! (`TensorProto`, inline only), node attributes, and value shapes. Nothing here panics on
//! malformed input; the generated `onnx-protobuf` helpers that can (`as_value`) are not used.

use crate::ConvertError;
use onnx_protobuf::{AttributeProto, Message, NodeProto, TensorProto, ValueInfoProto};

/// ONNX `TensorProto.DataType` codes used here.
pub(crate) const FLOAT: i32 = 1;
const INT32: i32 = 6;
const INT64: i32 = 7;
/// `TensorProto.DataLocation.EXTERNAL`.
const EXTERNAL: i32 = 1;

/// The data of a constant tensor.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Data {
    /// `float` values.
    F(Vec<f32>),
    /// `int64` / `int32` values.
    I(Vec<i64>),
}

impl Data {
    pub(crate) fn len(&self) -> usize {
        match self {
            Data::F(v) => v.len(),
            Data::I(v) => v.len(),
        }
    }
}

fn invalid(at: &str, reason: impl Into<String>) -> ConvertError {
    ConvertError::Invalid {
        at: at.to_string(),
        reason: reason.into(),
    }
}

/// The dimensions of `t` (each ≥ 0) and its data, checked against each other.
///
/// # Errors
/// [`ConvertError::ExternalData`], [`ConvertError::NonFloat`] for types other than float /
/// int32 / int64, [`ConvertError::Invalid`] for negative dimensions or a data length other
/// than the dimensions' product.
pub(crate) fn tensor_data(t: &TensorProto) -> Result<(Vec<usize>, Data), ConvertError> {
    let name = t.name.as_str();
    if t.data_location.value() == EXTERNAL || !t.external_data.is_empty() {
        return Err(ConvertError::ExternalData {
            name: name.to_string(),
        });
    }
    let mut dims = Vec::with_capacity(t.dims.len());
    let mut count = 1usize;
    for &d in &t.dims {
        let d = usize::try_from(d).map_err(|_| invalid(name, "negative dimension"))?;
        count = count
            .checked_mul(d)
            .ok_or_else(|| invalid(name, "element count overflows"))?;
        dims.push(d);
    }
    let raw = &t.raw_data;
    let data = match t.data_type {
        FLOAT if !raw.is_empty() => Data::F(
            raw.chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ),
        FLOAT => Data::F(t.float_data.clone()),
        INT64 if !raw.is_empty() => Data::I(
            raw.chunks_exact(8)
                .map(|b| i64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
                .collect(),
        ),
        INT64 => Data::I(t.int64_data.clone()),
        INT32 if !raw.is_empty() => Data::I(
            raw.chunks_exact(4)
                .map(|b| i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])))
                .collect(),
        ),
        INT32 => Data::I(t.int32_data.iter().map(|&v| i64::from(v)).collect()),
        other => {
            return Err(ConvertError::NonFloat {
                name: name.to_string(),
                data_type: other,
            })
        }
    };
    let elem = if t.data_type == INT64 { 8 } else { 4 };
    if (!raw.is_empty() && raw.len() != count * elem) || data.len() != count {
        return Err(invalid(
            name,
            format!("{} values for dimensions {dims:?}", data.len()),
        ));
    }
    Ok((dims, data))
}

/// A serialized `TensorProto` (an ONNX test's `input_0.pb`, say) as its name, dimensions and
/// `float` values.
///
/// # Errors
/// [`ConvertError::Parse`] if `bytes` is not a `TensorProto`; [`ConvertError::NonFloat`] if
/// it does not hold `float` values; those of reading its data (external data, a length that
/// contradicts the dimensions).
pub fn read_tensor(bytes: &[u8]) -> Result<(String, Vec<usize>, Vec<f32>), ConvertError> {
    let t = TensorProto::parse_from_bytes(bytes).map_err(|e| ConvertError::Parse(e.to_string()))?;
    match tensor_data(&t)? {
        (dims, Data::F(v)) => Ok((t.name.clone(), dims, v)),
        _ => Err(ConvertError::NonFloat {
            name: t.name.clone(),
            data_type: t.data_type,
        }),
    }
}

/// The fixed dimensions of a graph input, a symbolic or unknown first dimension replaced by
/// `batch` when given.
pub(crate) fn input_dims(
    v: &ValueInfoProto,
    batch: Option<usize>,
) -> Result<Vec<usize>, ConvertError> {
    use onnx_protobuf::tensor_shape_proto::dimension::Value as Dim;
    use onnx_protobuf::type_proto::Value as Ty;
    let name = v.name.clone();
    let Some(Ty::TensorType(t)) = v.type_.as_ref().and_then(|t| t.value.as_ref()) else {
        return Err(invalid(&name, "graph input is not a tensor"));
    };
    if t.elem_type != FLOAT {
        return Err(ConvertError::NonFloat {
            name,
            data_type: t.elem_type,
        });
    }
    let Some(shape) = t.shape.as_ref() else {
        return Err(ConvertError::DynamicShape { name, dim: 0 });
    };
    let mut dims = Vec::new();
    for (i, d) in shape.dim.iter().enumerate() {
        let fixed = match &d.value {
            Some(Dim::DimValue(v)) if *v > 0 => Some(*v as usize),
            _ => None,
        };
        match (fixed, i, batch) {
            (Some(v), _, _) => dims.push(v),
            (None, 0, Some(b)) => dims.push(b),
            _ => return Err(ConvertError::DynamicShape { name, dim: i }),
        }
    }
    Ok(dims)
}

/// The attributes of one node, looked up by name.
pub(crate) struct Attrs<'a> {
    list: &'a [AttributeProto],
    at: String,
}

impl<'a> Attrs<'a> {
    pub(crate) fn new(node: &'a NodeProto, at: &str) -> Self {
        Self {
            list: &node.attribute,
            at: at.to_string(),
        }
    }

    fn get(&self, name: &str) -> Option<&'a AttributeProto> {
        self.list.iter().find(|a| a.name == name)
    }

    pub(crate) fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub(crate) fn int(&self, name: &str, default: i64) -> i64 {
        self.get(name).map_or(default, |a| a.i)
    }

    pub(crate) fn float(&self, name: &str, default: f32) -> f32 {
        self.get(name).map_or(default, |a| a.f)
    }

    pub(crate) fn ints(&self, name: &str) -> Option<&'a [i64]> {
        self.get(name).map(|a| a.ints.as_slice())
    }

    pub(crate) fn floats(&self, name: &str) -> Option<&'a [f32]> {
        self.get(name).map(|a| a.floats.as_slice())
    }

    pub(crate) fn string(&self, name: &str, default: &str) -> Result<String, ConvertError> {
        match self.get(name) {
            None => Ok(default.to_string()),
            Some(a) => String::from_utf8(a.s.clone())
                .map_err(|_| invalid(&self.at, format!("attribute {name} is not UTF-8"))),
        }
    }

    pub(crate) fn tensor(&self, name: &str) -> Option<&'a TensorProto> {
        self.get(name).and_then(|a| a.t.as_ref())
    }

    /// A list of non-negative sizes (`kernel_shape`, `strides`…), `default` when absent.
    pub(crate) fn sizes(&self, name: &str, default: &[usize]) -> Result<Vec<usize>, ConvertError> {
        match self.ints(name) {
            None => Ok(default.to_vec()),
            Some(v) => v
                .iter()
                .map(|&x| {
                    usize::try_from(x).map_err(|_| {
                        invalid(&self.at, format!("attribute {name} has a negative value"))
                    })
                })
                .collect(),
        }
    }
}
