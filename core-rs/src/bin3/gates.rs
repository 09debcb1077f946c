//! Products in one round: two-input ([`Bin3::mul`]), `ℓ`-input ([`Bin3::mul_many`]), dot and
//! matrix products ([`Bin3::dot`], [`Bin3::matmul`]), and a whole layer of gates of mixed
//! fan-in in one message per directed link ([`Bin3::mul_layer`]).
//!
//! Two operands (extract §2.6 corrected, §7.1 over rings): the three parties hold an additive
//! sharing `v₁ + v₂ + v₃ = x·y` of the product without talking (P1 `xa·ya`, P2
//! `−(xb·α_y + yb·α_x)`, P3 `α_x(β_y − α_y) + β_x·α_y`); P1 and P2 swap theirs masked and P3
//! sends its own to P1, so each sends one element and P3 receives none. Summing the `v`s over
//! a row before masking gives a dot product for the same one element.
//!
//! `ℓ ≥ 3` operands (extract §2.7, §7.1): two symmetric halves in the same round. In half A,
//! P2 sends P1 the masked product of every subset `I` of at least two of its `x + β` values;
//! with its `β`s P1 expands `Π (xa_i) = Π (x_i + β_i + (α_i − β_i))`-style identities into
//! `t + α_t`, and P3, which knows every mask, computes `α_t` and sends it to P2. Half B swaps
//! P1 and P2 (and `α` with `β`). Signs `(−1)^(ℓ−|I|)` come from the ring form; over bits they
//! vanish and the formulas are the paper's.

use super::{stream, Bin3, Bin3Vec, Role};
use std::borrow::BorrowMut;

use crate::net::Transport;
use crate::prg::Prg;
use crate::rep3::Rep3;
use crate::ring::{kernels, Ring};
use crate::Error;

/// The largest fan-in of one product (the paper's bound: `2^ℓ − ℓ − 1` elements per gate).
pub const MAX_FAN_IN: usize = 8;

/// Subsets of `0..l` with at least two members, ascending (the canonical order of a gate's
/// messages).
fn subsets(l: usize) -> Vec<usize> {
    (1usize..1 << l).filter(|s| s.count_ones() >= 2).collect()
}

/// `Π_{i ∈ I} v_i` for every `I ⊆ 0..l`, indexed by `I` as a bit mask.
fn subset_products<R: Ring>(v: &[R], out: &mut [R]) {
    out[0] = R::ONE;
    for s in 1..out.len() {
        let low = s.trailing_zeros() as usize;
        out[s] = out[s & (s - 1)] * v[low];
    }
}

/// `x` when `k` is even, `−x` when odd.
fn signed<R: Ring>(k: usize, x: R) -> R {
    if k % 2 == 0 {
        x
    } else {
        -x
    }
}

/// `n` masks from `prg`.
fn draw<R: Ring>(prg: &mut Prg, n: usize) -> Vec<R> {
    let mut m = vec![R::ZERO; n];
    R::fill_random(prg, &mut m);
    m
}

/// One gate of a layer, as this party sees it before the exchange.
enum Item<'a, R> {
    /// A product of two operands or a dot product: this party's additive component `v`.
    Two(Vec<R>),
    /// A product of `ℓ ≥ 3` operands of one length.
    Many(Vec<&'a Bin3Vec<R>>),
}

impl<R: Ring> Item<'_, R> {
    fn len(&self) -> usize {
        match self {
            Item::Two(v) => v.len(),
            Item::Many(xs) => xs[0].len(),
        }
    }

    /// Elements P1 and P2 each send the other for this gate.
    fn exchanged(&self) -> usize {
        match self {
            Item::Two(v) => v.len(),
            Item::Many(xs) => (subsets(xs.len()).len()) * xs[0].len(),
        }
    }
}

