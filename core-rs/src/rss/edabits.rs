//! edaBits (the paper's Protocol 7, after Escudero et al.): a random `r` shared over Z_2^k
//! together with its bits shared over Z_2, from `t + 1` dealers.
//!
//! Dealers `P0 … Pt` each draw `k` random bits per value from their private randomness and
//! input both the bits (over Z_2) and their integer (over Z_2^k), all in one round. `r` is the
//! sum of the integers (carries beyond 2^k vanish); its bits are the sum of the bit vectors by
//! a tree of ripple-free adders (a Sklansky prefix network each): ⌈log₂(t + 1)⌉ levels of
//! `1 + ⌈log₂ k⌉` rounds, all additions of a level batched. Any `t` parties miss at least one
//! dealer's bits, so `r` is uniform to them.
//!
//! Against random bits by multiply-and-open ([`Rss::rand_bits`], 1 round but `k` products of
//! `n − 1` elements of the wider ring per value), edaBits take more rounds and far fewer bytes
//! and products: the dealers' inputs are `t` elements and `t` words per 64 values each, the
//! adders `t` bits per AND. [`BitSource`] picks one for comparisons and bit decompositions.

use super::bits::Widen;
use super::boolean::RssBits;
use super::{purpose, Rss, RssVec};
use crate::net::{PartyId, Transport};
use crate::ring::{Bits, IntRing, Ring};
use crate::sharing::{Bitwise, Gates, Packed};
use crate::Error;

/// Where an rss session's comparisons and bit decompositions get the random value `r` and its
/// bits that mask their opening.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BitSource {
    /// `k` random bits by multiply-and-open (Protocol 6): 1 round, `k·(n − 1)` elements of the
    /// wider ring per value and party — fewest rounds, for small batches on slow links.
    RandBits,
    /// edaBits from `t + 1` dealers (Protocol 7): more rounds, 20–70 times fewer bytes and
    /// less work (`BENCHMARKS.md`): the default.
    #[default]
    EdaBits,
}

impl BitSource {
    /// Its name on command lines: `rand-bits` or `eda-bits`.
    pub fn name(self) -> &'static str {
        match self {
            Self::RandBits => "rand-bits",
            Self::EdaBits => "eda-bits",
        }
    }
}

impl core::fmt::Display for BitSource {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// ```
/// use ringfence_core::rss::BitSource;
/// assert_eq!("eda-bits".parse::<BitSource>(), Ok(BitSource::EdaBits));
/// assert_eq!(BitSource::RandBits.to_string().parse::<BitSource>(), Ok(BitSource::RandBits));
/// assert!("edabits".parse::<BitSource>().unwrap_err().contains("rand-bits or eda-bits"));
/// ```
impl core::str::FromStr for BitSource {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        [Self::RandBits, Self::EdaBits]
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| format!("bit source {s:?}: expected rand-bits or eda-bits"))
    }
}

/// edaBits with what truncation needs ([`Rss::edabits_inner`]); the additions are the levels
/// of the adder tree, each covering all of its additions side by side.
pub(crate) struct EdaBits<R> {
    pub(crate) planes: Vec<RssBits>,
    pub(crate) r: RssVec<R>,
    /// `Σ_p ⌊r^(p) / 2^m⌋` (zeros without a shift).
    pub(crate) shifted_sum: RssVec<R>,
    /// Per level of additions, the carries into bit `m` (one per value and addition).
    pub(crate) into_shift: Vec<RssBits>,
    /// Per level, the carries out of the top bit.
    pub(crate) out_top: Vec<RssBits>,
}

/// Random values with their bit planes, made before the values they will mask exist
/// ([`Rss::stock_masks`]); single use, taken from the front.
pub(crate) struct Masks<R> {
    planes: Vec<RssBits>,
    r: RssVec<R>,
}

impl<R: Ring> Masks<R> {
    /// Moves the first `n` (at most all) out.
    fn take_front(&mut self, n: usize) -> Self {
        let len = self.r.len();
        let n = n.min(len);
        let planes = self.planes.iter().map(|p| p.slice(0..n)).collect();
        self.planes = self.planes.iter().map(|p| p.slice(n..len)).collect();
        Self { planes, r: self.r.take_front(n) }
    }

