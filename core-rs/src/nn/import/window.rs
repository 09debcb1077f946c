//! Convolution and pooling ops of the importer.

use super::{attr, int_attr, only_attrs, str_attr, what, Chain};
use crate::nn::geom::{ConvGeom, PoolGeom};
use crate::nn::model::{Conv, Layer};
use crate::nn::proto::NodeProto;
use crate::nn::NnError;

/// The refusal of a window geometry that [`ConvGeom`]/[`PoolGeom`] reject.
fn bad_geometry(n: &NodeProto, g: &dyn core::fmt::Debug) -> NnError {
    NnError::Shape(format!(
        "{}: geometry {g:?} (the window must fit the padded input, and the layer may hold at most \
         {} values per sample)",
        what(n),
        crate::nn::geom::MAX_LAYER_VALUES
    ))
}

impl Chain<'_> {
    fn ints_attr(
        n: &NodeProto,
        name: &str,
        len: usize,
        default: usize,
    ) -> Result<Vec<usize>, NnError> {
        match attr(n, name) {
            None => Ok(vec![default; len]),
            Some(a) if a.ints.len() == len && a.ints.iter().all(|&v| (0..1 << 20).contains(&v)) => {
                Ok(a.ints.iter().map(|&v| v as usize).collect())
            }
            Some(a) => Err(NnError::Unsupported(format!(
                "{}: attribute {name} = {:?} (need {len} small non-negative values)",
                what(n),
                a.ints
            ))),
        }
    }

    /// Checks the attributes Conv and MaxPool share with fixed values.
    fn plain_window_attrs(n: &NodeProto) -> Result<(), NnError> {
        if let Some(p) = str_attr(n, "auto_pad").filter(|p| p != "NOTSET") {
            return Err(NnError::Unsupported(format!("{}: auto_pad {p}", what(n))));
        }
        if attr(n, "dilations").is_some_and(|a| a.ints.iter().any(|&d| d != 1)) {
            return Err(NnError::Unsupported(format!("{}: dilations other than 1", what(n))));
        }
        Ok(())
    }

    fn chw(&self, n: &NodeProto) -> Result<[usize; 3], NnError> {
        match self.shape[..] {
            [c, h, w] => Ok([c, h, w]),
            _ => Err(NnError::Shape(format!(
                "{}: input of shape {:?} (need channels x height x width)",
                what(n),
                self.shape
            ))),
        }
    }

    pub(super) fn conv(&mut self, n: &NodeProto) -> Result<(), NnError> {
        only_attrs(n, &["kernel_shape", "strides", "pads", "dilations", "group", "auto_pad"])?;
        Self::plain_window_attrs(n)?;
        self.act(n, 0)?;
        let [in_c, in_h, in_w] = self.chw(n)?;
        let wt = self.constant(n, 1)?;
        let dims: Vec<usize> = wt.dims.iter().map(|&d| usize::try_from(d).unwrap_or(0)).collect();
        let [out_c, wc, kh, kw] = dims[..] else {
            return Err(NnError::Shape(format!("{}: weight dims {:?}", what(n), wt.dims)));
        };
        let groups = int_attr(n, "group", 1);
        let groups = usize::try_from(groups).ok().filter(|&g| g > 0 && g <= in_c);
        let groups = match groups {
            Some(g) if in_c % g == 0 && out_c % g == 0 => g,
            _ => {
                return Err(NnError::Unsupported(format!(
                    "{}: attribute group = {} with {in_c} input and {out_c} output channels \
                     (the group count must divide both)",
                    what(n),
                    int_attr(n, "group", 1)
                )))
            }
        };
        if wc * groups != in_c {
            return Err(NnError::Shape(format!(
                "{}: weight for {wc} channels per group, input has {in_c} in {groups} groups",
                what(n)
            )));
        }
        if attr(n, "kernel_shape").is_some()
            && Self::ints_attr(n, "kernel_shape", 2, 0)? != [kh, kw]
        {
            return Err(NnError::Shape(format!("{}: kernel_shape differs from W", what(n))));
        }
        let s = Self::ints_attr(n, "strides", 2, 1)?;
        let p = Self::ints_attr(n, "pads", 4, 0)?;
        let geom = ConvGeom {
            in_c,
            in_h,
            in_w,
            out_c,
            kernel: [kh, kw],
            stride: [s[0], s[1]],
            pads: [p[0], p[1], p[2], p[3]],
            groups,
        };
        if !geom.is_valid() {
            return Err(bad_geometry(n, &geom));
        }
        let weights = wt.reals()?;
        let bias = match n.inputs.get(2).filter(|s| !s.is_empty()) {
            Some(_) => self.bias(n, self.constant(n, 2)?, out_c)?,
            None => vec![0.0; out_c],
        };
        self.len = geom.out_len();
        self.shape = vec![out_c, geom.out_h(), geom.out_w()];
        self.layers.push(Layer::Conv(Conv { geom, weights, bias }));
        self.positive = false;
        self.fresh_linear = true;
        self.rebind(n)
    }

    pub(super) fn maxpool(&mut self, n: &NodeProto) -> Result<(), NnError> {
        only_attrs(
            n,
            &["kernel_shape", "strides", "pads", "dilations", "auto_pad", "ceil_mode"]
                .into_iter()
                .chain(["storage_order"])
                .collect::<Vec<_>>(),
        )?;
        Self::plain_window_attrs(n)?;
        if int_attr(n, "ceil_mode", 0) != 0 || int_attr(n, "storage_order", 0) != 0 {
            return Err(NnError::Unsupported(format!("{}: ceil_mode/storage_order", what(n))));
        }
        if Self::ints_attr(n, "pads", 4, 0)?.iter().any(|&p| p != 0) {
            return Err(NnError::Unsupported(format!("{}: padding", what(n))));
        }
        if n.outputs.len() > 1 {
            return Err(NnError::Unsupported(format!("{}: Indices output", what(n))));
        }
        self.act(n, 0)?;
        let [c, in_h, in_w] = self.chw(n)?;
        if attr(n, "kernel_shape").is_none() {
            return Err(NnError::Malformed(format!("{}: no kernel_shape", what(n))));
        }
        let k = Self::ints_attr(n, "kernel_shape", 2, 0)?;
        let s = Self::ints_attr(n, "strides", 2, 1)?;
        let g = PoolGeom { c, in_h, in_w, kernel: [k[0], k[1]], stride: [s[0], s[1]] };
        if !g.is_valid() {
            return Err(bad_geometry(n, &g));
        }
        self.len = g.out_len();
        self.shape = vec![c, g.out_h(), g.out_w()];
        self.layers.push(Layer::MaxPool(g));
        self.rebind(n)
    }

    /// `AveragePool` (2-D, no padding, floor mode) and `GlobalAveragePool`.
    pub(super) fn avgpool(&mut self, n: &NodeProto, global: bool) -> Result<(), NnError> {
        if global {
            only_attrs(n, &[])?;
        } else {
            only_attrs(
                n,
                &["kernel_shape", "strides", "pads", "dilations", "auto_pad", "ceil_mode"]
                    .into_iter()
                    .chain(["count_include_pad"])
                    .collect::<Vec<_>>(),
            )?;
            Self::plain_window_attrs(n)?;
            if int_attr(n, "ceil_mode", 0) != 0 {
                return Err(NnError::Unsupported(format!("{}: attribute ceil_mode = 1", what(n))));
            }
            if Self::ints_attr(n, "pads", 4, 0)?.iter().any(|&p| p != 0) {
                return Err(NnError::Unsupported(format!(
                    "{}: attribute pads (padding is not supported)",
                    what(n)
                )));
            }
            // count_include_pad changes nothing without padding.
            if !matches!(int_attr(n, "count_include_pad", 0), 0 | 1) {
                return Err(NnError::Unsupported(format!(
                    "{}: attribute count_include_pad = {}",
                    what(n),
                    int_attr(n, "count_include_pad", 0)
                )));
            }
        }
        self.act(n, 0)?;
        let [c, in_h, in_w] = self.chw(n)?;
        let (k, s) = if global {
            (vec![in_h, in_w], vec![1, 1])
        } else {
            if attr(n, "kernel_shape").is_none() {
                return Err(NnError::Malformed(format!("{}: no kernel_shape", what(n))));
            }
            (Self::ints_attr(n, "kernel_shape", 2, 0)?, Self::ints_attr(n, "strides", 2, 1)?)
        };
        let g = PoolGeom { c, in_h, in_w, kernel: [k[0], k[1]], stride: [s[0], s[1]] };
        if !g.is_valid() {
            return Err(bad_geometry(n, &g));
        }
        self.len = g.out_len();
        self.shape = vec![c, g.out_h(), g.out_w()];
        self.layers.push(Layer::AvgPool(g));
        self.rebind(n)
    }

    /// `ReduceMean` over the activation's last axes (PyTorch's `AdaptiveAvgPool2d(1)` and
    /// `x.mean((2, 3))`, as the dynamo exporter writes them): an average pool whose window is
    /// those axes, over the leading ones as channels.
    pub(super) fn reduce_mean(&mut self, n: &NodeProto) -> Result<(), NnError> {
        only_attrs(n, &["axes", "keepdims", "noop_with_empty_axes"])?;
        self.act(n, 0)?;
        let rank = self.shape.len() + 1; // with the batch axis
        let mut axes = self.axes(n, 1)?;
        if axes.is_empty() {
            if int_attr(n, "noop_with_empty_axes", 0) != 0 {
                self.fresh_linear = false;
                return self.rebind(n);
            }
            return Err(NnError::Unsupported(format!(
                "{}: no axes, i.e. a mean over the batch too (give the axes to reduce)",
                what(n)
            )));
        }
        for a in axes.iter_mut() {
            let r = rank as i64;
            if !(-r..r).contains(a) {
                return Err(NnError::Malformed(format!(
                    "{}: axis {a} of a rank {r} tensor",
                    what(n)
                )));
            }
            if *a < 0 {
                *a += r;
            }
        }
        axes.sort_unstable();
        axes.dedup();
        let first = rank - axes.len();
        if axes.first() == Some(&0) || axes.iter().zip(first..).any(|(&a, b)| a as usize != b) {
            return Err(NnError::Unsupported(format!(
                "{}: mean over axes {axes:?} of a {:?} activation (only the last axes: a mean \
                 over the batch or over channels is not supported)",
                what(n),
                self.shape
            )));
        }
        let lead: usize = self.shape[..first - 1].iter().product();
        let window: usize = self.shape[first - 1..].iter().product();
        let g = PoolGeom { c: lead, in_h: 1, in_w: window, kernel: [1, window], stride: [1, 1] };
        if !g.is_valid() {
            return Err(bad_geometry(n, &g));
        }
        self.len = lead;
        let mut shape = self.shape[..first - 1].to_vec();
        if int_attr(n, "keepdims", 1) != 0 {
            shape.extend(vec![1; axes.len()]);
        }
        self.shape = shape;
        self.layers.push(Layer::AvgPool(g));
        self.rebind(n)
    }
}