/// This party's additive component of `x·y` elementwise (see the module documentation).
fn local_product<R: Ring>(role: Role, x: &Bin3Vec<R>, y: &Bin3Vec<R>) -> Vec<R> {
    let (xa, xb, ya, yb) = (&x.a, &x.b, &y.a, &y.b);
    let it = (0..x.len()).map(move |j| (xa[j], xb[j], ya[j], yb[j]));
    match role {
        Role::P1 => it.map(|(xa, _, ya, _)| xa * ya).collect(),
        Role::P2 => it.map(|(xa, xb, ya, yb)| -(xa * yb + ya * xb)).collect(),
        Role::P3 => it.map(|(xa, xb, ya, yb)| xa * (yb - ya) + xb * ya).collect(),
    }
}

/// This party's additive component of the matrix product `a·b` (`m×k` by `k×n`, row-major).
fn local_matmul<R: Ring>(
    role: Role,
    a: &Bin3Vec<R>,
    b: &Bin3Vec<R>,
    (m, k, n): (usize, usize, usize),
) -> Vec<R> {
    match role {
        Role::P1 => kernels::matmul(&a.a, &b.a, m, k, n),
        Role::P2 => {
            let mut v = kernels::matmul(&a.a, &b.b, m, k, n);
            kernels::matmul_acc(&a.b, &b.a, &mut v, m, k, n);
            v.iter_mut().for_each(|x| *x = -*x);
            v
        }
        Role::P3 => {
            let diff: Vec<R> = b.b.iter().zip(&b.a).map(|(q, p)| *q - *p).collect();
            let mut v = kernels::matmul(&a.a, &diff, m, k, n);
            kernels::matmul_acc(&a.b, &b.a, &mut v, m, k, n);
            v
        }
    }
}

/// The masked subset products one party sends for an `ℓ`-input gate: for every element `j`
/// and subset `I` (in [`subsets`] order), `Π_{i∈I} first_i[j] + mask`, element-major.
fn masked_subset_products<R: Ring>(xs: &[&Bin3Vec<R>], masks: &[R]) -> Vec<R> {
    let (l, n) = (xs.len(), xs[0].len());
    let sets = subsets(l);
    let mut prod = vec![R::ZERO; 1 << l];
    let mut v = [R::ZERO; MAX_FAN_IN];
    let mut out = Vec::with_capacity(sets.len() * n);
    for j in 0..n {
        xs.iter().zip(&mut v).for_each(|(x, v)| *v = x.a[j]);
        subset_products(&v[..l], &mut prod);
        out.extend(sets.iter().map(|&s| prod[s]));
    }
    kernels::add_assign(&mut out, masks);
    out
}

/// The receiving side of one half (P1 in half A, P2 in half B): from the other's masked subset
/// products `c`, its own first components and its second components `m` (the other's hidden
/// masks), `t + mask_t = last + Σ_I ±c_I·m^{I^c} ± Σ_i first_i·m^{L∖i}`.
fn combine<R: Ring>(xs: &[&Bin3Vec<R>], c: &[R], last: &[R]) -> Vec<R> {
    let (l, n) = (xs.len(), xs[0].len());
    let full = (1usize << l) - 1;
    let sets = subsets(l);
    let mut m = [R::ZERO; MAX_FAN_IN];
    let mut mp = vec![R::ZERO; 1 << l];
    (0..n)
        .map(|j| {
            xs.iter().zip(&mut m).for_each(|(x, m)| *m = x.b[j]);
            subset_products(&m[..l], &mut mp);
            let cj = &c[j * sets.len()..(j + 1) * sets.len()];
            let mut t = last[j];
            for (&s, &c) in sets.iter().zip(cj) {
                t += signed(l - s.count_ones() as usize, c * mp[full ^ s]);
            }
            for (i, x) in xs.iter().enumerate() {
                t += signed(l - 1, x.a[j] * mp[full ^ (1 << i)]);
            }
            t
        })
        .collect()
}

