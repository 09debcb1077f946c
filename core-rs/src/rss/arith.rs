//! Inputs from compute parties, openings, products (Protocol 1), matrix products and
//! multiply-and-open (Protocol 2).

use super::{purpose, Rss, RssVec};
use crate::net::{PartyId, Transport};
use crate::ring::{kernels, Ring};
use crate::Error;

impl<T: Transport> Rss<T> {
    /// Secret-shares `n` values owned by compute party `owner`, who passes `Some(values)`; the
    /// others pass `None`. Shares whose set contains the owner are 0 (their key would be known
    /// to `t + 1` parties with the owner, so adds no secrecy), the others but `χ(owner)` come
    /// from their keys, and the owner sends `χ(owner)`'s share, `x` minus the rest, to its `t`
    /// other holders (1 round, `t` elements per value from the owner).
    pub async fn input<R: Ring>(
        &mut self,
        owner: PartyId,
        values: Option<&[R]>,
        n: usize,
    ) -> Result<RssVec<R>, Error> {
        let me = self.me();
        if !self.roster().is_party(owner) {
            return Err(Error::ApiMisuse(format!("input owner {owner} is not a compute party")));
        }
        crate::sharing::check_input_values(me, owner, values, n)?;
        self.ctx.round();
        let pending = self.input_start(owner, values, n)?;
        self.input_finish(pending).await
    }

    /// The sending half of [`Rss::input`], without opening a round: several inputs (from
    /// several owners, over several rings) start, then finish, in one round.
    pub(crate) fn input_start<R: Ring>(
        &mut self,
        owner: PartyId,
        values: Option<&[R]>,
        n: usize,
    ) -> Result<PendingInput<R>, Error> {
        let me = self.me();
        let op = self.ctx.next_op();
        let sent = self.access.chi(owner);
        let mut v = self.zeros(n);
        let held = self.access.held(me).to_vec();
        for (pos, &s) in held.iter().enumerate() {
            if s != sent && !self.access.set(s).contains(owner) {
                self.draw(s, op, purpose::INPUT, 0, &mut v.shares[pos]);
            }
        }
        let Some(at) = self.access.position(me, sent) else {
            return Ok(PendingInput { v, from: None });
        };
        match values {
            Some(x) => {
                let mut rest = x.to_vec();
                for (pos, share) in v.shares.iter().enumerate() {
                    if pos != at {
                        kernels::sub_assign(&mut rest, share);
                    }
                }
                for h in self.access.holders(sent).filter(|&h| h != me).collect::<Vec<_>>() {
                    self.ctx.send(h, &rest)?;
                }
                v.shares[at] = rest;
                Ok(PendingInput { v, from: None })
            }
            None => Ok(PendingInput { v, from: Some((owner, at)) }),
        }
    }

    /// The receiving half of [`Rss::input`].
    pub(crate) async fn input_finish<R: Ring>(
        &mut self,
        pending: PendingInput<R>,
    ) -> Result<RssVec<R>, Error> {
        let PendingInput { mut v, from } = pending;
        if let Some((owner, at)) = from {
            v.shares[at] = self.ctx.recv(owner, v.len()).await?;
        }
        Ok(v)
    }

    /// Opens `x` to every party (1 round, `t` elements per value per party: sums of shares to
    /// each of the `t` parties after it).
    pub async fn open<R: Ring>(&mut self, x: RssVec<R>) -> Result<Vec<R>, Error> {
        let me = self.me();
        self.ctx.round();
        for to in self.access.open_receivers(me).collect::<Vec<_>>() {
            let sum = self.sum_for(&x, to);
            self.ctx.send(to, &sum)?;
        }
        self.reconstruct(x).await
    }

    /// Opens `x` to compute party `to` only (1 round, one element per value from each of the
    /// `t` parties before it). `to` gets `Some(values)`, the others `None`.
    pub async fn open_to_party<R: Ring>(
        &mut self,
        to: PartyId,
        x: RssVec<R>,
    ) -> Result<Option<Vec<R>>, Error> {
        if !self.roster().is_party(to) {
            return Err(Error::ApiMisuse(format!("open_to: {to} is not a compute party")));
        }
        let me = self.me();
        self.ctx.round();
        if me == to {
            return self.reconstruct(x).await.map(Some);
        }
        if self.access.open_senders(to).any(|s| s == me) {
            let sum = self.sum_for(&x, to);
            self.ctx.send(to, &sum)?;
        }
        Ok(None)
    }

