//! mal3 as a [`crate::sharing`] scheme: [`Mal3`], rep3's sharing and products with every
//! product checked against a validated triple before any value is opened.
//!
//! A product is computed at once with rep3's protocol (one round, one element per party) and
//! recorded; the first opening afterwards checks every recorded product of the session in one
//! batch, each against its own validated triple ([`super::check::check_products`]), and then
//! opens with each missing component received from both of its holders
//! ([`super::check::open`]). So nothing is released while a wrong product goes unnoticed.
//!
//! Triples come from a pool, refilled by one cut-and-bucket run sized to what is missing
//! (2^−40 at least, [`Params::for_count`], [`super::triples`]): preparing a product tops it up
//! with one triple per output, and a check takes the next ones (refilling the pool if it runs
//! low). With [`Mal3::check_on_demand`] a check instead takes the triples at coin-tossed
//! indices of Protocol 3.9's array ([`OnDemand`]), with buckets of 2. A matrix
//! product is rep3's, recorded and checked with the batch's other matrix products by one dot
//! product over GR(2^k, 42) ([`super::matrix`]), without triples. A fixed-point product also
//! takes truncation pairs made without single-party inputs ([`super::trunc`]; the material is
//! rep3's [`ProductPrep`]) and opens its masked result from both holders of each component. A client's input is checked for consistency and its output
//! reaches it twice per component ([`super::client`]).

use super::check;
use super::matrix::{self, MatProduct};
use super::triples::{self, OnDemand, Params, Reservoir, Triples};
use crate::net::{PartyId, Transport};
use crate::rep3::scheme::ProductPrep;
use crate::rep3::{Rep3, Rep3Vec, TruncPairs};
use crate::ring::{Bits, IntRing, Ring, Z32, Z64};
use crate::sharing::{check_dims, Arith, InputSlot, Len, Linear, Session};
use crate::Error;

/// A party of the `mal3` scheme over Z_2^32 and Z_2^64, on a rep3 session.
pub struct Mal3<T> {
    pub(super) p: Rep3<T>,
    /// Protocol 3.9's parameters when the checks draw their triples on demand.
    on_demand: Option<OnDemand>,
    /// The pool's runs are the paper's baseline (Protocol A.1, `L = 1`).
    baseline: bool,
    z32: Book<Z32>,
    z64: Book<Z64>,
    bits: Book<Bits>,
}

impl<T: Transport> core::fmt::Debug for Mal3<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Mal3({})", self.p.me())
    }
}

/// One ring's validated triples not yet used (Protocol 3.1's pool, or Protocol 3.9's two
/// arrays), and its products not yet checked.
pub struct Book<R> {
    pool: Option<Triples<R>>,
    reservoir: Option<Reservoir<R>>,
    pending: Vec<[Rep3Vec<R>; 3]>,
    matrices: Vec<MatProduct<R>>,
}

impl<R> Default for Book<R> {
    fn default() -> Self {
        Self { pool: None, reservoir: None, pending: Vec::new(), matrices: Vec::new() }
    }
}

/// The rings mal3 computes in (each has its own book in a [`Mal3`]): Z_2^32 and Z_2^64, and
/// [`Bits`] for the ANDs of its boolean circuits (a triple there is 64 bitsliced AND triples,
/// checked as one ball).
pub trait Mal3Ring: Ring {
    /// This ring's book in `m`.
    fn book<T>(m: &mut Mal3<T>) -> &mut Book<Self>;
}

impl Mal3Ring for Z32 {
    fn book<T>(m: &mut Mal3<T>) -> &mut Book<Self> {
        &mut m.z32
    }
}

impl Mal3Ring for Z64 {
    fn book<T>(m: &mut Mal3<T>) -> &mut Book<Self> {
        &mut m.z64
    }
}

impl Mal3Ring for Bits {
    fn book<T>(m: &mut Mal3<T>) -> &mut Book<Self> {
        &mut m.bits
    }
}

