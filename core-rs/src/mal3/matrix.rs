//! The check of matrix products: every matrix product of a batch verified by one dot product
//! over the Galois ring GR(2^k, 42) ([`crate::ring::galois`]), so a product `m×k·k×n` costs
//! rep3's `m·n` elements plus `3·k·42` opened per check, not `m·k·n` checked multiplications.
//!
//! rep3 computes `Z = X·Y + E`, where `E` is the error a cheating party added to its resharing
//! (the sharing stays valid, as for elementwise products). Freivalds's test with coefficients
//! from GR: for uniform `s` (one per row) and `r` (one per column), drawn from a coin tossed
//! after every `Z` is fixed, `sᵀ·Z·r = (sᵀX)·(Y·r) + sᵀ·E·r`, and `sᵀ·E·r`, a nonzero
//! polynomial of degree 2 in the coefficients when `E ≠ 0`, vanishes with probability at most
//! `2/2^42` (GR/2GR is a field, [`crate::ring::galois`]). Summed over the batch's products,
//! each with its own coefficients, the claims become one: `⟨p, q⟩ = v` for `p` the
//! concatenated `sᵀX`, `q` the concatenated `Y·r`, all linear in the shares (local).
//!
//! That dot product is checked against a dot-product triple over GR, `c = ⟨a, b⟩ + e_c`,
//! whose own error is caught by sacrificing a second one on the same `b`
//! (`c′ = ⟨a′, b⟩ + e_c′`): open `ρ₀ = t·a − a′` for a coin `t` and test
//! `t·c − c′ − ⟨ρ₀, b⟩ = t·e_c − e_c′` for zero (a nonzero `e_c` passes with probability at most
//! `2^−42`: over GR a random scalar works, unlike over Z_2^k). Then open `ρ = p − a`,
//! `σ = q − b` and test `v − c − ⟨ρ, b⟩ − ⟨a, σ⟩ − ⟨ρ, σ⟩ = sᵀ·E·r − e_c` for zero. The triples'
//! products are reshared before the coin is tossed. A wrong batch passes with probability at
//! most `3·2^−42 < 2^−40`. `a`, `a′` and `b` are fresh random sharings, so the three openings
//! are uniform.
//!
//! Cost per party: `2·42` elements for the triples, `3·42·Σk` opened (`Σk` the products'
//! inner dimensions), the coin, and the openings' and the zero test's tags settled by one
//! exchange of verdicts (eight rounds with the resharing); locally, `42·(m·k + k·n + m·n)`
//! multiplications per product for the projections and `O(42²·Σk)` for the ring's dot
//! products.

use super::check::zero;
use super::exchange_opened;
use crate::net::Transport;
use crate::prg::Prg;
use crate::rep3::{Rep3, Rep3Vec};
use crate::ring::galois::{self, D};
use crate::ring::{kernels, Ring};
use crate::Error;

/// A matrix product `z = x·y` (`x` m×k, `y` k×n, row-major) as rep3 computed it, waiting for
/// its check.
pub struct MatProduct<R> {
    x: Rep3Vec<R>,
    y: Rep3Vec<R>,
    z: Rep3Vec<R>,
    dims: (usize, usize, usize),
}

impl<R: Ring> MatProduct<R> {
    /// The product `z` of `x` and `y` with `dims = (m, k, n)`; refused when the lengths do not
    /// match the dimensions.
    pub fn new(
        x: Rep3Vec<R>,
        y: Rep3Vec<R>,
        z: Rep3Vec<R>,
        dims: (usize, usize, usize),
    ) -> Result<Self, Error> {
        let (m, k, n) = dims;
        if [x.len(), y.len(), z.len()] != [m * k, k * n, m * n] {
            return Err(Error::ApiMisuse(format!(
                "matrix product check: {m}x{k}·{k}x{n} with {}, {} and {} elements",
                x.len(),
                y.len(),
                z.len()
            )));
        }
        Ok(Self { x, y, z, dims })
    }
}

/// `rows×cols` row-major into `cols×rows`.
fn transpose<R: Ring>(v: &[R], rows: usize, cols: usize) -> Vec<R> {
    let mut t = vec![R::ZERO; v.len()];
    for (i, row) in v.chunks_exact(cols.max(1)).enumerate() {
        for (j, e) in row.iter().enumerate() {
            t[j * rows + i] = *e;
        }
    }
    t
}

