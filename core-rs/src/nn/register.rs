//! Registers: how a chain of layers computes a graph with residual connections.
//!
//! A model is a chain over one running activation. A value that the graph reads again later
//! (the input of a residual block) is copied into a numbered register by [`Register::Keep`];
//! [`Register::Recall`] makes a kept value the running activation again (a block's second
//! branch, e.g. ResNet's downsampling convolution), [`Register::Add`] adds a kept value to the
//! running one (the residual `Add`) and [`Register::Sub`] subtracts one from the other (a `Sub`
//! of two activations). Every read empties its register: a value read twice more is kept
//! again. All four are local on every scheme (additions and subtractions of shares, or of masks
//! in METEOR's setup) and exact in fixed point (both sides carry the same fractional bits).

use crate::Error;

/// One register operation; `len` is the values per sample it moves or adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Register {
    /// Copies the running activation into register `slot` (which must be empty).
    Keep {
        /// The register.
        slot: usize,
        /// Values per sample.
        len: usize,
    },
    /// Makes the value in register `slot` the running activation, emptying the register.
    Recall {
        /// The register.
        slot: usize,
        /// Values per sample (of the kept value).
        len: usize,
    },
    /// Adds the value in register `slot` to the running activation elementwise, emptying the
    /// register.
    Add {
        /// The register.
        slot: usize,
        /// Values per sample (of both operands).
        len: usize,
    },
    /// Subtracts elementwise, emptying register `slot`: the kept value from the running
    /// activation, or (`kept_first`) the running activation from the kept value.
    Sub {
        /// The register.
        slot: usize,
        /// Values per sample (of both operands).
        len: usize,
        /// The kept value is the minuend.
        kept_first: bool,
    },
}

/// Registers a plan may use: a graph with more values alive at once is refused at import.
pub(crate) const MAX_REGISTERS: usize = 64;

impl Register {
    /// The register this operation uses.
    pub fn slot(&self) -> usize {
        match *self {
            Self::Keep { slot, .. }
            | Self::Recall { slot, .. }
            | Self::Add { slot, .. }
            | Self::Sub { slot, .. } => slot,
        }
    }

    /// Values per sample of the running activation after this operation.
    pub fn out_len(&self) -> usize {
        match *self {
            Self::Keep { len, .. }
            | Self::Recall { len, .. }
            | Self::Add { len, .. }
            | Self::Sub { len, .. } => len,
        }
    }

    /// Checks this operation against the running activation's `len` and the registers' lengths
    /// (`Some` for a full register) and updates them; `false` when it does not fit.
    pub(crate) fn fits(&self, len: &mut usize, regs: &mut Vec<Option<usize>>) -> bool {
        let slot = self.slot();
        if slot >= MAX_REGISTERS {
            return false;
        }
        if regs.len() <= slot {
            regs.resize(slot + 1, None);
        }
        match *self {
            Self::Keep { len: l, .. } if l == *len && regs[slot].is_none() => {
                regs[slot] = Some(l);
                true
            }
            Self::Recall { len: l, .. } if regs[slot] == Some(l) => {
                regs[slot] = None;
                *len = l;
                true
            }
            Self::Add { len: l, .. } | Self::Sub { len: l, .. }
                if l == *len && regs[slot] == Some(l) =>
            {
                regs[slot] = None;
                true
            }
            _ => false,
        }
    }

    /// Applies this operation to the running value `h` (any representation: reals, ring
    /// elements, shares, error bounds) with the registers `regs`; `add` adds two values, `sub`
    /// subtracts its second from its first.
    pub(crate) fn apply<T: Clone>(
        &self,
        h: T,
        regs: &mut Vec<Option<T>>,
        add: impl FnOnce(T, T) -> Result<T, Error>,
        sub: impl FnOnce(T, T) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let slot = self.slot();
        if regs.len() <= slot {
            regs.resize_with(slot + 1, || None);
        }
        let mut take = || {
            regs[slot].take().ok_or_else(|| {
                Error::ApiMisuse(format!("{self:?}: register {slot} holds no value"))
            })
        };
        match self {
            Self::Keep { .. } => {
                if regs[slot].is_some() {
                    return Err(Error::ApiMisuse(format!("{self:?}: register {slot} is full")));
                }
                regs[slot] = Some(h.clone());
                Ok(h)
            }
            Self::Recall { .. } => take(),
            Self::Add { .. } => {
                let kept = take()?;
                add(h, kept)
            }
            Self::Sub { kept_first, .. } => {
                let kept = take()?;
                if *kept_first {
                    sub(kept, h)
                } else {
                    sub(h, kept)
                }
            }
        }
    }
}

