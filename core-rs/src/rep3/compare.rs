//! rep3's boolean primitives and [`Boolean`] for [`Rep3`]: A2B, MSB, equality, daBits, bit
//! injection and multiplexing. The comparisons, ReLU, maxima and argmax built on them are
//! [`Boolean`]'s provided methods; rep3 overrides equality, which its sharing makes cheaper
//! than the generic A2B and AND tree.
//!
//! **A2B / MSB.** `x = x0 + (x1 + x2)`: P0 and P2 both know `x0`, P1 knows `x1 + x2` and
//! boolean-shares it in one message, so the adder has two inputs (no 3→2 carry-save layer).
//! MSB = `a_{k-1} ⊕ b_{k-1} ⊕ carry into k-1`, from the pruned carry network (`adder`).
//! Cost per value: P1 sends k bits, then the g layer (k − 1 ANDs) and a pruned prefix tree of
//! k − 2 merges (2 ANDs each, 1 for the ⌈log₂(k−1)⌉ merges that touch position 0):
//! **3k − 5 − ⌈log₂(k−1)⌉ AND bits per party in 2 + ⌈log₂(k−1)⌉ rounds** — for k = 64, 181 bits
//! (22.6 bytes) per party plus 8 bytes from P1, 8 rounds (asserted by the conformance suite
//! `bit_costs`, whose rep3 model is in `tests/conformance.rs`).
//!
//! **Equality** needs no carries: `x = y ⇔ d0 = −(d1 + d2)` bitwise for `d = x − y`, so it is one
//! sharing message from P1 plus an AND tree over k bits: 1 + log₂k rounds, k − 1 ANDs.
//!
//! **Bit injection** uses a daBit `(r^B, r^A)`: open `c = b ⊕ r` (k/64 words per party) and set
//! `b^A = c + (1 − 2c)·r^A`. A bit times a value, `b·x = c·x + (1 − 2c)·(r^A·x)`, opens `c`
//! and multiplies `r^A·x` in the same round: 1 round, one element per value.

use super::adder::{sum_bits, sum_msbs};
use super::binary::{to_planes_into, unpack_bits, words, AndPair, Planes};
use super::prep::DaBits;
use super::{next, prev, Rep3, Rep3Vec};
use crate::net::{PartyId, Transport};
use crate::ring::{kernels, Bits, IntRing, Ring};
use crate::sharing::{pack_bits, Boolean, Gates, Packed, WordShares};
use crate::Error;

/// How rep3 evaluates the boolean part of its comparisons (MSB, and with it every comparison,
/// ReLU, maximum and argmax). Every party of a session must use the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Comparisons {
    /// Two-input ANDs on rep3's sharing: `2 + ⌈log₂(k−1)⌉` rounds, `3k − 5 − ⌈log₂(k−1)⌉`
    /// AND bits per party and `k` bits from P1 (the module documentation).
    #[default]
    TwoInput,
    /// Multi-fan-in gates on bin3's sharing, converted to and from locally:
    /// `1 + ⌈log_ℓ ⌈(k−1)/r⌉⌉` rounds ([`crate::bin3::FanIn::msb_cost`]).
    FanIn(crate::bin3::FanIn),
}

impl Comparisons {
    /// Rounds of one `bits`-bit MSB (every comparison, ReLU or tournament level runs one).
    pub fn msb_rounds(&self, bits: usize) -> usize {
        self.msb_cost(bits).rounds
    }

    /// What one `bits`-bit MSB costs per value: rounds, and bits sent by each party — for
    /// [`Comparisons::TwoInput`] by P0, P1, P2 (P1 shares its part of the addends), for
    /// [`Comparisons::FanIn`] by the seats P1, P2, P3 ([`crate::bin3::FanIn::msb_cost`]).
    pub fn msb_cost(&self, bits: usize) -> crate::bin3::Cost {
        match self {
            Self::TwoInput => {
                let ands = super::adder::carry_ands(&[bits - 2]);
                // P1's sharing, the g layer, then the network's levels over k − 1 positions.
                let rounds = 2 + super::adder::levels(bits - 1) as usize;
                crate::bin3::Cost { rounds, bits: [ands, ands + bits, ands] }
            }
            Self::FanIn(f) => f.msb_cost(bits),
        }
    }

