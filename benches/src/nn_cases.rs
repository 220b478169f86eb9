//! The CNN benchmark catalogue: GEMM shapes (square 256…2048 and the seven FastPoorNet conv
//! GEMMs of seed 000) with every GEMM variant of the core, and conv2d shapes (seed 004's nine
//! single-channel shapes and the FastPoorNet conv layers) with every method, each made ready to
//! run with its buffers allocated up front. Shared by `benches/gemm.rs` (criterion) and
//! `examples/nn_bench.rs` (the JSON that `bench/gemm_compare.py` sets beside numpy/OpenBLAS).

use mvision_core::nn::conv::{
    blocked_prepare_weights, blocked_weights_len, blocked_workspace_len, conv2d,
    conv2d_blocked_prepared, conv2d_winograd_prepared, mfca_best_m, winograd_prepare_weights,
    winograd_prepared_workspace_len, winograd_weights_len, workspace_len, Conv2dShape, ConvMethod,
};
use mvision_core::nn::gemm::{
    gemm_pack_len, sgemm, sgemm_naive, sgemm_portable, sgemm_tiled32, tiled32_work_len, Order,
    Transpose,
};
use mvision_core::nn::plan::{page_align_slack, page_aligned};
use mvision_core::rng::SplitMix64;
use mvision_core::Result;

/// Square GEMM sizes `n × n × n`.
pub const SQUARE: [usize; 4] = [256, 512, 1024, 2048];

/// FastPoorNet's conv GEMMs (M = output pixels, N = filters, K = C·kh·kw), seed 000.
pub const FASTPOORNET: [(usize, usize, usize); 7] = [
    (2916, 64, 363),
    (625, 192, 576),
    (144, 96, 1728),
    (144, 160, 864),
    (144, 144, 1440),
    (144, 160, 1296),
    (144, 256, 1440),
];

/// Every GEMM shape measured, `(m, n, k)`.
pub fn gemm_shapes() -> Vec<(usize, usize, usize)> {
    let mut v: Vec<_> = SQUARE.iter().map(|&s| (s, s, s)).collect();
    v.extend_from_slice(&FASTPOORNET);
    v
}

/// A GEMM implementation of the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GemmVariant {
    /// `sgemm`, row-major, no transposes (with the `gemm-crate` feature, large products run in
    /// the `gemm` crate).
    Sgemm,
    /// `sgemm_portable`: the portable packed kernel, even with the `gemm-crate` feature.
    Portable,
    /// `sgemm_naive` (seed 001's first kernel).
    Naive,
    /// `sgemm_tiled32` (seed 000's 32×32 tiles over zero-padded inputs).
    Tiled32,
}

impl GemmVariant {
    /// Name in tables and JSON.
    pub fn id(self) -> &'static str {
        match self {
            GemmVariant::Sgemm => {
                if cfg!(feature = "gemm-crate") {
                    "sgemm+gemm-crate"
                } else {
                    "sgemm"
                }
            }
            GemmVariant::Portable => "sgemm-portable",
            GemmVariant::Naive => "naive",
            GemmVariant::Tiled32 => "tiled32",
        }
    }
}

/// One GEMM ready to run: random `A`, `B` in `[-1, 1)`, all buffers allocated.
pub struct GemmCase {
    /// Rows of C.
    pub m: usize,
    /// Columns of C.
    pub n: usize,
    /// Inner dimension.
    pub k: usize,
    variant: GemmVariant,
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
    work: Vec<f32>,
}

/// `len` elements of a buffer from a page boundary, as `mv_net` and the CLI give a network's
/// arena, scratch and pre-transformed weights (`page_aligned`).
struct Lines {
    buf: Vec<f32>,
    at: usize,
    len: usize,
}

impl Lines {
    /// `values` copied to a cache-line boundary.
    fn from(values: &[f32]) -> Self {
        let len = values.len();
        let mut buf = vec![0.0; len + page_align_slack(len)];
        let base = buf.as_ptr() as usize;
        let at = (page_aligned(&mut buf, len)
            .expect("with the slack")
            .as_ptr() as usize
            - base)
            / 4;
        let mut lines = Self { buf, at, len };
        lines.get_mut().copy_from_slice(values);
        lines
    }