/// The elementwise sum of two real vectors: [`Register::apply`]'s `add` for plain reals and
/// error bounds.
pub(crate) fn sum(a: Vec<f64>, b: Vec<f64>) -> Result<Vec<f64>, Error> {
    Ok(a.iter().zip(&b).map(|(x, y)| x + y).collect())
}

/// The elementwise difference of two real vectors: [`Register::apply`]'s `sub` for plain reals.
pub(crate) fn difference(a: Vec<f64>, b: Vec<f64>) -> Result<Vec<f64>, Error> {
    Ok(a.iter().zip(&b).map(|(x, y)| x - y).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_residual_block_on_plain_numbers() {
        // x → kept; x·2 (the main branch); the downsample branch recalls x, adds 1; the sum.
        let (mut regs, mut lens) = (Vec::new(), Vec::new());
        let add = |a: Vec<i32>, b: Vec<i32>| Ok(a.iter().zip(&b).map(|(x, y)| x + y).collect());
        let sub = |a: Vec<i32>, b: Vec<i32>| Ok(a.iter().zip(&b).map(|(x, y)| x - y).collect());
        let keep = Register::Keep { slot: 0, len: 2 };
        let mut len = 2;
        assert!(keep.fits(&mut len, &mut lens));
        let h = keep.apply(vec![3, 4], &mut regs, add, sub).unwrap();
        let main: Vec<i32> = h.iter().map(|v| v * 2).collect();
        let keep_main = Register::Keep { slot: 1, len: 2 };
        assert!(keep_main.fits(&mut len, &mut lens));
        keep_main.apply(main.clone(), &mut regs, add, sub).unwrap();
        let recall = Register::Recall { slot: 0, len: 2 };
        assert!(recall.fits(&mut len, &mut lens));
        let x = recall.apply(main, &mut regs, add, sub).unwrap();
        let down: Vec<i32> = x.iter().map(|v| v + 1).collect();
        let sum = Register::Add { slot: 1, len: 2 };
        assert!(sum.fits(&mut len, &mut lens));
        assert_eq!(sum.apply(down, &mut regs, add, sub).unwrap(), vec![10, 13]);
        // Every register was read once and is empty again.
        assert!(regs.iter().all(Option::is_none) && lens.iter().all(Option::is_none));
        assert!(!sum.fits(&mut len, &mut lens), "a second read of an empty register");
        assert!(Register::Add { slot: 0, len: 2 }.apply(vec![1, 1], &mut regs, add, sub).is_err());
        assert!(!Register::Keep { slot: MAX_REGISTERS, len: 2 }.fits(&mut len, &mut lens));
        let mut short = 3;
        assert!(!Register::Keep { slot: 0, len: 2 }.fits(&mut short, &mut lens));
        // A difference either way round: running − kept, and kept − running.
        for (kept_first, want) in [(false, vec![-4, 5]), (true, vec![4, -5])] {
            let (mut regs, mut lens, mut len) = (Vec::new(), Vec::new(), 2);
            let keep = Register::Keep { slot: 3, len: 2 };
            assert!(keep.fits(&mut len, &mut lens));
            keep.apply(vec![5, 1], &mut regs, add, sub).unwrap();
            let diff = Register::Sub { slot: 3, len: 2, kept_first };
            assert!(diff.fits(&mut len, &mut lens));
            assert_eq!(diff.apply(vec![1, 6], &mut regs, add, sub).unwrap(), want);
            assert!(!diff.fits(&mut len, &mut lens), "the register was emptied");
        }
    }
}