    /// The fastest way to run MSBs of `bits` bits over `runs` values each (one entry per
    /// batched MSB run, in order; [`super::comparison_runs`] lists a model's) on links of
    /// round-trip `rtt_s` seconds and `bytes_per_s` bytes per second each way: the least
    /// `Σ rounds · rtt + (bytes on the busiest directed link) / rate` over two-input gates and
    /// every multi-fan-in setting (seats as in `roles`); of those within 1 % of the least, the
    /// one that sends the fewest bits in all. Computation is not modelled: large groups cost
    /// more local work (on LeNet with 16 samples on an emulated 70 ms WAN this picks `4,4`,
    /// the fastest measured; see BENCHMARKS.md).
    ///
    /// ```
    /// use ringfence_core::{bin3::Roles, rep3::Comparisons};
    /// // A few values on a 70 ms WAN: the fewest rounds win.
    /// let c = Comparisons::for_network(64, &[100], 0.070, 40e6, Roles::default());
    /// assert_eq!(c.msb_rounds(64), 2);
    /// // A million values on a fast LAN: bytes count more than rounds.
    /// let c = Comparisons::for_network(64, &[1 << 20], 0.0005, 125e6, Roles::default());
    /// assert!(c.msb_rounds(64) > 2);
    /// ```
    pub fn for_network(
        bits: usize,
        runs: &[usize],
        rtt_s: f64,
        bytes_per_s: f64,
        roles: crate::bin3::Roles,
    ) -> Self {
        let time = |c: &Self| {
            let cost = c.msb_cost(bits);
            // The busiest directed link: on bin3, P3 splits what it sends between P1 and P2.
            let busiest = match c {
                Self::TwoInput => cost.bits.iter().copied().max().unwrap_or(0),
                Self::FanIn(_) => cost.bits[0].max(cost.bits[1]).max(cost.bits[2].div_ceil(2)),
            };
            runs.iter()
                .map(|&v| {
                    let bytes = (busiest * v.div_ceil(64) * 8) as f64;
                    cost.rounds as f64 * rtt_s + bytes / bytes_per_s.max(1.0)
                })
                .sum::<f64>()
        };
        let fan_ins = (1..=crate::bin3::MAX_GROUP).flat_map(|r| {
            (2..=crate::bin3::gates::MAX_FAN_IN)
                .filter_map(move |l| crate::bin3::FanIn::new(roles, r, l).ok().map(Self::FanIn))
        });
        let all: Vec<(Self, f64)> =
            core::iter::once(Self::TwoInput).chain(fan_ins).map(|c| (c, time(&c))).collect();
        let best = all.iter().map(|(_, t)| *t).fold(f64::INFINITY, f64::min);
        // Among settings within 1 % of the fastest, the one sending the least in all: the
        // model's ties are not ties on a machine that also computes.
        let sent = |c: &Self| c.msb_cost(bits).bits.iter().sum::<usize>();
        all.into_iter()
            .filter(|(_, t)| *t <= best * 1.01)
            .min_by_key(|(c, _)| sent(c))
            .map(|(c, _)| c)
            .unwrap_or_default()
    }
}

impl Comparisons {
    /// The setting [`Comparisons::word`] gave, if it is one.
    pub fn from_word(w: u64) -> Option<Self> {
        if w == 0 {
            return Some(Self::TwoInput);
        }
        let field = |at: u32| ((w >> at) & 0xff) as usize;
        let seat = |at: u32| PartyId(field(at) as u8);
        let roles = crate::bin3::Roles::new(seat(24), seat(32), seat(40)).ok()?;
        let f = crate::bin3::FanIn::new(roles, field(8), field(16)).ok()?;
        let c = Self::FanIn(f);
        (c.word() == w).then_some(c)
    }

