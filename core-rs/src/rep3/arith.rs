//! Inputs, reveals, multiplication, dot and matrix products.
//!
//! Costs per party (ring elements sent, rounds): mul, dot and matmul send one element per output
//! and take one round; reveal to all sends one element per value in one round; input from a
//! party costs the owner one element per value in one round.

use super::{next, prev, purpose, Rep3, Rep3Vec};
use crate::net::{PartyId, Transport};
use crate::ring::{kernels, Ring};
use crate::Error;

/// Both components of a party's shares of a vector, as slices (e.g. one row of a longer
/// [`Rep3Vec`]).
pub(crate) type ShareSlices<'a, R> = [&'a [R]; 2];

impl<T: Transport> Rep3<T> {
    /// Secret-shares `n` values owned by compute party `owner` = P_j, who passes `Some(values)`;
    /// the others pass `None`. Components: `x_j = s` from the key P_j shares with P_{j-1},
    /// `x_{j+1} = x − s` sent by P_j to P_{j+1}, and `x_{j+2} = 0`. Each other party sees one
    /// uniformly random component (1 round, the owner sends 1 element per value).
    pub async fn input<R: Ring>(
        &mut self,
        owner: PartyId,
        values: Option<&[R]>,
        n: usize,
    ) -> Result<Rep3Vec<R>, Error> {
        if owner.0 > 2 {
            return Err(Error::ApiMisuse(format!("input owner {owner} is not a compute party")));
        }
        let me = self.me();
        crate::sharing::check_input_values(me, owner, values, n)?;
        self.ctx.round();
        self.share_from_one(owner, values, n).await
    }

    /// The one-message sharing behind [`Rep3::input`], without opening a round (callers batch
    /// it with other messages of the same round).
    pub(crate) async fn share_from_one<R: Ring>(
        &mut self,
        owner: PartyId,
        values: Option<&[R]>,
        n: usize,
    ) -> Result<Rep3Vec<R>, Error> {
        let op = self.ctx.next_op();
        let me = self.me();
        let mut s = vec![R::ZERO; n];
        if let Some(x) = values {
            R::fill_random(&mut self.prg_prev(op, purpose::INPUT), &mut s);
            let rest: Vec<R> = x.iter().zip(&s).map(|(x, s)| *x - *s).collect();
            self.ctx.send(next(me), &rest)?;
            Ok(Rep3Vec::from_parts(me, s, rest))
        } else if me == next(owner) {
            let rest = self.ctx.recv(owner, n).await?;
            Ok(Rep3Vec::from_parts(me, rest, vec![R::ZERO; n]))
        } else {
            R::fill_random(&mut self.prg_next(op, purpose::INPUT), &mut s);
            Ok(Rep3Vec::from_parts(me, vec![R::ZERO; n], s))
        }
    }

    /// Opens `x` to all three parties (1 round, 1 element per value per party).
    pub async fn reveal<R: Ring>(&mut self, x: Rep3Vec<R>) -> Result<Vec<R>, Error> {
        let me = self.me();
        self.ctx.round();
        self.ctx.send(next(me), &x.a)?;
        let missing = self.ctx.recv::<R>(prev(me), x.len()).await?;
        let mut out = x.a;
        kernels::add_assign(&mut out, &x.b);
        kernels::add_assign(&mut out, &missing);
        Ok(out)
    }

    /// Opens `x` to compute party `to` only (1 round, 1 element per value in total).
    /// `to` gets `Some(values)`, the others `None`.
    pub async fn reveal_to<R: Ring>(
        &mut self,
        to: PartyId,
        x: Rep3Vec<R>,
    ) -> Result<Option<Vec<R>>, Error> {
        if to.0 > 2 {
            return Err(Error::ApiMisuse(format!("reveal_to: {to} is not a compute party")));
        }
        let me = self.me();
        self.ctx.round();
        if me == prev(to) {
            self.ctx.send(to, &x.a)?;
        }
        if me != to {
            return Ok(None);
        }
        let missing = self.ctx.recv::<R>(prev(me), x.len()).await?;
        let mut out = x.a;
        kernels::add_assign(&mut out, &x.b);
        kernels::add_assign(&mut out, &missing);
        Ok(Some(out))
    }

    /// Turns this party's additive component `z_i` (Σ z_i = value) into `rep3` shares:
    /// re-randomises with a fresh zero sharing and sends the result to P_{i-1} (1 round).
    pub(crate) async fn reshare<R: Ring>(&mut self, mut z: Vec<R>) -> Result<Rep3Vec<R>, Error> {
        self.add_zero_share(&mut z);
        let me = self.me();
        self.ctx.round();
        self.ctx.send(prev(me), &z)?;
        let b = self.ctx.recv::<R>(next(me), z.len()).await?;
        Ok(Rep3Vec::from_parts(me, z, b))
    }

    /// This party's additive component of `x·y`: `x_i·y_i + x_{i+1}·y_i + x_i·y_{i+1}`.
    pub(crate) fn local_mul<R: Ring>(x: &Rep3Vec<R>, y: &Rep3Vec<R>) -> Vec<R> {
        kernels::cross_mul(&x.a, &x.b, &y.a, &y.b)
    }