    /// `len` zeros.
    fn zeros(len: usize) -> Self {
        Self::from(&vec![0.0; len])
    }

    fn get(&self) -> &[f32] {
        &self.buf[self.at..][..self.len]
    }

    fn get_mut(&mut self) -> &mut [f32] {
        &mut self.buf[self.at..][..self.len]
    }
}

fn random(rng: &mut SplitMix64, len: usize) -> Vec<f32> {
    (0..len)
        .map(|_| (rng.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0)
        .collect()
}

impl GemmCase {
    /// Allocates and fills the operands.
    pub fn new(variant: GemmVariant, m: usize, n: usize, k: usize) -> Result<Self> {
        let mut rng = SplitMix64(0x6e6e_6265_6e63_6801);
        let work = match variant {
            GemmVariant::Sgemm | GemmVariant::Portable => gemm_pack_len(m, n, k),
            GemmVariant::Naive => 0,
            GemmVariant::Tiled32 => tiled32_work_len(m, n, k)?,
        };
        Ok(Self {
            m,
            n,
            k,
            variant,
            a: random(&mut rng, m * k),
            b: random(&mut rng, k * n),
            c: vec![0.0; m * n],
            work: vec![0.0; work],
        })
    }

    /// Floating-point operations of one run, `2·m·n·k`.
    pub fn flop(&self) -> u64 {
        2 * (self.m * self.n * self.k) as u64
    }

    /// Computes `C = A·B` once.
    pub fn run(&mut self) -> Result<()> {
        let (m, n, k) = (self.m, self.n, self.k);
        match self.variant {
            GemmVariant::Sgemm | GemmVariant::Portable => {
                let gemm = if self.variant == GemmVariant::Sgemm {
                    sgemm
                } else {
                    sgemm_portable
                };
                let (rm, no) = (Order::RowMajor, Transpose::No);
                gemm(
                    rm,
                    no,
                    no,
                    m,
                    n,
                    k,
                    1.0,
                    &self.a,
                    k,
                    &self.b,
                    n,
                    0.0,
                    &mut self.c,
                    n,
                    &mut self.work,
                )
            }
            GemmVariant::Naive => sgemm_naive(m, n, k, &self.a, &self.b, &mut self.c),
            GemmVariant::Tiled32 => {
                sgemm_tiled32(m, n, k, &self.a, &self.b, &mut self.c, &mut self.work)
            }
        }
    }
}

/// Seed 004's nine test shapes (input width, height, square kernel side): one input and one
/// output channel, stride 1, no padding, as in its memory formulas.
pub const SEED004: [(usize, usize, usize); 9] = [
    (227, 227, 11),
    (227, 227, 7),
    (24, 24, 3),
    (112, 112, 3),
    (56, 56, 3),
    (514, 514, 3),
    (720, 480, 5),
    (1920, 1080, 5),
    (7, 7, 3),
];

/// A labelled conv shape.
pub struct ConvShape {
    /// Name in tables and JSON.
    pub id: String,
    /// The geometry.
    pub shape: Conv2dShape,
}

/// The seed-004 shapes, then FastPoorNet's seven conv layers reconstructed from their GEMM
/// shapes (M = Oh·Ow, N = c_out, K = c_in·kh·kw): 224² × 3 → 64, 11×11 stride 4 (54²), then
/// 25² (64 → 192) and 12² layers of 3×3 with padding 1; then AlexNet's conv2..conv5.
pub fn conv_shapes() -> Vec<ConvShape> {
    let mut v: Vec<ConvShape> = SEED004
        .iter()
        .map(|&(w, h, k)| ConvShape {
            id: format!("{w}x{h}/{k}x{k}"),
            shape: Conv2dShape::new(1, 1, h, w, 1, k, k),
        })
        .collect();
    let mut first = Conv2dShape::new(1, 3, 224, 224, 64, 11, 11);
    first.stride_h = 4;
    first.stride_w = 4;
    v.push(ConvShape {
        id: "fpn1 3x224^2->64 11x11/4".into(),
        shape: first,
    });
    for (i, (hw, cin, cout)) in [
        (25, 64, 192),
        (12, 192, 96),
        (12, 96, 160),
        (12, 160, 144),
        (12, 144, 160),
        (12, 160, 256),
    ]
    .into_iter()
    .enumerate()
    {
        let mut s = Conv2dShape::new(1, cin, hw, hw, cout, 3, 3);
        s.pad_top = 1;
        s.pad_left = 1;
        s.pad_bottom = 1;
        s.pad_right = 1;
        v.push(ConvShape {
            id: format!("fpn{} {cin}x{hw}^2->{cout} 3x3", i + 2),
            shape: s,
        });
    }
    // AlexNet's conv2..conv5 (torchvision, 224×224, batch 1); conv1 (3 → 64, 11×11 stride 4,
    // padding 2: 55²) differs from FastPoorNet's first only by its padding and is left out here
    // (`mvision bench conv` runs all five).
    v.extend(alexnet_conv_shapes().into_iter().skip(1));
    v.extend(mobile_conv_shapes());
    v
}

/// Layers of MobileNetV2 and SqueezeNet 1.1 (torchvision, 224² input, batch 1): MobileNetV2's
/// depthwise 3×3 convolutions (padding 1, stride 1 and 2, 7² to 112² maps) and 1×1 expand /
/// project layers, SqueezeNet's first layer (3 → 64, 3×3 stride 2) and fire-module squeeze (1×1)
/// and expand (1×1 and 3×3) layers; then MobileNetV2's and ResNet-18's first layers and
/// ResNet-18's stride-1 3×3 and stride-2 layers.
pub fn mobile_conv_shapes() -> Vec<ConvShape> {
    let mut v = vec![];
    for (c, hw, stride) in [
        (32, 112, 1),
        (96, 112, 2),
        (144, 56, 1),
        (144, 56, 2),
        (192, 28, 1),
        (384, 14, 1),
        (576, 14, 2),
        (960, 7, 1),
    ] {
        let mut s = Conv2dShape::new(1, c, hw, hw, c, 3, 3);
        (s.groups, s.stride_h, s.stride_w) = (c, stride, stride);
        (s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) = (1, 1, 1, 1);
        let st = if stride == 1 {
            String::new()
        } else {
            format!("/{stride}")
        };
        v.push(ConvShape {
            id: format!("mbv2 dw {c}x{hw}^2 3x3{st}"),
            shape: s,
        });
    }
    for (net, c_in, hw, c_out) in [
        ("mbv2", 16, 112, 96),
        ("mbv2", 24, 56, 144),
        ("mbv2", 144, 56, 24),
        ("mbv2", 192, 28, 32),
        ("mbv2", 384, 14, 64),
        ("mbv2", 960, 7, 160),
        ("mbv2", 320, 7, 1280),
        ("sqz", 64, 55, 16),
        ("sqz", 16, 55, 64),
        ("sqz", 256, 27, 32),
        ("sqz", 48, 13, 192),
        ("sqz", 512, 13, 1000),
    ] {
        v.push(ConvShape {
            id: format!("{net} pw {c_in}x{hw}^2->{c_out} 1x1"),
            shape: Conv2dShape::new(1, c_in, hw, hw, c_out, 1, 1),
        });
    }
    for (c_in, hw, c_out) in [(16, 55, 64), (32, 27, 128), (48, 13, 192), (64, 13, 256)] {
        let mut e = Conv2dShape::new(1, c_in, hw, hw, c_out, 3, 3);
        (e.pad_top, e.pad_left, e.pad_bottom, e.pad_right) = (1, 1, 1, 1);
        v.push(ConvShape {
            id: format!("sqz expand3 {c_in}x{hw}^2->{c_out} 3x3"),
            shape: e,
        });
    }
    // SqueezeNet 1.1's first layer: 3 → 64, 3×3 stride 2, no padding (224² → 111²).
    let mut first = Conv2dShape::new(1, 3, 224, 224, 64, 3, 3);
    (first.stride_h, first.stride_w) = (2, 2);
    v.push(ConvShape {
        id: "sqz conv1 3x224^2->64 3x3/2".into(),
        shape: first,
    });
    // The other first layers with few input channels: MobileNetV2's 3 → 32 3×3 stride 2
    // padding 1, and ResNet-18's 3 → 64 7×7 stride 2 padding 3 (both 224² → 112²).
    for (net, c_out, k, pad) in [("mbv2", 32, 3, 1), ("rn18", 64, 7, 3)] {
        let mut s = Conv2dShape::new(1, 3, 224, 224, c_out, k, k);
        (s.stride_h, s.stride_w) = (2, 2);
        (s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) = (pad, pad, pad, pad);
        v.push(ConvShape {
            id: format!("{net} conv1 3x224^2->{c_out} {k}x{k}/2"),
            shape: s,
        });
    }
    // ResNet-18's stride-1 3×3 layers (padding 1), one per stage.
    for (c, hw) in [(64, 56), (128, 28), (256, 14), (512, 7)] {
        let mut s = Conv2dShape::new(1, c, hw, hw, c, 3, 3);
        (s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) = (1, 1, 1, 1);
        v.push(ConvShape {
            id: format!("rn18 {c}x{hw}^2 3x3"),
            shape: s,
        });
    }
    // ResNet-18's stride-2 layers: 3×3 padding 1 and the 1×1 shortcuts beside them.
    for (c_in, hw, k, pad) in [
        (64, 56, 3, 1),
        (128, 28, 3, 1),
        (256, 14, 3, 1),
        (64, 56, 1, 0),
        (128, 28, 1, 0),
        (256, 14, 1, 0),
    ] {
        let (c_out, o) = (2 * c_in, hw / 2);
        let mut s = Conv2dShape::new(1, c_in, hw, hw, c_out, k, k);
        (s.stride_h, s.stride_w) = (2, 2);
        (s.pad_top, s.pad_left, s.pad_bottom, s.pad_right) = (pad, pad, pad, pad);
        v.push(ConvShape {
            id: format!("rn18 s2 {c_in}x{hw}^2->{c_out}x{o}^2 {k}x{k}/2"),
            shape: s,
        });
    }
    v
}

/// AlexNet's five convolutions (torchvision's topology, batch 1, 224² input): conv1 3 → 64
/// 11×11 stride 4 padding 2 (55²); conv2 64 → 192 5×5 padding 2 on 27²; conv3 192 → 384,
/// conv4 384 → 256, conv5 256 → 256, 3×3 padding 1 on 13².
pub fn alexnet_conv_shapes() -> Vec<ConvShape> {
    let layer = |c_in, hw, c_out, k, stride, pad| {
        let mut s = Conv2dShape::new(1, c_in, hw, hw, c_out, k, k);
        s.stride_h = stride;
        s.stride_w = stride;
        s.pad_top = pad;
        s.pad_left = pad;
        s.pad_bottom = pad;
        s.pad_right = pad;
        s
    };
    [
        (3, 224, 64, 11, 4, 2),
        (64, 27, 192, 5, 1, 2),
        (192, 13, 384, 3, 1, 1),
        (384, 13, 256, 3, 1, 1),
        (256, 13, 256, 3, 1, 1),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (c_in, hw, c_out, k, stride, pad))| ConvShape {
        id: if stride == 1 {
            format!("alexnet{} {c_in}x{hw}^2->{c_out} {k}x{k}", i + 1)
        } else {
            format!("alexnet{} {c_in}x{hw}^2->{c_out} {k}x{k}/{stride}", i + 1)
        },
        shape: layer(c_in, hw, c_out, k, stride, pad),
    })
    .collect()
}