    /// One word that differs between any two settings (the servers compare it before running a
    /// request): 0 for two-input gates; the group width, fan-in and seats otherwise.
    pub fn word(&self) -> u64 {
        match self {
            Self::TwoInput => 0,
            Self::FanIn(f) => {
                let r = f.roles();
                let seat = |role| u64::from(r.party(role).0);
                use crate::bin3::Role::{P1, P2, P3};
                1 | (f.group() as u64) << 8
                    | (f.fan_in() as u64) << 16
                    | seat(P1) << 24
                    | seat(P2) << 32
                    | seat(P3) << 40
            }
        }
    }
}

/// `two-input`, or `fan-in:R,L` with the default seats (P2 in seat P3).
impl core::fmt::Display for Comparisons {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::TwoInput => f.write_str("two-input"),
            Self::FanIn(x) if x.roles() == crate::bin3::Roles::default() => {
                write!(f, "fan-in:{},{}", x.group(), x.fan_in())
            }
            Self::FanIn(x) => {
                write!(f, "fan-in:{},{} (seats {:?})", x.group(), x.fan_in(), x.roles())
            }
        }
    }
}

/// `two-input`, `fan-in` (groups and gates of 4) or `fan-in:R,L` (groups of R bits, 1..=8,
/// then gates of up to L inputs, 2..=8), with the default seats.
///
/// ```
/// use ringfence_core::rep3::Comparisons;
/// let c: Comparisons = "fan-in:8,8".parse().unwrap();
/// assert_eq!(c.msb_rounds(64), 2);
/// assert_eq!(c.to_string(), "fan-in:8,8");
/// assert!("fan-in:9,4".parse::<Comparisons>().is_err());
/// ```
impl core::str::FromStr for Comparisons {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let usage = "two-input, fan-in, or fan-in:R,L (R = 1..=8, L = 2..=8)";
        match s {
            "two-input" => return Ok(Self::TwoInput),
            "fan-in" => return Ok(Self::FanIn(crate::bin3::FanIn::default())),
            _ => {}
        }
        let (r, l) = s
            .strip_prefix("fan-in:")
            .and_then(|rl| rl.split_once(','))
            .ok_or_else(|| format!("comparisons {s:?}: expected {usage}"))?;
        let num = |v: &str| {
            v.trim().parse::<usize>().map_err(|_| format!("comparisons {s:?}: expected {usage}"))
        };
        crate::bin3::FanIn::new(crate::bin3::Roles::default(), num(r)?, num(l)?)
            .map(Self::FanIn)
            .map_err(|e| match e {
                Error::ApiMisuse(m) => m,
                other => other.to_string(),
            })
    }
}

/// `n` boolean-shared bits packed 64 per word (the result of a comparison).
pub type SharedBits = Packed<Rep3Vec<Bits>>;

impl WordShares for Rep3Vec<Bits> {
    type Holder = PartyId;
    fn holder(&self) -> PartyId {
        self.me
    }
    fn components(&self) -> Vec<&[Bits]> {
        vec![&self.a, &self.b]
    }
    fn from_components(holder: PartyId, components: Vec<Vec<Bits>>) -> Self {
        let mut c = components.into_iter();
        Self::from_parts(holder, c.next().unwrap_or_default(), c.next().unwrap_or_default())
    }
    fn xor_words(&self, o: &Self) -> Result<Self, Error> {
        self.add(o)
    }
    fn not_words(&self) -> Self {
        self.add_public_scalar(Bits::ONE)
    }
}