    fn concat(parts: &[&Self]) -> Self {
        let k = parts.first().map_or(0, |m| m.planes.len());
        let planes =
            (0..k).map(|i| Packed::concat(&parts.iter().map(|m| &m.planes[i]).collect::<Vec<_>>()));
        let r = RssVec::concat(&parts.iter().map(|m| &m.r).collect::<Vec<_>>());
        Self { planes: planes.collect(), r }
    }
}

impl<T: Transport> Rss<T> {
    /// `n` random values over `R` with their bits, planes low first (plane `i` holds bit `i` of
    /// every value): those made ahead first ([`Rss::stock_masks`]), the rest now from the
    /// session's [`BitSource`].
    pub(crate) async fn random_with_bits<R: Widen>(
        &mut self,
        n: usize,
    ) -> Result<(Vec<RssBits>, RssVec<R>), Error> {
        let ahead = self.take_masks::<R>(n);
        let made = ahead.as_ref().map_or(0, |m| m.r.len());
        if made == n {
            let m = ahead.expect("n > 0 values were made ahead");
            return Ok((m.planes, m.r));
        }
        let (planes, r) = match self.bit_source {
            BitSource::RandBits => self.random_with_bits_by_rand_bits(n - made).await?,
            BitSource::EdaBits => self.edabits(n - made).await?,
        };
        let fresh = Masks { planes, r };
        let all = match &ahead {
            Some(m) => Masks::concat(&[m, &fresh]),
            None => fresh,
        };
        Ok((all.planes, all.r))
    }

    /// Makes `n` masks over `R` now (from the session's [`BitSource`]) for the next MSBs and
    /// bit decompositions over `R`, which take them before making their own: setup work moved
    /// out of the online phase. Masks over another ring made before are dropped.
    pub async fn stock_masks<R: Widen>(&mut self, n: usize) -> Result<(), Error> {
        let (planes, r) = match self.bit_source {
            BitSource::RandBits => self.random_with_bits_by_rand_bits::<R>(n).await?,
            BitSource::EdaBits => self.edabits::<R>(n).await?,
        };
        let fresh = Masks { planes, r };
        let stocked = match self.take_masks::<R>(usize::MAX) {
            Some(old) => Masks::concat(&[&old, &fresh]),
            None => fresh,
        };
        self.masks = Some(Box::new(stocked));
        Ok(())
    }

    /// Masks over `R` made ahead and not used yet.
    pub fn stocked_masks<R: Widen>(&self) -> usize {
        self.masks.as_ref().and_then(|m| m.downcast_ref::<Masks<R>>()).map_or(0, |m| m.r.len())
    }

    /// Up to `n` of the masks over `R` made ahead, moved out (`None` when there are none).
    fn take_masks<R: Widen>(&mut self, n: usize) -> Option<Masks<R>> {
        let m = self.masks.as_mut()?.downcast_mut::<Masks<R>>()?;
        if m.r.is_empty() {
            return None;
        }
        let front = m.take_front(n);
        if m.r.is_empty() {
            self.masks = None;
        }
        Some(front)
    }

    /// `n` edaBits over `R`: the values and their bit planes.
    pub async fn edabits<R: IntRing>(
        &mut self,
        n: usize,
    ) -> Result<(Vec<RssBits>, RssVec<R>), Error> {
        let eda = self.edabits_inner::<R>(n, None).await?;
        Ok((eda.planes, eda.r))
    }