/// The methods measured on `shape`: direct, im2col, MEC, MFCA with the paper's `m`, and
/// Winograd where it applies (3×3, stride 1, dilation 1).
pub fn conv_methods(shape: &Conv2dShape) -> Result<Vec<ConvMethod>> {
    let mut v = vec![
        ConvMethod::Direct,
        ConvMethod::Im2col,
        ConvMethod::Mec,
        ConvMethod::Mfca {
            m: mfca_best_m(shape)?,
        },
    ];
    if workspace_len(ConvMethod::Winograd, shape).is_ok() {
        v.push(ConvMethod::Winograd);
    }
    v.push(ConvMethod::Blocked);
    Ok(v)
}

/// Every case measured on `shape`: each of [`conv_methods`], then, where Winograd applies,
/// Winograd on pre-transformed weights ([`ConvCase::winograd_prepared`]), the path a network
/// runs when it keeps them.
pub fn conv_cases(shape: &Conv2dShape) -> Result<Vec<ConvCase>> {
    let mut v = conv_methods(shape)?
        .into_iter()
        .map(|m| ConvCase::new(m, *shape))
        .collect::<Result<Vec<_>>>()?;
    if winograd_weights_len(shape).is_ok() {
        v.push(ConvCase::winograd_prepared(*shape)?);
    }
    v.push(ConvCase::blocked_prepared(*shape)?);
    Ok(v)
}