impl<T: Transport> Rep3<T> {
    /// Boolean planes of `x0` (component 0) and of `x1 + x2` (shared by P1, or `−(x1 + x2)`
    /// with `negate_b`), for several vectors at once: plane `i` holds every vector's plane `i`
    /// side by side. Returns the planes and each vector's width in words.
    async fn split_planes<R: IntRing>(
        &mut self,
        xs: &[&Rep3Vec<R>],
        negate_b: bool,
    ) -> Result<(Planes, Planes, Vec<usize>), Error> {
        let k = R::BITS as usize;
        let me = self.me();
        let ws: Vec<usize> = xs.iter().map(|x| words(x.len())).collect();
        let w: usize = ws.iter().sum();
        let planes_of = |parts: &mut dyn Iterator<Item = std::borrow::Cow<'_, [R]>>| {
            let mut out = vec![Bits(0); k * w];
            let mut off = 0;
            for (part, wx) in parts.zip(&ws) {
                to_planes_into(&part, &mut out, w, off);
                off += wx;
            }
            out
        };
        let comp0 = match me.0 {
            0 => Some(planes_of(&mut xs.iter().map(|x| x.a[..].into()))),
            2 => Some(planes_of(&mut xs.iter().map(|x| x.b[..].into()))),
            _ => None,
        };
        let a = self.planes_of_component0(comp0, k, w);
        let owner = PartyId(1);
        let known = (me == owner).then(|| {
            planes_of(&mut xs.iter().map(|x| {
                let sum = x.a.iter().zip(&x.b).map(|(p, q)| *p + *q);
                let v: Vec<R> = if negate_b { sum.map(|v| -v).collect() } else { sum.collect() };
                v.into()
            }))
        });
        self.ctx.round();
        let b = self.planes_from_one(owner, known, k, w).await?;
        Ok((a, b, ws))
    }

    /// Boolean shares of the bits of `x` (arithmetic to binary): `R::BITS` packed vectors,
    /// bit `i` of every element in vector `i`.
    pub async fn a2b<R: IntRing>(&mut self, x: &Rep3Vec<R>) -> Result<Vec<SharedBits>, Error> {
        let (a, b, _) = self.split_planes(&[x], false).await?;
        sum_bits(self, &a, &b, R::BITS as usize, x.len()).await
    }

    /// The most significant bits of several vectors in one batched run: 8 rounds for k = 64
    /// with two-input gates, 3 on multi-fan-in gates with groups and fan-in of 4
    /// ([`Comparisons`]).
    pub async fn msb_many<R: IntRing>(
        &mut self,
        xs: &[&Rep3Vec<R>],
    ) -> Result<Vec<SharedBits>, Error> {
        if let Comparisons::FanIn(f) = self.comparisons {
            return crate::bin3::msb::msb_many(self, f, xs).await;
        }
        let (a, b, ws) = self.split_planes(xs, false).await?;
        let ns: Vec<usize> = xs.iter().map(|x| x.len()).collect();
        sum_msbs(self, &a, &b, R::BITS as usize, &ws, &ns).await
    }

    /// `[x = y]`: 1 + log₂k rounds, k − 1 AND gates per element.
    pub async fn eq<R: IntRing>(
        &mut self,
        x: &Rep3Vec<R>,
        y: &Rep3Vec<R>,
    ) -> Result<SharedBits, Error> {
        let d = x.sub(y)?;
        let k = R::BITS as usize;
        let (a, nb, _) = self.split_planes(&[&d], true).await?;
        // e_i = ¬(a_i ⊕ nb_i); then AND all planes together, halving each round.
        let mut level = a.xor_prefix(&nb, k);
        level.not_all();
        let mut count = k;
        let w = level.w;
        while count > 1 {
            let half = count / 2;
            let pairs: Vec<AndPair<'_>> =
                (0..half).map(|t| (&level, 2 * t, &level, 2 * t + 1)).collect();
            let mut next = self.and_planes(&pairs, w).await?;
            if count % 2 == 1 {
                let mut grown = Planes::zeros(next.me, half + 1, w);
                for t in 0..half {
                    grown.set_plane(t, &next, t);
                }
                grown.set_plane(half, &level, count - 1);
                next = grown;
            }
            level = next;
            count = count.div_ceil(2);
        }
        Ok(SharedBits { n: x.len(), words: level.to_vec(0) })
    }

    /// Opens shared bits to all parties.
    pub async fn reveal_bits(&mut self, b: SharedBits) -> Result<Vec<bool>, Error> {
        let n = b.n;
        let w = self.reveal(b.words).await?;
        Ok(unpack_bits(&w, n).into_iter().map(|x| x == 1).collect())
    }

    /// Makes `n` daBits: random bits shared both as booleans and in the ring (setup phase;
    /// 2 rounds; P1 sends n/64 words + n elements, then every party sends n elements).
    ///
    /// `r = r_A ⊕ r_B` with `r_A` from the key of P0 and P2 and `r_B` from P1's private seed;
    /// `r^A = r_A + r_B − 2·r_A·r_B`.
    pub async fn dabits<R: Ring>(&mut self, n: usize) -> Result<DaBits<R>, Error> {
        let me = self.me();
        let w = words(n);
        let op = self.ctx.next_op();
        let mut ra = vec![Bits(0); w];
        match me.0 {
            0 => Ring::fill_random(&mut self.prg_prev(op, super::purpose::RANDOM), &mut ra),
            2 => Ring::fill_random(&mut self.prg_next(op, super::purpose::RANDOM), &mut ra),
            _ => {}
        }
        let rb = (me.0 == 1).then(|| {
            let mut v = vec![Bits(0); w];
            Ring::fill_random(&mut self.prg_own(op, super::purpose::RANDOM), &mut v);
            v
        });
        let lift = |bits: &[Bits]| -> Vec<R> { lift_bits(bits, n) };
        let ra_bool = self.planes_of_component0((me.0 != 1).then(|| ra.clone()), 1, w).to_vec(0);
        let ra_arith = Rep3Vec::public_component0(me, (me.0 != 1).then(|| lift(&ra)), n);
        self.ctx.round();
        let rb_bool = self.planes_from_one(PartyId(1), rb.clone(), 1, w).await?.to_vec(0);
        let rb_lift = rb.as_deref().map(lift);
        let rb_arith = self.share_from_one(PartyId(1), rb_lift.as_deref(), n).await?;
        let prod = self.mul(&ra_arith, &rb_arith).await?;
        // r^A = r_A + r_B − 2·r_A·r_B, one pass per component.
        let combine = |x: &[R], y: &[R], p: &[R]| -> Vec<R> {
            x.iter().zip(y).zip(p).map(|((x, y), p)| *x + *y - (*p + *p)).collect()
        };
        let arith = Rep3Vec::from_parts(
            me,
            combine(&ra_arith.a, &rb_arith.a, &prod.a),
            combine(&ra_arith.b, &rb_arith.b, &prod.b),
        );
        let mut bits = ra_bool.add(&rb_bool)?;
        if n % 64 != 0 {
            // Padding bits beyond n are not part of the daBits: keep them zero.
            let mask = (1u64 << (n % 64)) - 1;
            if let (Some(x), Some(y)) = (bits.a.last_mut(), bits.b.last_mut()) {
                x.0 &= mask;
                y.0 &= mask;
            }
        }
        Ok(DaBits { bits, arith })
    }

    /// Opens `b ⊕ r` for the daBits `r`, returning the public bits `c` as 0/1 ring elements.
    fn masked_bits_round<R: Ring>(
        &mut self,
        b: &SharedBits,
        r: &DaBits<R>,
    ) -> Result<Rep3Vec<Bits>, Error> {
        r.fits(b.n)?;
        let masked = b.words.add(&r.bits)?;
        self.ctx.send(next(self.me()), &masked.a)?;
        Ok(masked)
    }

    /// Receives the last component of `b ⊕ r` and returns the opened words.
    async fn finish_masked_bits(&mut self, masked: Rep3Vec<Bits>) -> Result<Vec<Bits>, Error> {
        let missing = self.ctx.recv::<Bits>(prev(self.me()), masked.len()).await?;
        let mut open = masked.a;
        kernels::add_assign(&mut open, &masked.b);
        kernels::add_assign(&mut open, &missing);
        Ok(open)
    }

    /// Bit injection: the ring sharing of shared bits (1 round, one daBit per bit).
    pub async fn bit_to_arith<R: Ring>(
        &mut self,
        b: &SharedBits,
        r: DaBits<R>,
    ) -> Result<Rep3Vec<R>, Error> {
        self.ctx.round();
        let masked = self.masked_bits_round(b, &r)?;
        let open = self.finish_masked_bits(masked).await?;
        Ok(unmask_bits(&open, b.n, r.arith))
    }

    /// `b·x_j` for each vector `x_j` (all of `b`'s length), in one round: one element per value
    /// per vector, plus `n/64` words to open `b ⊕ r`.
    pub async fn bit_mul_many<R: IntRing>(
        &mut self,
        b: &SharedBits,
        xs: &[&Rep3Vec<R>],
        r: DaBits<R>,
    ) -> Result<Vec<Rep3Vec<R>>, Error> {
        if xs.iter().any(|x| x.len() != b.n) {
            return Err(Error::ApiMisuse("bit_mul: vectors must have one element per bit".into()));
        }
        self.ctx.round();
        let masked = self.masked_bits_round(b, &r)?;
        let rx = if xs.len() == 1 {
            Self::local_mul(&r.arith, xs[0])
        } else {
            let rep: Vec<&Rep3Vec<R>> = xs.iter().map(|_| &r.arith).collect();
            Self::local_mul(&Rep3Vec::concat(&rep), &Rep3Vec::concat(xs))
        };
        let mut z = rx;
        self.add_zero_share(&mut z);
        let me = self.me();
        self.ctx.send(prev(me), &z)?;
        let open = self.finish_masked_bits(masked).await?;
        let zb = self.ctx.recv::<R>(next(me), z.len()).await?;
        Ok(unmask_products(&open, xs, &Rep3Vec::from_parts(me, z, zb)))
    }
}