/// One component of the claim's three parts for product `mp` with row coefficients `s` (and
/// `st`, their D×m transpose) and column coefficients `r` (flat GR vectors): `sᵀX` and `Y·r`
/// appended to `p` and `q`, and `sᵀZr` returned. `part` picks the component of each share
/// vector.
fn project<R: Ring>(
    mp: &MatProduct<R>,
    (s, st): (&[R], &[R]),
    r: &[R],
    part: impl Fn(&Rep3Vec<R>) -> &[R],
    p: &mut Vec<R>,
    q: &mut Vec<R>,
) -> Vec<R> {
    let (m, k, n) = mp.dims;
    // (sᵀX) element j has coefficient u = Σ_i s_{i,u}·X_{i,j}: Sᵀ (D×m) · X (m×k), transposed.
    let sx = kernels::matmul(st, part(&mp.x), D, m, k);
    p.extend(transpose(&sx, D, k));
    // Y (k×n) · R (n×D) is Y·r element-major already.
    q.extend(kernels::matmul(part(&mp.y), r, k, n, D));
    let zr = kernels::matmul(part(&mp.z), r, m, n, D);
    galois::dot(s, &zr)
}

/// A shared dot product's local part, `⟨x, y⟩` over GR for a public `x` and each component of
/// a shared `y`.
fn dot_public<R: Ring>(x: &[R], y: &Rep3Vec<R>) -> Rep3Vec<R> {
    Rep3Vec::from_parts(y.holder(), galois::dot(x, &y.a), galois::dot(x, &y.b))
}

/// Checks every product of `products` (see the module). Every party gets the same verdict:
/// `Ok`, or [`Error::Abort`] when a product is wrong.
pub(crate) async fn check_matmuls<R: Ring, T: Transport>(
    p: &mut Rep3<T>,
    products: &[MatProduct<R>],
) -> Result<(), Error> {
    if products.is_empty() {
        return Ok(());
    }
    let me = p.me();
    let len: usize = products.iter().map(|mp| mp.dims.1).sum();
    let (a, a2, b) = (p.random::<R>(len * D), p.random::<R>(len * D), p.random::<R>(len * D));
    // P_i's part of ⟨x, b⟩: ⟨x_i, b_i + b_{i+1}⟩ + ⟨x_{i+1}, b_i⟩, as one dot product.
    let bsum: Vec<R> = b.a.iter().zip(&b.b).map(|(u, v)| *u + *v).collect();
    let right = [&bsum[..], &b.a[..]].concat();
    let local: Vec<R> = [&a, &a2]
        .iter()
        .flat_map(|x| galois::dot(&[&x.a[..], &x.b[..]].concat(), &right))
        .collect();
    let cs = p.reshare(local).await?;
    let (c, c2) = (cs.slice(0..D), cs.slice(D..2 * D));

    let seed = super::triples::coin(p).await?;
    let mut prg = Prg::new(&seed, 0, 0);
    let t = galois::random::<R>(&mut prg, 1);
    let (mut pa, mut pb, mut qa, mut qb) = (vec![], vec![], vec![], vec![]);
    let (mut va, mut vb) = (vec![R::ZERO; D], vec![R::ZERO; D]);
    for mp in products {
        let (m, _, n) = mp.dims;
        let (s, r) = (galois::random::<R>(&mut prg, m), galois::random::<R>(&mut prg, n));
        let st = transpose(&s, m, D);
        kernels::add_assign(&mut va, &project(mp, (&s, &st), &r, |v| &v.a, &mut pa, &mut qa));
        kernels::add_assign(&mut vb, &project(mp, (&s, &st), &r, |v| &v.b, &mut pb, &mut qb));
    }
    let (pv, qv, v) = (
        Rep3Vec::from_parts(me, pa, pb),
        Rep3Vec::from_parts(me, qa, qb),
        Rep3Vec::from_parts(me, va, vb),
    );

    let ta = Rep3Vec::from_parts(me, galois::scale(&t, &a.a), galois::scale(&t, &a.b));
    let op = p.ctx_mut().next_op();
    let opened = p.reveal(Rep3Vec::concat(&[&ta.sub(&a2)?, &pv.sub(&a)?, &qv.sub(&b)?])).await?;
    let confirmed = exchange_opened(p, "opened values", op, &opened).await?;
    let n = len * D;
    let (rho0, rho, sigma) = (&opened[..n], &opened[n..2 * n], &opened[2 * n..]);

    let tc = Rep3Vec::from_parts(me, galois::mul(&t, &c.a), galois::mul(&t, &c.b));
    let sacrificed = tc.sub(&c2)?.sub(&dot_public(rho0, &b))?;
    // ⟨ρ, b⟩ + ⟨a, σ⟩ in one dot product per component.
    let cross = dot_public(&[rho, sigma].concat(), &Rep3Vec::concat(&[&b, &a]));
    let claim = v.sub(&c)?.sub(&cross)?.sub(&Rep3Vec::public(me, &galois::dot(rho, sigma)))?;
    zero(p, op, &Rep3Vec::concat(&[&sacrificed, &claim]), "matrix product checks", confirmed).await
}