/// P3's share of one half: with `own` the masks the half's receiver does not know (its `β`s
/// in half A, `α`s in half B) and `other` the remaining ones, `mask_t = last − B` where
/// `B = ±own^L − Σ_I ±masks_I·own^{I^c} ± Σ_i (own_i − other_i)·own^{L∖i}`.
fn p3_half<R: Ring>(
    xs: &[&Bin3Vec<R>],
    own: impl Fn(&Bin3Vec<R>, usize) -> R,
    other: impl Fn(&Bin3Vec<R>, usize) -> R,
    masks: &[R],
    last: &[R],
) -> Vec<R> {
    let (l, n) = (xs.len(), xs[0].len());
    let full = (1usize << l) - 1;
    let sets = subsets(l);
    let mut o = [R::ZERO; MAX_FAN_IN];
    let mut op = vec![R::ZERO; 1 << l];
    (0..n)
        .map(|j| {
            xs.iter().zip(&mut o).for_each(|(x, o)| *o = own(x, j));
            subset_products(&o[..l], &mut op);
            let mj = &masks[j * sets.len()..(j + 1) * sets.len()];
            let mut b = signed(l, op[full]);
            for (&s, &m) in sets.iter().zip(mj) {
                b -= signed(l - s.count_ones() as usize, m * op[full ^ s]);
            }
            for (i, x) in xs.iter().enumerate() {
                b += signed(l - 1, (own(x, j) - other(x, j)) * op[full ^ (1 << i)]);
            }
            last[j] - b
        })
        .collect()
}

/// Splits `v` into consecutive pieces of the given lengths.
fn pieces<R: Ring>(v: &[R], lens: impl Iterator<Item = usize>) -> Vec<&[R]> {
    let mut at = 0;
    lens.map(|l| {
        let p = &v[at..at + l];
        at += l;
        p
    })
    .collect()
}

impl<T: Transport, B: BorrowMut<Rep3<T>>> Bin3<T, B> {
    /// `x·y` elementwise (AND over bits). One round; each party sends one element per product,
    /// P3 receives nothing.
    pub async fn mul<R: Ring>(
        &mut self,
        x: &Bin3Vec<R>,
        y: &Bin3Vec<R>,
    ) -> Result<Bin3Vec<R>, Error> {
        one(self.mul_layer(&[&[x, y]]).await?)
    }

    /// The product of all `xs` elementwise (an `ℓ`-input AND over bits), `2 ≤ ℓ ≤ 8`. One
    /// round: P1 and P2 each send `2^ℓ − ℓ − 1` elements per product, P3 one to each of them.
    pub async fn mul_many<R: Ring>(&mut self, xs: &[&Bin3Vec<R>]) -> Result<Bin3Vec<R>, Error> {
        one(self.mul_layer(&[xs]).await?)
    }

    /// A layer of products, each of 2 to 8 operands of one length (gates may differ in fan-in
    /// and length), in one round and one message per directed link; P3 receives nothing.
    ///
    /// ```
    /// use ringfence_core::{bin3::Bin3, net::PartyId, rep3::Rep3, ring::Bits, sharing::Session, testing};
    /// let outs = testing::run_rep3(3, |base: Rep3<_>| async move {
    ///     let mut p = Bin3::start(base);
    ///     let mine = [Bits(0b1100), Bits(0b1010), Bits(0b0110)];
    ///     let me = p.me();
    ///     let x = p.input(PartyId(0), (me == PartyId(0)).then_some(&mine[..]), 3).await?;
    ///     let (a, b, c) = (x.slice(0..1), x.slice(1..2), x.slice(2..3));
    ///     // a ∧ b and a ∧ b ∧ c in the same round.
    ///     let out = p.mul_layer(&[&[&a, &b], &[&a, &b, &c]]).await?;
    ///     let mut opened = p.open(out[0].clone()).await?;
    ///     opened.extend(p.open(out[1].clone()).await?);
    ///     Ok(opened)
    /// });
    /// assert_eq!(outs[2], vec![Bits(0b1000), Bits(0)]);
    /// ```
    pub async fn mul_layer<R: Ring>(
        &mut self,
        gates: &[&[&Bin3Vec<R>]],
    ) -> Result<Vec<Bin3Vec<R>>, Error> {
        let role = self.role();
        let mut items = Vec::with_capacity(gates.len());
        for g in gates {
            let (Some(first), 2..=MAX_FAN_IN) = (g.first(), g.len()) else {
                return Err(Error::ApiMisuse(format!(
                    "bin3: a product has 2 to {MAX_FAN_IN} operands, not {}",
                    g.len()
                )));
            };
            for x in g.iter() {
                self.check_holder(x)?;
                crate::sharing::same_len(first.len(), x.len(), "bin3 product")?;
            }
            items.push(match g.len() {
                2 => Item::Two(local_product(role, g[0], g[1])),
                _ => Item::Many(g.to_vec()),
            });
        }
        self.exchange(items).await
    }