/// Bit injection's last step: `b^A = c + (1 − 2c)·r^A` from the opened `c = b ⊕ r` (packed)
/// and the ring side of the daBits `r`: `r^A` where `c = 0`, `1 − r^A` where `c = 1`.
pub(crate) fn unmask_bits<R: Ring>(open: &[Bits], n: usize, arith: Rep3Vec<R>) -> Rep3Vec<R> {
    let me = arith.me;
    // The public 1 goes to component 0 (P0's first, P2's second).
    let one = |first: bool| match (me.0, first) {
        (0, true) | (2, false) => R::ONE,
        _ => R::ZERO,
    };
    // Only the elements whose bit is set change: visit those, lowest set bit first.
    let flip = |x: &mut [R], one: R| {
        for (w, xs) in open.iter().zip(x[..n].chunks_mut(64)) {
            let mut c = w.0;
            while c != 0 {
                if let Some(x) = xs.get_mut(c.trailing_zeros() as usize) {
                    *x = one - *x;
                }
                c &= c - 1;
            }
        }
    };
    let Rep3Vec { mut a, b: mut bb, .. } = arith;
    flip(&mut a, one(true));
    flip(&mut bb, one(false));
    Rep3Vec::from_parts(me, a, bb)
}

/// A bit product's last step: `b·x = c·x + (1 − 2c)·(r·x)`, i.e. `r·x` where the opened
/// `c = b ⊕ r` is 0 and `x − r·x` where it is 1, elementwise (one pass per component), for each
/// vector of `xs` (all of the bits' length); `rx` holds every vector's `r·x`, one after another,
/// and is read in place.
pub(crate) fn unmask_products<R: Ring>(
    open: &[Bits],
    xs: &[&Rep3Vec<R>],
    rx: &Rep3Vec<R>,
) -> Vec<Rep3Vec<R>> {
    let combine = |x: &[R], rx: &[R]| -> Vec<R> {
        x.iter()
            .zip(rx)
            .enumerate()
            .map(|(j, (x, rx))| if (open[j / 64].0 >> (j % 64)) & 1 == 1 { *x - *rx } else { *rx })
            .collect()
    };
    let n = xs.first().map_or(0, |x| x.len());
    xs.iter()
        .enumerate()
        .map(|(t, x)| {
            let part = t * n..(t + 1) * n;
            Rep3Vec::from_parts(
                x.me,
                combine(&x.a, &rx.a[part.clone()]),
                combine(&x.b, &rx.b[part]),
            )
        })
        .collect()
}