/// One convolution ready to run.
pub struct ConvCase {
    /// The method.
    pub method: ConvMethod,
    /// The geometry.
    pub shape: Conv2dShape,
    x: Lines,
    w: Vec<f32>,
    y: Lines,
    ws: Lines,
    /// Winograd or blocked weights transformed once, outside the timed runs
    /// (`winograd_prepared`, `blocked_prepared`).
    prepared: Option<Lines>,
}

impl ConvCase {
    /// Allocates input, weights, output and the method's workspace.
    pub fn new(method: ConvMethod, shape: Conv2dShape) -> Result<Self> {
        let d = shape.dims()?;
        let mut rng = SplitMix64(0x6e6e_6265_6e63_6802);
        Ok(Self {
            method,
            shape,
            x: Lines::from(&random(&mut rng, d.input_len)),
            w: random(&mut rng, d.weight_len),
            y: Lines::zeros(d.output_len),
            ws: Lines::zeros(workspace_len(method, &shape)?),
            prepared: None,
        })
    }

    /// Winograd on weights transformed once here (not timed): [`ConvCase::run`] calls
    /// `conv2d_winograd_prepared`, and the workspace excludes the prepared weights.
    pub fn winograd_prepared(shape: Conv2dShape) -> Result<Self> {
        let mut case = Self::new(ConvMethod::Winograd, shape)?;
        let mut prepared = vec![0.0; winograd_weights_len(&shape)?];
        winograd_prepare_weights(&shape, &case.w, &mut prepared)?;
        case.ws = Lines::zeros(winograd_prepared_workspace_len(&shape)?);
        case.prepared = Some(Lines::from(&prepared));
        Ok(case)
    }

