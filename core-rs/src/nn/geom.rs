//! Public geometry of convolutions and pooling windows (im2col index maps), shared by the
//! float, plaintext fixed-point and secure evaluators. Activations are per sample, channel-major
//! (CHW, ONNX's NCHW without the batch axis).

/// Most values a layer may ask for per sample: its input and output activations, the im2col patch
/// matrix of a convolution and the expanded weights of a grouped one, or a pooling layer's
/// windows. The shipped models stay below 2^20 (VGG16's largest im2col matrix is 2^16·27); the
/// cap keeps a crafted model file (kernels, pads and strides are attacker-chosen) from asking for
/// terabytes or overflowing an index product.
pub const MAX_LAYER_VALUES: usize = 1 << 28;

/// The product of `factors` when it exists and is at most [`MAX_LAYER_VALUES`].
fn capped(factors: &[usize]) -> Option<usize> {
    factors.iter().try_fold(1usize, |a, &f| a.checked_mul(f)).filter(|&n| n <= MAX_LAYER_VALUES)
}

/// Output positions along one axis (`(size + pad_lo + pad_hi − kernel) / stride + 1`), when the
/// kernel fits the padded size without overflow.
fn positions_along(size: usize, pad: [usize; 2], kernel: usize, stride: usize) -> Option<usize> {
    let padded = size.checked_add(pad[0])?.checked_add(pad[1])?;
    (kernel > 0 && stride > 0 && padded >= kernel).then(|| (padded - kernel) / stride + 1)
}

/// A 2-D convolution's geometry (dilation 1; `groups` splits the channels as in ONNX: output
/// channel `o` reads input channels `(o / (out_c/groups))·(in_c/groups) ..` of its group only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvGeom {
    /// Input channels.
    pub in_c: usize,
    /// Input height.
    pub in_h: usize,
    /// Input width.
    pub in_w: usize,
    /// Output channels.
    pub out_c: usize,
    /// Kernel height and width.
    pub kernel: [usize; 2],
    /// Strides (height, width).
    pub stride: [usize; 2],
    /// Zero padding: top, left, bottom, right (ONNX order).
    pub pads: [usize; 4],
    /// Channel groups (1: an ordinary convolution; `in_c`: depthwise).
    pub groups: usize,
}

impl ConvGeom {
    /// Output height.
    pub fn out_h(&self) -> usize {
        (self.in_h + self.pads[0] + self.pads[2] - self.kernel[0]) / self.stride[0] + 1
    }

    /// Output width.
    pub fn out_w(&self) -> usize {
        (self.in_w + self.pads[1] + self.pads[3] - self.kernel[1]) / self.stride[1] + 1
    }

    /// Values per input sample.
    pub fn in_len(&self) -> usize {
        self.in_c * self.in_h * self.in_w
    }

    /// Output positions per channel.
    pub fn positions(&self) -> usize {
        self.out_h() * self.out_w()
    }

    /// Values per output sample.
    pub fn out_len(&self) -> usize {
        self.out_c * self.positions()
    }

    /// Weights per output channel: the values of one patch within a group
    /// (`in_c / groups · kh · kw`).
    pub fn patch_len(&self) -> usize {
        self.in_c / self.groups.max(1) * self.kernel[0] * self.kernel[1]
    }

    /// Values of one patch over all input channels: the inner dimension of the im2col product
    /// (equal to [`ConvGeom::patch_len`] when `groups` is 1).
    pub fn full_patch_len(&self) -> usize {
        self.in_c * self.kernel[0] * self.kernel[1]
    }

    /// For a grouped convolution, the `full_patch_len × out_c` (row-major) weight matrix of
    /// the im2col product as indices into the compact weights (`patch_len × out_c`, row-major),
    /// `None` where an input channel is outside the output channel's group (a public zero).
    /// `None` for `groups` = 1, where the compact matrix is already the full one.
    ///
    /// The secure backends multiply by this block-diagonal matrix: the online communication is
    /// that of the convolution's outputs whatever the groups, the local work is `groups` times
    /// that of the compact product (a depthwise layer of C channels costs C times its weights).
    pub fn grouped_weight_index(&self) -> Option<Vec<Option<usize>>> {
        if self.groups <= 1 {
            return None;
        }
        // `max(1)`: an invalid geometry gives a wrong-sized (rejected) product, never a panic.
        let (kg, oc) = (self.patch_len().max(1), self.out_c);
        let ocg = (oc / self.groups).max(1);
        Some(
            (0..self.full_patch_len())
                .flat_map(|r| {
                    (0..oc).map(move |o| (r / kg == o / ocg).then_some((r % kg) * oc + o))
                })
                .collect(),
        )
    }