impl<T: Transport> Gates for Rep3<T> {
    type Bits = SharedBits;

    /// rep3's input of the packed words (one round, the owner sends a word per 64 bits).
    async fn input_bits(
        &mut self,
        owner: PartyId,
        bits: Option<&[bool]>,
        n: usize,
    ) -> Result<SharedBits, Error> {
        let words = bits.map(pack_bits);
        let w = self.input::<Bits>(owner, words.as_deref(), n.div_ceil(64)).await?;
        Ok(SharedBits { n, words: w })
    }

    fn constant_bits(&self, bits: &[bool]) -> SharedBits {
        SharedBits { n: bits.len(), words: Rep3Vec::public(self.me(), &pack_bits(bits)) }
    }

    /// One round, one word per 64 bits.
    async fn and(&mut self, x: &SharedBits, y: &SharedBits) -> Result<SharedBits, Error> {
        if x.n != y.n {
            return Err(Error::ApiMisuse(format!("and: {} and {} bits", x.n, y.n)));
        }
        Ok(SharedBits { n: x.n, words: self.mul(&x.words, &y.words).await? })
    }

    async fn open_bits(&mut self, b: SharedBits) -> Result<Vec<bool>, Error> {
        self.reveal_bits(b).await
    }
}

impl<T: Transport, R: IntRing> Boolean<R> for Rep3<T> {
    type BitPrep = DaBits<R>;

