//! What can go wrong while converting an ONNX model: one enum whose messages name the model's
//! own operators, nodes and tensors, so a user can see what to change.

use std::fmt;

/// Why [`convert`](crate::convert) (or reading a model file) failed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ConvertError {
    /// The bytes are not a protobuf-encoded ONNX model (truncated, garbage, no graph).
    Parse(String),
    /// The model uses operators the engine does not have: every such operator type, sorted,
    /// and the names of the nodes using them (in model order).
    UnsupportedOps {
        /// Operator types (with their domain when not the default one).
        ops: Vec<String>,
        /// Names of the nodes using them (`#k` for a nameless node `k`).
        nodes: Vec<String>,
    },
    /// A supported operator used in a way the engine does not support (a 3-D convolution, a
    /// transposed dynamic operand, padding of the channel axis…).
    Unsupported {
        /// The node's name (`#k` if it has none).
        node: String,
        /// Its operator type.
        op: String,
        /// What is not supported.
        reason: String,
    },
    /// A graph input with a symbolic, unknown or non-positive dimension (fix a symbolic batch
    /// dimension with [`ConvertOptions::batch`](crate::ConvertOptions::batch)).
    DynamicShape {
        /// The tensor's name.
        name: String,
        /// Index of the offending dimension.
        dim: usize,
    },
    /// A tensor of more than 4 dimensions (the engine's tensors are NCHW).
    Rank {
        /// The tensor's name.
        name: String,
        /// Its rank.
        rank: usize,
    },
    /// A tensor of a type other than `float` (or `int64` / `int32` for shapes and axes).
    NonFloat {
        /// The tensor's name.
        name: String,
        /// ONNX `TensorProto.DataType` code.
        data_type: i32,
    },
    /// A tensor whose data lives in an external file (not supported: pass one file).
    ExternalData {
        /// The tensor's name.
        name: String,
    },
    /// A node reads a tensor that no earlier node, input or initializer defines.
    MissingValue {
        /// The tensor's name.
        name: String,
    },
    /// A malformed model: attributes, shapes or data that contradict the ONNX specification.
    Invalid {
        /// Where (node or tensor name).
        at: String,
        /// What is wrong.
        reason: String,
    },
    /// The core rejected the converted graph or could not encode it.
    Core {
        /// What was being done.
        context: String,
        /// The core's error.
        error: mvision_core::Error,
    },
    /// Reading a file failed.
    Io(String),
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConvertError::Parse(m) => write!(f, "not a valid ONNX model: {m}"),
            ConvertError::UnsupportedOps { ops, nodes } => write!(
                f,
                "unsupported ONNX operators: {} (nodes {})",
                ops.join(", "),
                nodes.join(", ")
            ),
            ConvertError::Unsupported { node, op, reason } => {
                write!(f, "node {node} ({op}): unsupported: {reason}")
            }
            ConvertError::DynamicShape { name, dim } => write!(
                f,
                "input {name}: dimension {dim} is not a fixed positive size \
                 (a symbolic batch dimension can be fixed with --batch)"
            ),
            ConvertError::Rank { name, rank } => {
                write!(
                    f,
                    "tensor {name} has {rank} dimensions; at most 4 are supported"
                )
            }
            ConvertError::NonFloat { name, data_type } => write!(
                f,
                "tensor {name} has ONNX data type {data_type}; only float tensors (and int64/int32 \
                 constants for shapes and axes) are supported"
            ),
            ConvertError::ExternalData { name } => write!(
                f,
                "tensor {name} stores its data in an external file, which is not supported"
            ),
            ConvertError::MissingValue { name } => {
                write!(f, "tensor {name} is read but never defined")
            }
            ConvertError::Invalid { at, reason } => write!(f, "{at}: invalid model: {reason}"),
            ConvertError::Core { context, error } => write!(f, "{context}: {error}"),
            ConvertError::Io(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ConvertError {}