    /// The sum of `x`'s shares that this party sends `to` when opening.
    fn sum_for<R: Ring>(&self, x: &RssVec<R>, to: PartyId) -> Vec<R> {
        let mut sum = vec![R::ZERO; x.len()];
        for pos in self.access.open_sums(self.me(), to) {
            kernels::add_assign(&mut sum, &x.shares[pos]);
        }
        sum
    }

    /// The value: this party's shares plus the sums the `t` parties before it send.
    async fn reconstruct<R: Ring>(&mut self, x: RssVec<R>) -> Result<Vec<R>, Error> {
        let n = x.len();
        let mut shares = x.shares.into_iter();
        let mut out = shares.next().unwrap_or_default();
        for s in shares {
            kernels::add_assign(&mut out, &s);
        }
        for from in self.access.open_senders(self.me()).collect::<Vec<_>>() {
            let part = self.ctx.recv::<R>(from, n).await?;
            kernels::add_assign(&mut out, &part);
        }
        Ok(out)
    }

    /// This party's additive part of `x·y`: its products `x_T1·y_T2` (the map ρ).
    pub(crate) fn local_mul<R: Ring>(&self, x: &RssVec<R>, y: &RssVec<R>) -> Vec<R> {
        let mut v = vec![R::ZERO; x.len()];
        for prod in self.access.products(self.me()) {
            let right = sum_of(y, &prod.right);
            for ((v, &a), b) in v.iter_mut().zip(&x.shares[prod.left]).zip(right) {
                *v += a * b;
            }
        }
        v
    }

    /// This party's additive part of the matrix product `a·b` (a: m×k, b: k×n).
    pub(crate) fn local_matmul<R: Ring>(
        &self,
        a: &RssVec<R>,
        b: &RssVec<R>,
        (m, k, n): (usize, usize, usize),
    ) -> Result<Vec<R>, Error> {
        crate::sharing::check_dims("matmul", a.len(), b.len(), (m, k, n))?;
        let mut v = vec![R::ZERO; m * n];
        for prod in self.access.products(self.me()) {
            let right = sum_of(b, &prod.right);
            kernels::matmul_acc(&a.shares[prod.left], &right, &mut v, m, k, n);
        }
        Ok(v)
    }

    /// Turns this party's additive part `v` of a value into a sharing (Protocol 1's second
    /// half): every party's part is split into pseudo-random shares but `χ(p)`'s, which it
    /// sends to the `t` other holders of `χ(p)` (1 round, `t` elements per value).
    pub(crate) async fn reshare<R: Ring>(&mut self, mut v: Vec<R>) -> Result<RssVec<R>, Error> {
        let me = self.me();
        let n = v.len();
        let op = self.ctx.next_op();
        let mut c = self.zeros(n);
        let mut z = vec![R::ZERO; n];
        let held = self.access.held(me).to_vec();
        for (pos, &s) in held.iter().enumerate() {
            for p in self.access.holders(s).collect::<Vec<_>>() {
                if self.access.chi(p) == s {
                    continue;
                }
                self.draw(s, op, purpose::MUL, u32::from(p.0), &mut z);
                kernels::add_assign(&mut c.shares[pos], &z);
                if p == me {
                    kernels::sub_assign(&mut v, &z);
                }
            }
        }
        self.ctx.round();
        let mine = self.access.chi(me);
        for h in self.access.holders(mine).filter(|&h| h != me).collect::<Vec<_>>() {
            self.ctx.send(h, &v)?;
        }
        for p in self.roster().others(me).collect::<Vec<_>>() {
            if let Some(pos) = self.access.position(me, self.access.chi(p)) {
                let y = self.ctx.recv::<R>(p, n).await?;
                kernels::add_assign(&mut c.shares[pos], &y);
            }
        }
        let at = self.access.position(me, mine).expect("a party holds its own χ share");
        kernels::add_assign(&mut c.shares[at], &v);
        Ok(c)
    }