    async fn bit_prep(&mut self, n: usize) -> Result<DaBits<R>, Error> {
        self.dabits(n).await
    }

    async fn msb_many(&mut self, xs: &[&Rep3Vec<R>]) -> Result<Vec<SharedBits>, Error> {
        Self::msb_many(self, xs).await
    }

    async fn a2b(&mut self, x: &Rep3Vec<R>) -> Result<Vec<SharedBits>, Error> {
        Self::a2b(self, x).await
    }

    async fn b2a(&mut self, b: &SharedBits, prep: DaBits<R>) -> Result<Rep3Vec<R>, Error> {
        self.bit_to_arith(b, prep).await
    }

    async fn bit_mul_many(
        &mut self,
        b: &SharedBits,
        xs: &[&Rep3Vec<R>],
        prep: DaBits<R>,
    ) -> Result<Vec<Rep3Vec<R>>, Error> {
        Self::bit_mul_many(self, b, xs, prep).await
    }

    /// One sharing message and an AND tree over the bits (no carries).
    async fn eq(&mut self, x: &Rep3Vec<R>, y: &Rep3Vec<R>) -> Result<SharedBits, Error> {
        Self::eq(self, x, y).await
    }
}

/// The first `n` packed bits as 0/1 ring elements.
pub(crate) fn lift_bits<R: Ring>(words: &[Bits], n: usize) -> Vec<R> {
    let mut out = Vec::with_capacity(n);
    for (i, w) in words.iter().enumerate().take(n.div_ceil(64)) {
        let k = (n - 64 * i).min(64);
        out.extend((0..k).map(|j| lift_bit::<R>(w.0 >> j)));
    }
    out
}

/// A 0/1 bit as a ring element (0 or 1, in any ring, including F_q).
pub(crate) fn lift_bit<R: Ring>(b: u64) -> R {
    if b & 1 == 1 {
        R::ONE
    } else {
        R::ZERO
    }
}

impl<R: Ring> Rep3Vec<R> {
    /// Shares of a vector known to both holders of component 0 (P0 and P2 pass `Some`).
    pub(crate) fn public_component0(me: PartyId, known: Option<Vec<R>>, n: usize) -> Self {
        let z = vec![R::ZERO; n];
        match (me.0, known) {
            (0, Some(v)) => Self::from_parts(me, v, z),
            (2, Some(v)) => Self::from_parts(me, z, v),
            _ => Self::from_parts(me, z.clone(), z),
        }
    }
}