    /// Elementwise `x·y` (1 round, 1 element per product per party).
    pub async fn mul<R: Ring>(
        &mut self,
        x: &Rep3Vec<R>,
        y: &Rep3Vec<R>,
    ) -> Result<Rep3Vec<R>, Error> {
        x.check_len(y, "mul")?;
        let z = Self::local_mul(x, y);
        self.reshare(z).await
    }

    /// The products `x·y` of several pairs of equal-length share slices `([x_a, x_b], [y_a,
    /// y_b])`, concatenated: the same sharing as [`Rep3::mul`] of the concatenated operands,
    /// written straight into the one vector that is reshared (1 round, 1 element per product
    /// per party).
    pub(crate) async fn mul_concat<R: Ring>(
        &mut self,
        pairs: &[(ShareSlices<'_, R>, ShareSlices<'_, R>)],
    ) -> Result<Rep3Vec<R>, Error> {
        let mut z = Vec::with_capacity(pairs.iter().map(|(x, _)| x[0].len()).sum());
        for ([xa, xb], [ya, yb]) in pairs {
            let n = xa.len();
            if xb.len() != n || ya.len() != n || yb.len() != n {
                return Err(Error::ApiMisuse(format!(
                    "mul: operands have {n} and {} elements",
                    ya.len()
                )));
            }
            kernels::cross_mul_into(xa, xb, ya, yb, &mut z);
        }
        self.reshare(z).await
    }

    /// Row-wise dot products: `x` and `y` hold `rows` vectors of length `len` each (row-major);
    /// returns `rows` shared dot products at the cost of `rows` multiplications.
    pub async fn dot<R: Ring>(
        &mut self,
        x: &Rep3Vec<R>,
        y: &Rep3Vec<R>,
        len: usize,
    ) -> Result<Rep3Vec<R>, Error> {
        x.check_len(y, "dot")?;
        if len == 0 || x.len() % len != 0 {
            return Err(Error::ApiMisuse(format!(
                "dot: {} elements are not rows of {len}",
                x.len()
            )));
        }
        let ysum: Vec<R> = y.a.iter().zip(&y.b).map(|(a, b)| *a + *b).collect();
        let z =
            x.a.chunks_exact(len)
                .zip(x.b.chunks_exact(len))
                .zip(ysum.chunks_exact(len).zip(y.a.chunks_exact(len)))
                .map(|((xa, xb), (ys, ya))| kernels::dot(xa, ys) + kernels::dot(xb, ya))
                .collect();
        self.reshare(z).await
    }

    /// Matrix product of shared `a` (m×k) and `b` (k×n), row-major (1 round, m·n elements).
    pub async fn matmul<R: Ring>(
        &mut self,
        a: &Rep3Vec<R>,
        b: &Rep3Vec<R>,
        m: usize,
        k: usize,
        n: usize,
    ) -> Result<Rep3Vec<R>, Error> {
        let z = Self::local_matmul(a, b, m, k, n)?;
        self.reshare(z).await
    }

    /// This party's additive component of the matrix product `a·b`.
    pub(crate) fn local_matmul<R: Ring>(
        a: &Rep3Vec<R>,
        b: &Rep3Vec<R>,
        m: usize,
        k: usize,
        n: usize,
    ) -> Result<Vec<R>, Error> {
        if a.len() != m * k || b.len() != k * n {
            return Err(Error::ApiMisuse(format!(
                "matmul: shapes {m}x{k} and {k}x{n} do not match {} and {} elements",
                a.len(),
                b.len()
            )));
        }
        let bsum: Vec<R> = b.a.iter().zip(&b.b).map(|(x, y)| *x + *y).collect();
        let mut z = kernels::matmul(&a.a, &bsum, m, k, n);
        kernels::matmul_acc(&a.b, &b.a, &mut z, m, k, n);
        Ok(z)
    }
}

#[cfg(test)]
mod tests {
    use crate::meteor::F67;
    use crate::ring::Ring;
    use crate::testing;

    /// Pairs of rows multiplied into one vector open to the products of the rows, in order,
    /// including a pair whose left operand is shared with another (as the MSB setup's λ is).
    #[test]
    fn mul_concat_multiplies_each_pair_in_order() {
        let outs = testing::run_rep3(11, |mut p| async move {
            let (x, y) = (p.random::<F67>(300), p.random::<F67>(400));
            let z = p
                .mul_concat(&[
                    ([&x.a[..], &x.b[..]], [&y.a[..300], &y.b[..300]]),
                    ([&x.a[..100], &x.b[..100]], [&y.a[300..], &y.b[300..]]),
                ])
                .await?;
            Ok((p.reveal(x).await?, p.reveal(y).await?, p.reveal(z).await?))
        });
        let (x, y, z) = &outs[0];
        let want: Vec<F67> =
            (0..300).map(|i| x[i] * y[i]).chain((0..100).map(|i| x[i] * y[300 + i])).collect();
        assert_eq!(z, &want);
        assert!(z.iter().any(|v| *v != F67::ZERO), "random operands give non-zero products");
    }
}