impl<T: Transport> Mal3<T> {
    /// This party's id.
    pub fn me(&self) -> PartyId {
        self.p.me()
    }

    /// Switches this session's product checks to Protocol 3.9 (on demand, buckets of 2):
    /// every check from now on takes its triples at coin-tossed indices of an array of `N`
    /// validated triples ([`OnDemand`]). Refused while products wait for their check or
    /// triples wait in Protocol 3.1's pool.
    ///
    /// ```
    /// use ringfence_core::{mal3::{Mal3, triples::{OnDemand, Params}}, ring::Z64, testing};
    /// use ringfence_core::sharing::{Arith, Len, Session};
    /// let small = OnDemand::new(Params { n: 1024, b: 2, c: 3, l: 8 })?; // 2^−20: a test's
    /// let outs = testing::run_rep3_on(&testing::Net::new(3), 3, 1, |p| async move {
    ///     let mut s = Mal3::start(p);
    ///     s.check_on_demand(small)?;
    ///     let x = s.constant(&[Z64(6)]);
    ///     let (prep, _) = s.mul_prep(&Len(1), &Len(1), 0).await?;
    ///     let y = s.mul(&x, &x, prep).await?;
    ///     s.open(y).await
    /// });
    /// assert!(outs.iter().all(|o| o.as_deref() == Ok(&[Z64(36)][..])));
    /// # Ok::<(), ringfence_core::Error>(())
    /// ```
    pub fn check_on_demand(&mut self, params: OnDemand) -> Result<(), Error> {
        let busy = |b: (usize, usize)| b != (0, 0);
        let (a, b, c) = (self.z32.usage(), self.z64.usage(), self.bits.usage());
        if busy(a) || busy(b) || busy(c) {
            return Err(Error::ApiMisuse(
                "mal3: on-demand checks are chosen before any product or preparation".into(),
            ));
        }
        self.on_demand = Some(params);
        Ok(())
    }

    /// Makes the pool's cut-and-bucket runs the paper's baseline (Protocol A.1: each checking
    /// array shuffled whole, [`Params::baseline_for_count`]) instead of Protocol 3.1's
    /// subarrays, to compare the two (the paper's Table II); the bound is the same. Refused
    /// with on-demand checks (they have their own runs) or once the pool has triples.
    pub fn use_baseline_runs(&mut self) -> Result<(), Error> {
        let (a, b, c) = (self.z32.usage(), self.z64.usage(), self.bits.usage());
        if self.on_demand.is_some() || a.0 + b.0 + c.0 > 0 {
            return Err(Error::ApiMisuse(
                "mal3: baseline runs are chosen before any triple, without on-demand checks".into(),
            ));
        }
        self.baseline = true;
        Ok(())
    }

    /// `n` validated triples of ring `R`, from the pool (refilled as needed).
    pub(super) async fn triples<R: Mal3Ring>(&mut self, n: usize) -> Result<Triples<R>, Error> {
        self.reserve::<R>(n).await?;
        match R::book(self).pool.as_mut() {
            Some(pool) => pool.take(n),
            None if n == 0 => Ok(Triples::concat(Vec::new())),
            None => Err(Error::PreprocessingExhausted(format!("{n} triples: the pool is empty"))),
        }
    }

    /// Adds dealt triples to the pool (tests only: the checks tested apart from the
    /// cut-and-bucket that validates the pool's triples, [`crate::testing::ideal::Dealer`]).
    #[cfg(any(test, feature = "test-utils"))]
    pub fn stock_dealt_triples<R: Mal3Ring>(&mut self, t: Triples<R>) {
        let book = R::book(self);
        book.pool = Some(match book.pool.take() {
            Some(old) => Triples::concat(vec![old, t]),
            None => t,
        });
    }