    /// Blocked on weights re-laid out once here (not timed): [`ConvCase::run`] calls
    /// `conv2d_blocked_prepared`, and the workspace excludes the prepared weights.
    pub fn blocked_prepared(shape: Conv2dShape) -> Result<Self> {
        let mut case = Self::new(ConvMethod::Blocked, shape)?;
        let mut prepared = vec![0.0; blocked_weights_len(&shape)?];
        blocked_prepare_weights(&shape, &case.w, &mut prepared)?;
        case.ws = Lines::zeros(blocked_workspace_len(&shape)?);
        case.prepared = Some(Lines::from(&prepared));
        Ok(case)
    }

    /// The method's name as the benches print it: `ConvMethod`'s `Debug`, or
    /// `WinogradPrepared` for [`ConvCase::winograd_prepared`].
    pub fn label(&self) -> String {
        match self.prepared {
            Some(_) => format!("{:?}Prepared", self.method),
            None => format!("{:?}", self.method),
        }
    }

    /// Bytes of pre-transformed weights kept outside the workspace (0 unless prepared).
    pub fn prepared_bytes(&self) -> usize {
        self.prepared.as_ref().map_or(0, |p| p.len * 4)
    }

    /// Workspace in bytes.
    pub fn workspace_bytes(&self) -> usize {
        self.ws.len * 4
    }

    /// Multiply-adds of one run, counted as 2 flops each.
    pub fn flop(&self) -> u64 {
        let d = self.shape.dims().expect("validated");
        2 * (d.output_len * d.k) as u64
    }

    /// Computes the convolution once.
    pub fn run(&mut self) -> Result<()> {
        let (x, y, ws) = (self.x.get(), self.y.get_mut(), self.ws.get_mut());
        match (&self.prepared, self.method) {
            (Some(p), ConvMethod::Blocked) => {
                conv2d_blocked_prepared(&self.shape, x, p.get(), None, y, ws)
            }
            (Some(p), _) => conv2d_winograd_prepared(&self.shape, x, p.get(), None, y, ws),
            (None, m) => conv2d(m, &self.shape, x, &self.w, None, y, ws),
        }
    }
}