    /// True when the kernel fits the padded input, no dimension is zero, and every size the
    /// evaluators derive (activations, im2col matrix, expanded weights) is computable and at most
    /// [`MAX_LAYER_VALUES`]; the size methods never overflow on a valid geometry.
    pub(crate) fn is_valid(&self) -> bool {
        let [kh, kw] = self.kernel;
        let along = |size, lo, hi, axis: usize| {
            positions_along(
                size,
                [self.pads[lo], self.pads[hi]],
                self.kernel[axis],
                self.stride[axis],
            )
        };
        let (Some(oh), Some(ow)) = (along(self.in_h, 0, 2, 0), along(self.in_w, 1, 3, 1)) else {
            return false;
        };
        self.in_c > 0
            && self.out_c > 0
            && self.groups > 0
            && self.in_c % self.groups == 0
            && self.out_c % self.groups == 0
            && capped(&[self.in_c, self.in_h, self.in_w]).is_some()
            && capped(&[self.out_c, oh, ow]).is_some()
            && capped(&[oh, ow, self.in_c, kh, kw]).is_some()
            && capped(&[self.in_c, kh, kw, self.out_c]).is_some()
    }

    /// The im2col map of one sample: for each output position (row-major) and each patch entry
    /// (channel, ky, kx), the input index, or `None` for padding.
    pub fn patches(&self) -> Vec<Option<usize>> {
        let [kh, kw] = self.kernel;
        let mut out = Vec::with_capacity(self.positions() * self.patch_len());
        for oy in 0..self.out_h() {
            for ox in 0..self.out_w() {
                for c in 0..self.in_c {
                    for ky in 0..kh {
                        for kx in 0..kw {
                            let y = (oy * self.stride[0] + ky).checked_sub(self.pads[0]);
                            let x = (ox * self.stride[1] + kx).checked_sub(self.pads[1]);
                            out.push(match (y, x) {
                                (Some(y), Some(x)) if y < self.in_h && x < self.in_w => {
                                    Some((c * self.in_h + y) * self.in_w + x)
                                }
                                _ => None,
                            });
                        }
                    }
                }
            }
        }
        out
    }

    /// The im2col gather indices for a batch: into the batch's activations followed by one
    /// zero element at index `batch · in_len` (used for padding).
    pub(crate) fn batch_patches(&self, batch: usize) -> Vec<usize> {
        let one = self.patches();
        let (n, zero) = (self.in_len(), batch * self.in_len());
        (0..batch).flat_map(|b| one.iter().map(move |i| i.map_or(zero, |i| b * n + i))).collect()
    }

    /// Reorders `(batch · positions) × out_c` (im2col product) to per-sample CHW.
    pub(crate) fn chw_order(&self, batch: usize) -> Vec<usize> {
        let (p, oc) = (self.positions(), self.out_c);
        (0..batch)
            .flat_map(|b| (0..oc).flat_map(move |o| (0..p).map(move |q| (b * p + q) * oc + o)))
            .collect()
    }
}

/// A pooling window geometry (max or average; no padding, floor mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolGeom {
    /// Channels.
    pub c: usize,
    /// Input height.
    pub in_h: usize,
    /// Input width.
    pub in_w: usize,
    /// Window height and width.
    pub kernel: [usize; 2],
    /// Strides (height, width).
    pub stride: [usize; 2],
}

impl PoolGeom {
    /// Output height.
    pub fn out_h(&self) -> usize {
        (self.in_h - self.kernel[0]) / self.stride[0] + 1
    }

    /// Output width.
    pub fn out_w(&self) -> usize {
        (self.in_w - self.kernel[1]) / self.stride[1] + 1
    }

    /// Values per output sample.
    pub fn out_len(&self) -> usize {
        self.c * self.out_h() * self.out_w()
    }

    /// Values per input sample.
    pub fn in_len(&self) -> usize {
        self.c * self.in_h * self.in_w
    }

    /// Values per window.
    pub fn window_len(&self) -> usize {
        self.kernel[0] * self.kernel[1]
    }

    /// True when the window fits the input, no dimension is zero, and the input and all windows
    /// together hold at most [`MAX_LAYER_VALUES`] values.
    pub(crate) fn is_valid(&self) -> bool {
        let along =
            |size, axis: usize| positions_along(size, [0, 0], self.kernel[axis], self.stride[axis]);
        let (Some(oh), Some(ow)) = (along(self.in_h, 0), along(self.in_w, 1)) else {
            return false;
        };
        self.c > 0
            && capped(&[self.c, self.in_h, self.in_w]).is_some()
            && capped(&[self.c, oh, ow, self.kernel[0], self.kernel[1]]).is_some()
    }

    /// The windows of a batch (CHW order per sample), as indices into the batch's values.
    pub fn windows(&self, batch: usize) -> Vec<Vec<usize>> {
        let mut out = Vec::with_capacity(batch * self.out_len());
        for b in 0..batch {
            for c in 0..self.c {
                for oy in 0..self.out_h() {
                    for ox in 0..self.out_w() {
                        let base = b * self.in_len() + c * self.in_h * self.in_w;
                        out.push(
                            (0..self.kernel[0])
                                .flat_map(|ky| (0..self.kernel[1]).map(move |kx| (ky, kx)))
                                .map(|(ky, kx)| {
                                    base + (oy * self.stride[0] + ky) * self.in_w
                                        + ox * self.stride[1]
                                        + kx
                                })
                                .collect(),
                        );
                    }
                }
            }
        }
        out
    }
}