    /// Row-wise dot products: `x` and `y` hold rows of `len` elements (row-major); one shared
    /// dot product per row for one element per party (one round).
    pub async fn dot<R: Ring>(
        &mut self,
        x: &Bin3Vec<R>,
        y: &Bin3Vec<R>,
        len: usize,
    ) -> Result<Bin3Vec<R>, Error> {
        self.check_holder(x)?;
        self.check_holder(y)?;
        crate::sharing::same_len(x.len(), y.len(), "bin3 dot")?;
        if len == 0 || x.len() % len != 0 {
            return Err(Error::ApiMisuse(format!(
                "dot: {} elements are not rows of {len}",
                x.len()
            )));
        }
        let v = local_product(self.role(), x, y)
            .chunks_exact(len)
            .map(|r| r.iter().fold(R::ZERO, |s, v| s + *v))
            .collect();
        one(self.exchange(vec![Item::Two(v)]).await?)
    }

    /// Matrix product of `a` (`m×k`) and `b` (`k×n`), row-major: one round, `m·n` elements per
    /// party.
    pub async fn matmul<R: Ring>(
        &mut self,
        a: &Bin3Vec<R>,
        b: &Bin3Vec<R>,
        dims: (usize, usize, usize),
    ) -> Result<Bin3Vec<R>, Error> {
        self.check_holder(a)?;
        self.check_holder(b)?;
        crate::sharing::check_dims("bin3 matmul", a.len(), b.len(), dims)?;
        let v = local_matmul(self.role(), a, b, dims);
        one(self.exchange(vec![Item::Two(v)]).await?)
    }