    /// edaBits, and with `shift = Some(m)` what probabilistic truncation by `m` needs besides
    /// (the paper's Protocol 3): the sum of the dealers' `⌊r^(p) / 2^m⌋`, and from every adder
    /// the carry into bit `m` and the carry out of the top bit.
    pub(crate) async fn edabits_inner<R: IntRing>(
        &mut self,
        n: usize,
        shift: Option<u32>,
    ) -> Result<EdaBits<R>, Error> {
        let k = R::BITS as usize;
        let me = self.me();
        let w = n.div_ceil(64);
        let dealers: Vec<PartyId> = self.roster().parties().take(self.roster().t() + 1).collect();
        // A dealer's values and its bit planes (k planes of w words). Every party takes the
        // operation number, so that the numbers stay in step.
        let op = self.ctx.next_op();
        let mine = dealers.contains(&me).then(|| {
            let mut words = vec![Bits(0); k * w];
            Bits::fill_random(&mut self.prg_own(op, purpose::DEALER), &mut words);
            if n % 64 != 0 {
                // Padding bits beyond n stay clear in every plane.
                let keep = (1u64 << (n % 64)) - 1;
                words.iter_mut().skip(w - 1).step_by(w).for_each(|x| x.0 &= keep);
            }
            let values: Vec<R> = (0..n)
                .map(|j| {
                    (0..k).fold(R::ZERO, |acc, i| {
                        let bit = words[i * w + j / 64].0 >> (j % 64) & 1;
                        acc + R::from_u64(bit).shl(i as u32)
                    })
                })
                .collect();
            let shifted: Vec<R> =
                shift.map_or_else(Vec::new, |m| values.iter().map(|v| v.shr_logical(m)).collect());
            (values, shifted, words)
        });
        self.ctx.round();
        let mut pending = Vec::with_capacity(dealers.len());
        for &d in &dealers {
            let own = mine.as_ref().filter(|_| d == me);
            let ints = self.input_start::<R>(d, own.map(|m| &m.0[..]), n)?;
            let shifted = match shift {
                Some(_) => Some(self.input_start::<R>(d, own.map(|m| &m.1[..]), n)?),
                None => None,
            };
            let bits = self.input_start::<Bits>(d, own.map(|m| &m.2[..]), k * w)?;
            pending.push((ints, shifted, bits));
        }
        let mut r = self.zeros::<R>(n);
        let mut shifted_sum = self.zeros::<R>(n);
        let mut numbers: Vec<Vec<RssBits>> = Vec::with_capacity(dealers.len());
        for (ints, shifted, bits) in pending {
            r = r.add(&self.input_finish(ints).await?)?;
            if let Some(sh) = shifted {
                shifted_sum = shifted_sum.add(&self.input_finish(sh).await?)?;
            }
            let words = self.input_finish(bits).await?;
            numbers.push(
                (0..k).map(|i| Packed::from_words(n, &words.slice(i * w..(i + 1) * w))).collect(),
            );
        }
        // The adder tree: every pair of a level added at once, as one wider addition.
        let (mut into_shift, mut out_top) = (Vec::new(), Vec::new());
        while numbers.len() > 1 {
            let pairs = numbers.len() / 2;
            let odd = (numbers.len() % 2 == 1).then(|| numbers.pop()).flatten();
            let plane = |side: usize, i: usize| -> RssBits {
                let parts: Vec<&RssBits> = (0..pairs).map(|j| &numbers[2 * j + side][i]).collect();
                RssBits::concat(&parts)
            };
            let a: Vec<RssBits> = (0..k).map(|i| plane(0, i)).collect();
            let b: Vec<RssBits> = (0..k).map(|i| plane(1, i)).collect();
            let (sum, carries) = self.bit_add(a, b).await?;
            if let Some(m) = shift {
                // Carry into bit m is the carry out of bit m − 1.
                into_shift.push(carries[m as usize - 1].clone());
                out_top.push(carries[k - 1].clone());
            }
            numbers = (0..pairs)
                .map(|j| sum.iter().map(|s| s.slice(j * n..(j + 1) * n)).collect())
                .collect();
            numbers.extend(odd);
        }
        let planes = numbers.pop().ok_or_else(|| Error::ApiMisuse("edaBits: no dealer".into()))?;
        Ok(EdaBits { planes, r, shifted_sum, into_shift, out_top })
    }

    /// `a + b` mod 2^k of shared bit planes (low first, one length): generate and propagate
    /// (1 AND round), then a Sklansky prefix network (⌈log₂ k⌉ rounds).
    /// Also returns every prefix carry `G_i` (out of position `i`).
    pub(crate) async fn bit_add(
        &mut self,
        a: Vec<RssBits>,
        b: Vec<RssBits>,
    ) -> Result<(Vec<RssBits>, Vec<RssBits>), Error> {
        let k = a.len();
        let n = a.first().map_or(0, Bitwise::len);
        let p: Vec<RssBits> = a.iter().zip(&b).map(|(x, y)| x.xor(y)).collect::<Result<_, _>>()?;
        let all_a = RssBits::concat(&a.iter().collect::<Vec<_>>());
        let all_b = RssBits::concat(&b.iter().collect::<Vec<_>>());
        let g_all = self.and(&all_a, &all_b).await?;
        let g: Vec<RssBits> = (0..k).map(|i| g_all.slice(i * n..(i + 1) * n)).collect();
        let carries = self.prefix_carries(p.clone(), g).await?;
        let mut out = Vec::with_capacity(k);
        out.extend(p.first().cloned());
        for i in 1..k {
            out.push(p[i].xor(&carries[i - 1])?);
        }
        Ok((out, carries))
    }
}
