//! Inputs, reveals, multiplication, dot and matrix products.
//!
//! Costs per party (ring elements sent, rounds): mul, dot and matmul send one element per output
//! and take one round; reveal to all sends one element per value in one round; input from a
//! party costs the owner two elements per value (one to each other party) in one round.

use super::{next, prev, purpose, Rep3, Rep3Vec};
use crate::net::{PartyId, Transport};
use crate::ring::{kernels, Ring};
use crate::Error;

impl<T: Transport> Rep3<T> {
    /// Secret-shares `n` values owned by compute party `owner`, who passes `Some(values)`;
    /// the others pass `None`. The owner's two components come from the keys it shares with
    /// each neighbour; the third, `x − x_o − x_{o+1}`, is sent to both (1 round).
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
        if (me == owner) != values.is_some() {
            return Err(Error::ApiMisuse(format!(
                "input from {owner}: exactly the owner passes values ({me} {})",
                if values.is_some() { "did" } else { "did not" }
            )));
        }
        let op = self.ctx.next_op();
        self.ctx.round();
        let mut a = vec![R::ZERO; n];
        let mut b = vec![R::ZERO; n];
        if me == owner {
            let x = values.unwrap_or_default();
            if x.len() != n {
                return Err(Error::ApiMisuse(format!("input: {} values for n = {n}", x.len())));
            }
            R::fill_random(&mut self.prg_prev(op, purpose::INPUT), &mut a);
            R::fill_random(&mut self.prg_next(op, purpose::INPUT), &mut b);
            let third: Vec<R> = x.iter().zip(a.iter().zip(&b)).map(|(x, (a, b))| *x - *a - *b).collect();
            self.ctx.send(next(me), &third)?;
            self.ctx.send(prev(me), &third)?;
        } else if me == next(owner) {
            R::fill_random(&mut self.prg_prev(op, purpose::INPUT), &mut a);
            b = self.ctx.recv(owner, n).await?;
        } else {
            R::fill_random(&mut self.prg_next(op, purpose::INPUT), &mut b);
            a = self.ctx.recv(owner, n).await?;
        }
        Ok(Rep3Vec::from_parts(me, a, b))
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
        x.a.iter()
            .zip(&x.b)
            .zip(y.a.iter().zip(&y.b))
            .map(|((xa, xb), (ya, yb))| *xa * (*ya + *yb) + *xb * *ya)
            .collect()
    }

    /// Elementwise `x·y` (1 round, 1 element per product per party).
    pub async fn mul<R: Ring>(&mut self, x: &Rep3Vec<R>, y: &Rep3Vec<R>) -> Result<Rep3Vec<R>, Error> {
        x.check_len(y, "mul")?;
        let z = Self::local_mul(x, y);
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
            return Err(Error::ApiMisuse(format!("dot: {} elements are not rows of {len}", x.len())));
        }
        let ysum: Vec<R> = y.a.iter().zip(&y.b).map(|(a, b)| *a + *b).collect();
        let z = x
            .a
            .chunks_exact(len)
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
        if a.len() != m * k || b.len() != k * n {
            return Err(Error::ApiMisuse(format!(
                "matmul: shapes {}x{} and {}x{} do not match {} and {} elements",
                m,
                k,
                k,
                n,
                a.len(),
                b.len()
            )));
        }
        let bsum: Vec<R> = b.a.iter().zip(&b.b).map(|(x, y)| *x + *y).collect();
        let mut z = kernels::matmul(&a.a, &bsum, m, k, n);
        kernels::matmul_acc(&a.b, &b.a, &mut z, m, k, n);
        self.reshare(z).await
    }
}