    /// The round of a layer: every party computes and sends its messages, then finishes its
    /// output shares from what it received (P3 receives nothing).
    async fn exchange<R: Ring>(
        &mut self,
        items: Vec<Item<'_, R>>,
    ) -> Result<Vec<Bin3Vec<R>>, Error> {
        let op = self.ctx_mut().next_op();
        self.ctx_mut().round();
        let role = self.role();
        let many: usize = items.iter().filter(|i| matches!(i, Item::Many(_))).map(Item::len).sum();
        let exchanged: usize = items.iter().map(Item::exchanged).sum();
        match role {
            // P1 and P2 mirror each other: each masks its messages with a stream it shares
            // with P3 (P1: m₁₂, P2: m₂₁) and ends an ℓ-input gate's half with its second
            // stream (P1: m₃₂, P2: m₃₁); they differ only in the two-input gate, where P2 also
            // draws m₃₁ and P3's one element goes to P1.
            Role::P1 | Role::P2 => {
                let p1 = role == Role::P1;
                let (peer, msg_stream, end_stream) = if p1 {
                    (Role::P2, stream::M12, stream::M32)
                } else {
                    (Role::P1, stream::M21, stream::M31)
                };
                let mut masks = self.pair_prg(Role::P3, op, msg_stream);
                let mut ends = self.pair_prg(Role::P3, op, end_stream);
                // Per gate: the mask of my message, and my stream's share of the output.
                let mut keep = Vec::with_capacity(items.len());
                let mut msg = Vec::with_capacity(exchanged);
                for it in &items {
                    match it {
                        Item::Two(v) => {
                            let m = draw::<R>(&mut masks, v.len());
                            msg.extend(v.iter().zip(&m).map(|(v, m)| *v + *m));
                            let end = if p1 { Vec::new() } else { draw::<R>(&mut ends, v.len()) };
                            keep.push((m, end));
                        }
                        Item::Many(xs) => {
                            let m = draw::<R>(&mut masks, it.exchanged());
                            msg.extend(masked_subset_products(xs, &m));
                            keep.push((Vec::new(), draw::<R>(&mut ends, xs[0].len())));
                        }
                    }
                }
                self.send(peer, &msg)?;
                let from_peer = self.recv::<R>(peer, exchanged).await?;
                // From P3: one element per two-input product (to P1 only) and per ℓ-input one.
                let p3_lens: Vec<usize> = items
                    .iter()
                    .map(|i| match i {
                        Item::Two(v) if p1 => v.len(),
                        Item::Two(_) => 0,
                        Item::Many(_) => i.len(),
                    })
                    .collect();
                let total: usize = p3_lens.iter().sum();
                let p3 = if p1 || many > 0 {
                    self.recv::<R>(Role::P3, total).await?
                } else {
                    Vec::new()
                };
                let c = pieces(&from_peer, items.iter().map(Item::exchanged));
                let c3 = pieces(&p3, p3_lens.into_iter());
                Ok(items
                    .iter()
                    .zip(keep)
                    .zip(c.into_iter().zip(c3))
                    .map(|((it, (m, end)), (c, c3))| match it {
                        // P1: (v₁ + c₂ + c₃, m₁₂ − c₃); P2: (c₁ + v₂ − m₃₁, m₂₁ + m₃₁).
                        Item::Two(v) if p1 => {
                            let a = (0..v.len()).map(|j| v[j] + c[j] + c3[j]).collect();
                            let b = m.iter().zip(c3).map(|(m, c)| *m - *c).collect();
                            Bin3Vec::from_parts(role, a, b)
                        }
                        Item::Two(v) => {
                            let a = (0..v.len()).map(|j| c[j] + v[j] - end[j]).collect();
                            let b = m.iter().zip(&end).map(|(p, q)| *p + *q).collect();
                            Bin3Vec::from_parts(role, a, b)
                        }
                        Item::Many(xs) => {
                            Bin3Vec::from_parts(role, combine(xs, c, &end), c3.to_vec())
                        }
                    })
                    .collect())
            }
            Role::P3 => {
                let (mut m12, mut m32) = (
                    self.pair_prg(Role::P1, op, stream::M12),
                    self.pair_prg(Role::P1, op, stream::M32),
                );
                let (mut m21, mut m31) = (
                    self.pair_prg(Role::P2, op, stream::M21),
                    self.pair_prg(Role::P2, op, stream::M31),
                );
                let (mut to_p1, mut to_p2) = (Vec::new(), Vec::new());
                let mut out = Vec::with_capacity(items.len());
                for it in &items {
                    let n = it.len();
                    match it {
                        Item::Two(v) => {
                            let (a12, a21, a31) = (
                                draw::<R>(&mut m12, n),
                                draw::<R>(&mut m21, n),
                                draw::<R>(&mut m31, n),
                            );
                            let c3: Vec<R> = v.iter().zip(&a31).map(|(v, m)| *v + *m).collect();
                            let alpha = a21.iter().zip(&a31).map(|(p, q)| *p + *q).collect();
                            let beta = a12.iter().zip(&c3).map(|(m, c)| *m - *c).collect();
                            to_p1.extend_from_slice(&c3);
                            out.push(Bin3Vec::from_parts(role, alpha, beta));
                        }
                        Item::Many(xs) => {
                            let k = it.exchanged();
                            let (a12, a32) = (draw::<R>(&mut m12, k), draw::<R>(&mut m32, n));
                            let (a21, a31) = (draw::<R>(&mut m21, k), draw::<R>(&mut m31, n));
                            // Half A hides β from P1: α_t; half B hides α from P2: β_t.
                            let alpha = p3_half(xs, |x, j| x.b[j], |x, j| x.a[j], &a21, &a32);
                            let beta = p3_half(xs, |x, j| x.a[j], |x, j| x.b[j], &a12, &a31);
                            to_p2.extend_from_slice(&alpha);
                            to_p1.extend_from_slice(&beta);
                            out.push(Bin3Vec::from_parts(role, alpha, beta));
                        }
                    }
                }
                self.send(Role::P1, &to_p1)?;
                if many > 0 {
                    self.send(Role::P2, &to_p2)?;
                }
                Ok(out)
            }
        }
    }
}

/// The one output of a one-gate layer.
fn one<R>(mut v: Vec<Bin3Vec<R>>) -> Result<Bin3Vec<R>, Error> {
    v.pop().ok_or_else(|| Error::ApiMisuse("bin3: a layer without gates".into()))
}