    /// Material for `outputs` results, truncated by `frac_bits` when it is not zero, whose
    /// checks take `triples` triples (made now).
    async fn product_prep<R: Mal3Ring + IntRing>(
        &mut self,
        outputs: usize,
        triples: usize,
        frac_bits: u32,
    ) -> Result<ProductPrep<R>, Error> {
        self.reserve::<R>(triples).await?;
        let trunc = match frac_bits {
            0 => None,
            d => Some(self.trunc_pairs::<R>(outputs, d).await?),
        };
        // The pairs' products are checked now: material leaves its preparation verified, even
        // when it is used in another session (a service's stock).
        self.check_pending().await?;
        Ok(ProductPrep { outputs, trunc })
    }

    /// Makes validated triples until `n` more checks can draw theirs without a run: Protocol
    /// 3.1's pool topped up by one run sized to what is missing ([`Params::for_count`], at most
    /// [`Params::MAX_RUN`] triples a run), or on demand both arrays filled and the refill
    /// array holding `n`.
    pub(super) async fn reserve<R: Mal3Ring>(&mut self, n: usize) -> Result<(), Error> {
        if let Some(prm) = self.on_demand {
            let mut res = match R::book(self).reservoir.take() {
                Some(res) => res,
                None => Reservoir::fill(&mut self.p, &prm).await?,
            };
            let done = res.replenish(&mut self.p, &prm, n).await;
            R::book(self).reservoir = Some(res);
            return done;
        }
        let mut pool = R::book(self).pool.take();
        loop {
            let have = pool.as_ref().map_or(0, Triples::len);
            if have >= n {
                break;
            }
            let prm = match self.baseline {
                true => Params::baseline_for_count(n - have),
                false => Params::for_count(n - have),
            };
            let more = match triples::validated::<R, T>(&mut self.p, &prm).await {
                Ok(more) => more,
                Err(e) => {
                    R::book(self).pool = pool;
                    return Err(e);
                }
            };
            pool = Some(match pool {
                Some(old) => Triples::concat(vec![old, more]),
                None => more,
            });
        }
        R::book(self).pool = pool;
        Ok(())
    }

    /// `x·y` elementwise by rep3's product, recorded for the check before the next opening.
    /// One round.
    pub(super) async fn checked_mul<R: Mal3Ring>(
        &mut self,
        x: &Rep3Vec<R>,
        y: &Rep3Vec<R>,
    ) -> Result<Rep3Vec<R>, Error> {
        if x.len() != y.len() {
            return Err(Error::ApiMisuse(format!(
                "mul: operands of {} and {} values",
                x.len(),
                y.len()
            )));
        }
        let z = self.p.mul(x, y).await?;
        self.record(x.clone(), y.clone(), z.clone());
        Ok(z)
    }

    /// Truncates `z` when `trunc` holds pairs.
    async fn finish<R: Mal3Ring + IntRing>(
        &mut self,
        z: Rep3Vec<R>,
        trunc: Option<TruncPairs<R>>,
    ) -> Result<Rep3Vec<R>, Error> {
        match trunc {
            Some(pairs) => self.truncate(z, pairs).await,
            None => Ok(z),
        }
    }

    /// Records `z = x·y`, computed by rep3's product, to be checked before the next opening.
    pub(super) fn record<R: Mal3Ring>(&mut self, x: Rep3Vec<R>, y: Rep3Vec<R>, z: Rep3Vec<R>) {
        R::book(self).pending.push([x, y, z]);
    }