    /// Elementwise `x·y` (1 round, `t` elements per product per party).
    pub async fn mul<R: Ring>(&mut self, x: &RssVec<R>, y: &RssVec<R>) -> Result<RssVec<R>, Error> {
        crate::sharing::same_len(x.len(), y.len(), "mul")?;
        let v = self.local_mul(x, y);
        self.reshare(v).await
    }

    /// Matrix product of `a` (m×k) and `b` (k×n), row-major (1 round, `t` elements per output
    /// per party: a dot product costs one multiplication).
    pub async fn matmul<R: Ring>(
        &mut self,
        a: &RssVec<R>,
        b: &RssVec<R>,
        dims: (usize, usize, usize),
    ) -> Result<RssVec<R>, Error> {
        let v = self.local_matmul(a, b, dims)?;
        self.reshare(v).await
    }

    /// `x·y` opened to every party in one round (Protocol 2; `n − 1` elements per value per
    /// party): each party's part, masked so that the masks sum to zero, to every other party.
    pub async fn mul_pub<R: Ring>(
        &mut self,
        x: &RssVec<R>,
        y: &RssVec<R>,
    ) -> Result<Vec<R>, Error> {
        crate::sharing::same_len(x.len(), y.len(), "mul_pub")?;
        let v = self.local_mul(x, y);
        self.open_parts(v).await
    }

    /// Opens the sum over all parties of their additive parts `v` (1 round, `n − 1` elements
    /// per value and party): each sends its part plus its zero-sum mask to every other.
    pub(crate) async fn open_parts<R: Ring>(&mut self, mut v: Vec<R>) -> Result<Vec<R>, Error> {
        let op = self.ctx.next_op();
        self.add_zero_sum_mask(op, &mut v);
        let me = self.me();
        let others: Vec<PartyId> = self.roster().others(me).collect();
        self.ctx.round();
        for &j in &others {
            self.ctx.send(j, &v)?;
        }
        for &j in &others {
            let part = self.ctx.recv::<R>(j, v.len()).await?;
            kernels::add_assign(&mut v, &part);
        }
        Ok(v)
    }

    /// This party's additive part of `x`: the shares it is the lowest holder of (each share is
    /// counted by exactly one party).
    pub(crate) fn additive_part<R: Ring>(&self, x: &RssVec<R>) -> Vec<R> {
        let me = self.me();
        let mut part = vec![R::ZERO; x.len()];
        for (pos, &s) in self.access.held(me).iter().enumerate() {
            if self.access.rank(me, s) == Some(0) {
                kernels::add_assign(&mut part, &x.shares[pos]);
            }
        }
        part
    }

    /// Adds this party's part of masks that sum to zero over all parties: for each share it
    /// holds, a holder of rank `j < t` adds draw `j` of the share's key and the highest-ranked
    /// holder subtracts all `t` draws. Any `t` parties miss the key of their own set, whose
    /// draws mask every other party's value with a distinct draw (Theorem 2 needs them
    /// distinct).
    pub(crate) fn add_zero_sum_mask<R: Ring>(&mut self, op: u64, v: &mut [R]) {
        let me = self.me();
        let t = self.roster().t();
        let mut z = vec![R::ZERO; v.len()];
        for s in self.access.held(me).to_vec() {
            let rank = self.access.rank(me, s).expect("a holder has a rank");
            if rank < t {
                self.draw(s, op, purpose::ZERO_SUM, rank as u32, &mut z);
                kernels::add_assign(v, &z);
            } else {
                for i in 0..t {
                    self.draw(s, op, purpose::ZERO_SUM, i as u32, &mut z);
                    kernels::sub_assign(v, &z);
                }
            }
        }
    }
}

/// An input whose owner's message may still be on its way: the shares so far, and where the
/// owner's share goes when it is received.
pub(crate) struct PendingInput<R> {
    v: RssVec<R>,
    from: Option<(PartyId, usize)>,
}

/// The sum of `x`'s shares at `positions`.
fn sum_of<R: Ring>(x: &RssVec<R>, positions: &[usize]) -> Vec<R> {
    let mut out = x.shares[positions[0]].clone();
    for &r in &positions[1..] {
        kernels::add_assign(&mut out, &x.shares[r]);
    }
    out
}