    /// Checks now every product and AND computed since the last check (every opening does
    /// this first): for a caller that wants a deviation found before more work, or a benchmark
    /// that times an operation with its check. All parties call it at the same point.
    ///
    /// ```
    /// use ringfence_core::{mal3::Mal3, ring::Z64, testing};
    /// use ringfence_core::sharing::{Arith, Len, Session};
    /// let outs = testing::run_rep3(3, |p| async move {
    ///     let mut s = Mal3::start(p);
    ///     let x = s.constant(&[Z64(7)]);
    ///     let (prep, _) = s.mul_prep(&Len(1), &Len(1), 0).await?;
    ///     let y = s.mul(&x, &x, prep).await?;
    ///     s.verify().await?; // the product's check runs here, not at the opening
    ///     s.open(y).await
    /// });
    /// assert!(outs.iter().all(|o| o[..] == [Z64(49)]));
    /// ```
    pub async fn verify(&mut self) -> Result<(), Error> {
        self.check_pending().await
    }

    /// Checks every product not yet checked, in every ring (before any opening).
    pub(super) async fn check_pending(&mut self) -> Result<(), Error> {
        self.check_ring::<Z32>().await?;
        self.check_ring::<Z64>().await?;
        self.check_ring::<Bits>().await
    }

    /// One check of every pending product of ring `R`, each against its own validated triple:
    /// the pool's next ones, or on demand the triples at indices drawn from a coin tossed now
    /// that the products are fixed (Protocol 3.9, step 3).
    async fn check_ring<R: Mal3Ring>(&mut self) -> Result<(), Error> {
        let matrices = core::mem::take(&mut R::book(self).matrices);
        matrix::check_matmuls(&mut self.p, &matrices).await?;
        let pending = core::mem::take(&mut R::book(self).pending);
        if pending.is_empty() {
            return Ok(());
        }
        let [x, y, z] = match <[_; 1]>::try_from(pending) {
            Ok([one]) => one,
            Err(pending) => core::array::from_fn(|i| {
                Rep3Vec::concat(&pending.iter().map(|o| &o[i]).collect::<Vec<_>>())
            }),
        };
        let triples = match self.on_demand {
            None => self.triples::<R>(x.len()).await?,
            Some(_) => {
                self.reserve::<R>(x.len()).await?;
                let seed = triples::coin(&mut self.p).await?;
                let mut prg = crate::prg::Prg::new(&seed, 0, 0);
                match R::book(self).reservoir.as_mut() {
                    Some(res) => res.draw(&mut prg, x.len())?,
                    None => return Err(Error::PreprocessingExhausted("mal3: no triples".into())),
                }
            }
        };
        check::check_products(&mut self.p, &x, &y, &z, triples).await
    }
}

impl<R> Book<R> {
    /// Triples waiting in Protocol 3.1's pool and products waiting for their check.
    fn usage(&self) -> (usize, usize) {
        (self.pool.as_ref().map_or(0, |p| p.a.a.len()), self.pending.len() + self.matrices.len())
    }
}

impl<T: Transport, R: Mal3Ring + IntRing> Arith<R> for Mal3<T> {
    type V = Rep3Vec<R>;
    type Tag = Len;
    type InputPrep = InputSlot;
    type MulPrep = ProductPrep<R>;
    type MatMulPrep = ProductPrep<R>;

    const NAME: &'static str = "mal3";

    fn me(&self) -> PartyId {
        self.p.me()
    }

    fn tag(x: &Rep3Vec<R>) -> Len {
        <Rep3<T> as Arith<R>>::tag(x)
    }

    fn constant(&self, c: &[R]) -> Rep3Vec<R> {
        Arith::<R>::constant(&self.p, c)
    }

    fn input_prep(&mut self, owner: PartyId, n: usize) -> (InputSlot, Len) {
        Arith::<R>::input_prep(&mut self.p, owner, n)
    }

    async fn deliver_input_prep(&mut self, prep: &InputSlot) -> Result<(), Error> {
        Arith::<R>::deliver_input_prep(&mut self.p, prep).await
    }

    /// rep3's input: whatever a party owner sends, the sharing is valid (a cheating owner only
    /// chooses its own value). A client's input is checked by rep3 for consistency (the
    /// parties compare digests of every component's two copies); since a cheating server can
    /// fail that comparison as well as an inconsistent client can, a failure here is an
    /// [`Error::Abort`] that blames no one.
    async fn input(
        &mut self,
        owner: PartyId,
        values: Option<&[R]>,
        prep: InputSlot,
    ) -> Result<Rep3Vec<R>, Error> {
        match Arith::<R>::input(&mut self.p, owner, values, prep).await {
            Err(Error::PeerMisbehaved { peer, reason }) if peer == owner => Err(Error::Abort {
                blame: None,
                reason: format!("input from {owner}: {reason} (the client or a server deviated)"),
            }),
            other => other,
        }
    }

    async fn open(&mut self, x: Rep3Vec<R>) -> Result<Vec<R>, Error> {
        self.check_pending().await?;
        check::open(&mut self.p, x).await
    }

    /// To a compute party: its missing component from both holders ([`check::open_to`]). To a
    /// client: both components from every party ([`check::open_to_client`]); the client
    /// compares the two copies of each ([`super::client::Mal3Client`]).
    async fn open_to(&mut self, to: PartyId, x: Rep3Vec<R>) -> Result<Option<Vec<R>>, Error> {
        self.check_pending().await?;
        if crate::net::Roster::THREE.is_party(to) {
            check::open_to(&mut self.p, to, x).await
        } else {
            check::open_to_client(&mut self.p, to, x).await?;
            Ok(None)
        }
    }

    async fn mul_prep(
        &mut self,
        x: &Len,
        y: &Len,
        frac_bits: u32,
    ) -> Result<(ProductPrep<R>, Len), Error> {
        Linear::<R>::add(x, y)?;
        Ok((self.product_prep(x.0, x.0, frac_bits).await?, *x))
    }

    async fn mul(
        &mut self,
        x: &Rep3Vec<R>,
        y: &Rep3Vec<R>,
        prep: ProductPrep<R>,
    ) -> Result<Rep3Vec<R>, Error> {
        prep.check("mul", x.len())?;
        let z = self.checked_mul(x, y).await?;
        self.finish(z, prep.trunc).await
    }

    async fn matmul_prep(
        &mut self,
        a: &Len,
        b: &Len,
        dims: (usize, usize, usize),
        frac_bits: u32,
    ) -> Result<(ProductPrep<R>, Len), Error> {
        check_dims("matmul", a.0, b.0, dims)?;
        let (m, _, n) = dims;
        Ok((self.product_prep(m * n, 0, frac_bits).await?, Len(m * n)))
    }

    async fn matmul(
        &mut self,
        a: &Rep3Vec<R>,
        b: &Rep3Vec<R>,
        dims: (usize, usize, usize),
        prep: ProductPrep<R>,
    ) -> Result<Rep3Vec<R>, Error> {
        check_dims("matmul", a.len(), b.len(), dims)?;
        let (m, k, n) = dims;
        prep.check("matmul", m * n)?;
        let z = self.p.matmul(a, b, m, k, n).await?;
        R::book(self).matrices.push(MatProduct::new(a.clone(), b.clone(), z.clone(), dims)?);
        self.finish(z, prep.trunc).await
    }
}

/// mal3 runs on a rep3 session. Products left unchecked when a party finishes were never
/// followed by an opening, so dropping them releases nothing; material (`mul_prep`,
/// `matmul_prep`, `bit_prep`) is checked before it is returned, so it stays sound when used
/// by another session on the same base.
impl<T> Session<Rep3<T>> for Mal3<T> {
    fn start(base: Rep3<T>) -> Self {
        Self {
            p: base,
            on_demand: None,
            baseline: false,
            z32: Book::default(),
            z64: Book::default(),
            bits: Book::default(),
        }
    }
    fn finish(self) -> Rep3<T> {
        self.p
    }
    fn base(&self) -> &Rep3<T> {
        &self.p
    }
    fn base_mut(&mut self) -> &mut Rep3<T> {
        &mut self.p
    }
}
