//! Opening and the batched MAC check (the extract's section 1.4, variant A), run over every
//! value opened since the last check before anything is released.
//!
//! Written once for every SPDZ2k instance, whatever its widths: the online ones (k = s = 32
//! and 64), and those of the preprocessing (triples are sacrificed in an instance of `k + s`
//! value bits). Shares are carried in machine words ([`Word`]: `u128`, or 256 bits for k = 64's
//! preprocessing) and reduced to the instance's `v + s` bits.

use super::word::Word;
use super::{Auth, Spdz2k, Spdz2kRing};
use crate::net::{digest_words, words_digest, Ctx, PartyId, Roster, Transport};
use crate::prg::{Prg, Seed};
use crate::ring::{Bits, Z128, Z32, Z64};
use crate::sharing::View;
use crate::Error;

/// Words of a commitment's nonce and of a digest.
const WORDS: usize = 4;

/// `x mod 2^bits` (`bits ≤ 128`).
pub(crate) fn reduce(x: u128, bits: u32) -> u128 {
    if bits >= 128 {
        x
    } else {
        x & ((1u128 << bits) - 1)
    }
}

/// A check's mask in an instance: a fresh random sharing's value share and MAC share.
pub(crate) type Mask<W> = (W, W);

/// A log in a check, with its mask (`None` for a log without openings).
pub(crate) type Checked<'a, W> = (&'a mut Log<W>, Option<Mask<W>>);

/// One instance's openings since its last check: `v` value bits, `s` MAC bits, shares in
/// Z_2^(v+s) carried in words `W`, this party's key share `α_j < 2^s`.
pub struct Log<W = u128> {
    v: u32,
    s: u32,
    alpha: W,
    /// Opened values `x̂` (the sums of the low parts, with their carries).
    hat: Vec<W>,
    /// This party's upper parts `⌊x_j / 2^v⌋` of the opened values.
    high: Vec<W>,
    /// This party's MAC shares of the opened values.
    mac: Vec<W>,
}

impl<W: Word> Log<W> {
    pub(crate) fn new(v: u32, s: u32, alpha: W) -> Self {
        Self { v, s, alpha, hat: Vec::new(), high: Vec::new(), mac: Vec::new() }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.hat.is_empty()
    }

    fn wide(&self, x: W) -> W {
        x.reduce(self.v + self.s)
    }

    /// The public combination `y = Σ χ_i x̂_i` and this party's masked combination of its
    /// upper parts `p_j = Σ χ_i·⌊x_ij / 2^v⌋ + r_j (mod 2^s)`.
    fn combine(&self, chi: &[W], mask: W) -> (W, W) {
        let y = chi
            .iter()
            .zip(&self.hat)
            .fold(W::ZERO, |a, (&c, &h)| a.wrapping_add(c.wrapping_mul(h)));
        let p =
            chi.iter().zip(&self.high).fold(mask, |a, (&c, &h)| a.wrapping_add(c.wrapping_mul(h)));
        (self.wide(y), p.reduce(self.s))
    }

    /// `z_j = Σ χ_i m_ij − α_j·y − 2^v·α_j·p + 2^v·l_j (mod 2^(v+s))`, whose sum over the
    /// parties is zero exactly when the opened values carry valid MACs (up to the check's
    /// error).
    fn z(&self, chi: &[W], y: W, p: W, mask_mac: W) -> W {
        let macs = chi
            .iter()
            .zip(&self.mac)
            .fold(W::ZERO, |a, (&c, &m)| a.wrapping_add(c.wrapping_mul(m)));
        let a = self.alpha;
        let z = macs
            .wrapping_sub(a.wrapping_mul(y))
            .wrapping_sub(a.wrapping_mul(p).shl(self.v))
            .wrapping_add(mask_mac.shl(self.v));
        self.wide(z)
    }

    fn clear(&mut self) {
        self.hat.clear();
        self.high.clear();
        self.mac.clear();
    }
}

/// Opens shares (value shares `x` and MAC shares `m` of an instance of `log`'s widths) to
/// every party without checking them yet: each party sends the low `v` bits of its value
/// shares to every other (one round) and sums them with their carries. The opening is logged
/// for the next check and its sums go into `public`; nothing opened may be released before
/// that check passes. Returns the values mod 2^v.
pub(crate) async fn open_logged<T: Transport, W: Word>(
    ctx: &mut Ctx<T>,
    roster: Roster,
    log: &mut Log<W>,
    public: &mut View,
    x: &[W],
    m: &[W],
) -> Result<Vec<W>, Error> {
    let v = log.v;
    let low: Vec<W> = x.iter().map(|&w| w.reduce(v)).collect();
    let me = ctx.me();
    // On the wire in v bits per value (send_bits): exactly k bits per value online.
    ctx.round();
    for peer in roster.others(me) {
        send_bits(ctx, peer, v, &low)?;
    }
    let mut hat = low.clone();
    for peer in roster.others(me) {
        let theirs = recv_bits::<T, W>(ctx, peer, v, low.len()).await?;
        for (h, t) in hat.iter_mut().zip(theirs) {
            *h = log.wide(h.wrapping_add(t));
        }
    }
    let mut words = Vec::with_capacity(hat.len() * W::WORDS);
    hat.iter().for_each(|h| h.push_words(&mut words));
    public.absorb(&words);
    let width = v + log.s;
    log.high.extend(x.iter().map(|&w| w.reduce(width).shr(v)));
    log.mac.extend_from_slice(m);
    let opened = hat.iter().map(|&h| h.reduce(v)).collect();
    log.hat.append(&mut hat);
    Ok(opened)
}

/// Sends `values` (each below 2^bits) to `peer` in `bits` bits each: as 32-, 64- or 128-bit
/// elements for those widths, otherwise packed tightly (value `i` at bits `i·bits ..` of a
/// stream of 64-bit words, low bits first; one bit per value for the binary instance).
pub(crate) fn send_bits<T: Transport, W: Word>(
    ctx: &mut Ctx<T>,
    peer: PartyId,
    bits: u32,
    values: &[W],
) -> Result<(), Error> {
    let low = |v: &W| v.low_u128();
    match bits {
        32 => ctx.send(peer, &values.iter().map(|v| Z32(low(v) as u32)).collect::<Vec<_>>()),
        64 => ctx.send(peer, &values.iter().map(|v| Z64(low(v) as u64)).collect::<Vec<_>>()),
        128 => ctx.send(peer, &values.iter().map(|v| Z128(low(v))).collect::<Vec<_>>()),
        _ => send_rows(ctx, peer, &[bits], values),
    }
}

/// Receives `n` values sent by [`send_bits`]; one of `bits` bits or more (set bits past the
/// last value of a packed stream) is a deviation.
pub(crate) async fn recv_bits<T: Transport, W: Word>(
    ctx: &mut Ctx<T>,
    peer: PartyId,
    bits: u32,
    n: usize,
) -> Result<Vec<W>, Error> {
    let wider = || Error::Abort {
        blame: Some(peer),
        reason: format!("{peer} sent values wider than {bits} bits"),
    };
    let values: Vec<W> = match bits {
        32 => ctx
            .recv::<Z32>(peer, n)
            .await?
            .into_iter()
            .map(|w| W::from_u128(u128::from(w.0)))
            .collect(),
        64 => ctx
            .recv::<Z64>(peer, n)
            .await?
            .into_iter()
            .map(|w| W::from_u128(u128::from(w.0)))
            .collect(),
        128 => ctx.recv::<Z128>(peer, n).await?.into_iter().map(|w| W::from_u128(w.0)).collect(),
        _ => recv_rows(ctx, peer, &[bits], n).await?,
    };
    if values.iter().any(|&v| v.reduce(bits) != v) {
        return Err(wider());
    }
    Ok(values)
}

/// Sends rows of values to `peer` in one message, row `l` in `widths[l]` bits per value
/// (each value below 2^width), packed tightly.
pub(crate) fn send_rows<T: Transport, W: Word>(
    ctx: &mut Ctx<T>,
    peer: PartyId,
    widths: &[u32],
    rows: &[W],
) -> Result<(), Error> {
    let per_row = rows.len().checked_div(widths.len()).unwrap_or(0);
    let total = widths.iter().map(|&b| b as usize * per_row).sum();
    let fields =
        rows.chunks(per_row.max(1)).zip(widths).flat_map(|(r, &b)| r.iter().map(move |&v| (v, b)));
    ctx.send(peer, &pack_fields(fields, total))
}

/// Receives rows sent by [`send_rows`], `n` values per row; set bits past a value's width or
/// past the last value are a deviation.
pub(crate) async fn recv_rows<T: Transport, W: Word>(
    ctx: &mut Ctx<T>,
    peer: PartyId,
    widths: &[u32],
    n: usize,
) -> Result<Vec<W>, Error> {
    let total: usize = widths.iter().map(|&b| b as usize * n).sum();
    let words = ctx.recv::<Bits>(peer, total.div_ceil(64)).await?;
    let unused = (words.len() * 64 - total) as u32;
    if unused > 0 && words.last().is_some_and(|w| w.0 >> (64 - unused) != 0) {
        return Err(Error::Abort {
            blame: Some(peer),
            reason: format!("{peer} sent bits past its rows"),
        });
    }
    Ok(unpack_fields(&words, widths.iter().flat_map(|&b| core::iter::repeat_n(b, n))))
}

/// Fields of their own widths (`(value, bits)`, each value below 2^bits), one after the other
/// in 64-bit words, low bits first; `total` is the sum of the widths. A word's limbs are read
/// in place (little-endian targets only, as every `Word` cast in this crate).
fn pack_fields<W: Word>(fields: impl Iterator<Item = (W, u32)>, total: usize) -> Vec<Bits> {
    let mut out = Vec::with_capacity(total.div_ceil(64));
    // The word being filled and how many of its bits are taken (always below 64).
    let (mut cur, mut fill) = (0u64, 0u32);
    for (v, bits) in fields {
        let mut left = bits;
        for &limb in bytemuck::cast_slice::<W, u64>(core::slice::from_ref(&v)) {
            if left == 0 {
                break;
            }
            let b = left.min(64);
            let x = if b == 64 { limb } else { limb & ((1 << b) - 1) };
            cur |= x << fill;
            if fill + b >= 64 {
                out.push(Bits(cur));
                cur = if fill == 0 { 0 } else { x >> (64 - fill) };
                fill = fill + b - 64;
            } else {
                fill += b;
            }
            left -= b;
        }
    }
    if fill > 0 {
        out.push(Bits(cur));
    }
    out
}

/// Fields of the widths `widths` from a stream written by [`pack_fields`].
fn unpack_fields<W: Word>(words: &[Bits], widths: impl Iterator<Item = u32>) -> Vec<W> {
    let mut at = 0usize;
    widths
        .map(|bits| {
            let mut v = W::ZERO;
            let mut left = bits;
            for limb in bytemuck::cast_slice_mut::<W, u64>(core::slice::from_mut(&mut v)) {
                if left == 0 {
                    break;
                }
                let b = left.min(64);
                let (word, off) = (at / 64, (at % 64) as u32);
                let mut x = words[word].0 >> off;
                if off + b > 64 {
                    x |= words[word + 1].0 << (64 - off);
                }
                *limb = if b == 64 { x } else { x & ((1 << b) - 1) };
                at += b as usize;
                left -= b;
            }
            v
        })
        .collect()
}

/// The batched MAC check of `logs`, each with its mask (value share and MAC share of a fresh
/// random sharing in that instance; `None` for an empty log), and the comparison of the
/// digest of every public value: `Ok` at a party only if its check passed and every other
/// party said its own did. Six rounds.
///
/// Coins are committed and then opened (after the openings they weigh); each party sends its
/// masked upper parts `p_j` (`s` bits per log), then commits to its check values `z_j` and the
/// digest, opens them, and checks the commitments, the digests and `Σ z_j = 0`. A party whose
/// check fails sends every other an abort notice in place of its verdict. The logs are
/// emptied either way.
pub(crate) async fn mac_check<T: Transport, W: Word>(
    ctx: &mut Ctx<T>,
    roster: Roster,
    own: &mut Prg,
    public: View,
    logs: &mut [Checked<'_, W>],
) -> Result<(), Error> {
    // Only logs with openings take part (every party agrees which: the same operations ran).
    let mut active: Vec<Checked<'_, W>> =
        logs.iter_mut().filter(|(l, _)| !l.is_empty()).map(|(l, m)| (&mut **l, *m)).collect();
    let outcome = check_inner(ctx, roster, own, public, &mut active).await;
    for (log, _) in logs.iter_mut() {
        log.clear();
    }
    settle(ctx, roster, outcome).await
}

/// Ends a check: a party whose own check passed sends every other its verdict and fails if
/// any other reports a failure; a party whose check failed sends every other an abort notice
/// in place of its verdict. So a failure at any honest party stops every honest party. One
/// round.
pub(crate) async fn settle<T: Transport>(
    ctx: &mut Ctx<T>,
    roster: Roster,
    outcome: Result<(), Error>,
) -> Result<(), Error> {
    let me = ctx.me();
    match outcome {
        Ok(()) => {
            ctx.round();
            for peer in roster.others(me) {
                ctx.send(peer, &[Z64(0)])?;
            }
            for peer in roster.others(me) {
                if ctx.recv::<Z64>(peer, 1).await? != [Z64(0)] {
                    return Err(Error::Abort {
                        blame: Some(peer),
                        reason: format!("{peer} reported a failed check"),
                    });
                }
            }
            Ok(())
        }
        Err(e) => {
            if matches!(e, Error::Abort { .. }) {
                for peer in roster.others(me) {
                    // Best effort: the peer may be gone, and this party stops either way.
                    let _ = ctx.send_abort_notice(peer);
                }
            }
            Err(e)
        }
    }
}

/// Public coins every party contributes to: each commits to a random seed, then opens it
/// (two rounds); a seed opened other than committed is a deviation.
pub(crate) async fn coin_toss<T: Transport>(
    ctx: &mut Ctx<T>,
    roster: Roster,
    own: &mut Prg,
    op: u64,
) -> Result<Seed, Error> {
    let mut coin = [0u8; 32];
    own.fill_bytes(&mut coin);
    let coins = commit_and_open(ctx, roster, op, "coins", own, digest_words(&coin)).await?;
    let parts: Vec<Seed> = coins.iter().map(|w| Seed::from_bytes(words_digest(w))).collect();
    Ok(Seed::combine(&parts))
}

async fn check_inner<T: Transport, W: Word>(
    ctx: &mut Ctx<T>,
    roster: Roster,
    own: &mut Prg,
    public: View,
    logs: &mut [Checked<'_, W>],
) -> Result<(), Error> {
    let me = ctx.me();
    let op = ctx.next_op();
    let seed = coin_toss(ctx, roster, own, op).await?;

    let mut combos = Vec::with_capacity(logs.len());
    for (i, (log, mask)) in logs.iter().enumerate() {
        let Some((mask_x, _)) = mask else {
            return Err(Error::ApiMisuse("a MAC check of openings without a mask".into()));
        };
        if log.s > 64 {
            return Err(Error::ApiMisuse(format!("a MAC check with s = {} > 64", log.s)));
        }
        let chi = W::random(&mut Prg::new(&seed, op, i as u32), log.hat.len(), log.s);
        // Only the mask's low s bits enter: the MAC term they cancel is 2^v·α·Σ r_j mod 2^(v+s).
        let (y, p) = log.combine(&chi, mask_x.reduce(log.s));
        combos.push((chi, y, p));
    }
    ctx.round();
    let mine: Vec<Z64> = combos.iter().map(|(_, _, p)| Z64(p.low_u128() as u64)).collect();
    for peer in roster.others(me) {
        ctx.send(peer, &mine)?;
    }
    let mut sums: Vec<W> = combos.iter().map(|&(_, _, p)| p).collect();
    for peer in roster.others(me) {
        let theirs = ctx.recv::<Z64>(peer, logs.len()).await?;
        for ((sum, t), (log, _)) in sums.iter_mut().zip(theirs).zip(logs.iter()) {
            let t = W::from_u128(u128::from(t.0));
            if t.reduce(log.s) != t {
                return Err(Error::Abort {
                    blame: Some(peer),
                    reason: format!("{peer} sent a check value wider than {} bits", log.s),
                });
            }
            *sum = sum.wrapping_add(t).reduce(log.s);
        }
    }
    let mut payload = Vec::with_capacity(W::WORDS * logs.len() + WORDS);
    for (((chi, y, _), p), (log, mask)) in combos.iter().zip(&sums).zip(logs.iter()) {
        let mask_mac = mask.map_or(W::ZERO, |(_, m)| m);
        log.z(chi, *y, *p, mask_mac).push_words(&mut payload);
    }
    let digest = public.words();
    payload.extend_from_slice(&digest);
    let opened = commit_and_open(ctx, roster, op, "mac check", own, payload).await?;

    let mut total = vec![W::ZERO; logs.len()];
    let zs = W::WORDS * logs.len();
    for (j, w) in opened.iter().enumerate() {
        if w[zs..] != digest[..] {
            return Err(Error::Abort {
                blame: Some(PartyId(j as u8)),
                reason: format!("P{j} saw other public values than {me}"),
            });
        }
        for (i, t) in total.iter_mut().enumerate() {
            *t = t.wrapping_add(W::from_words(&w[W::WORDS * i..W::WORDS * (i + 1)]));
        }
    }
    for (t, (log, _)) in total.iter().zip(logs.iter()) {
        if log.wide(*t) != W::ZERO {
            return Err(Error::Abort {
                blame: None,
                reason: "the MAC check failed: an opened value or a share was changed".into(),
            });
        }
    }
    Ok(())
}

/// Commits to `payload` (one round), then opens it (another): returns every party's payload
/// in party order (this party's own included), each checked against its commitment.
pub(crate) async fn commit_and_open<T: Transport>(
    ctx: &mut Ctx<T>,
    roster: Roster,
    op: u64,
    what: &str,
    own: &mut Prg,
    payload: Vec<Z64>,
) -> Result<Vec<Vec<Z64>>, Error> {
    let me = ctx.me();
    let mut nonce = [0u8; 32];
    own.fill_bytes(&mut nonce);
    let nonce = digest_words(&nonce);
    let commitment = |who: PartyId, payload: &[Z64], nonce: &[Z64]| {
        let mut v = View::new(what, op);
        v.absorb(&[Z64(u64::from(who.0))]);
        v.absorb(payload);
        v.absorb(nonce);
        v.words()
    };
    ctx.round();
    let mine = commitment(me, &payload, &nonce);
    for peer in roster.others(me) {
        ctx.send(peer, &mine)?;
    }
    let mut commitments = Vec::with_capacity(roster.n());
    for peer in roster.others(me) {
        commitments.push((peer, ctx.recv::<Z64>(peer, WORDS).await?));
    }
    ctx.round();
    let mut opening = payload.clone();
    opening.extend_from_slice(&nonce);
    for peer in roster.others(me) {
        ctx.send(peer, &opening)?;
    }
    let len = payload.len();
    let mut out = vec![Vec::new(); roster.n()];
    out[me.index()] = payload;
    for (peer, c) in commitments {
        let got = ctx.recv::<Z64>(peer, len + WORDS).await?;
        let (theirs, their_nonce) = got.split_at(len);
        if commitment(peer, theirs, their_nonce) != c {
            return Err(Error::Abort {
                blame: Some(peer),
                reason: format!("{peer} opened {what} other than it committed to"),
            });
        }
        out[peer.index()] = theirs.to_vec();
    }
    Ok(out)
}

impl<T: Transport> Spdz2k<T> {
    /// Opens `x` to every party without checking it yet (see [`open_logged`]).
    pub(crate) async fn open_unchecked<R: Spdz2kRing>(
        &mut self,
        x: &Auth<R>,
    ) -> Result<Vec<R>, Error> {
        let xs: Vec<u128> = x.x.iter().map(|&w| R::wide_u128(w)).collect();
        let ms: Vec<u128> = x.m.iter().map(|&w| R::wide_u128(w)).collect();
        let roster = self.roster();
        let (base, log, public) = self.split_log::<R>();
        let opened = open_logged(&mut base.ctx, roster, log, public, &xs, &ms).await?;
        self.unchecked = true;
        Ok(opened.into_iter().map(R::from_low_u128).collect())
    }

    /// Records public values every party must have received alike (an input's differences):
    /// the next check compares digests of them.
    pub(crate) fn absorb_public<R: crate::ring::Ring>(&mut self, v: &[R]) {
        self.public.absorb(v);
        self.unchecked = true;
    }

    /// The batched MAC check of everything opened since the last one, in both rings, and the
    /// comparison of every public value's digest (this module's `mac_check`); nothing when nothing was
    /// opened or broadcast.
    pub async fn check(&mut self) -> Result<(), Error> {
        if !self.unchecked {
            return Ok(());
        }
        let m32 = self.mask_for::<crate::ring::Z32>(false).await?;
        let m64 = self.mask_for::<crate::ring::Z64>(false).await?;
        let b32 = self.mask_for::<crate::ring::Z32>(true).await?;
        let b64 = self.mask_for::<crate::ring::Z64>(true).await?;
        let op = self.ctx_mut().next_op();
        let mut own = crate::prg::Prg::new(&self.base.own, op, 2);
        let roster = self.roster();
        let public = core::mem::replace(&mut self.public, View::new("public", op));
        let Self { base, z32, z64, .. } = self;
        let mut logs =
            [(&mut z32.log, m32), (&mut z64.log, m64), (&mut z32.bin, b32), (&mut z64.bin, b64)];
        mac_check(&mut base.ctx, roster, &mut own, public, &mut logs).await?;
        self.unchecked = false;
        Ok(())
    }

    /// The check's mask for ring `R`'s log (or its binary instance's), where it has
    /// openings: a random sharing of the ring, whose low `s` bits and MAC serve either.
    async fn mask_for<R: Spdz2kRing>(&mut self, bin: bool) -> Result<Option<(u128, u128)>, Error> {
        let inst = R::instance(self);
        if if bin { inst.bin.is_empty() } else { inst.log.is_empty() } {
            return Ok(None);
        }
        let r = self.check_mask::<R>().await?;
        Ok(Some((R::wide_u128(r.x[0]), R::wide_u128(r.m[0]))))
    }
}

#[cfg(test)]
mod tests {
    use super::super::word::U256;
    use super::*;

    /// Packing keeps every field, of any width up to the word's, at any offset in the stream.
    #[test]
    fn packed_fields_round_trip() {
        fn check<W: Word>(bits: u32) {
            let mut prg = Prg::new(&Seed::from_bytes([bits as u8; 32]), 0, 0);
            for n in [0, 1, 2, 3, 63, 64, 65, 200] {
                let v = W::random(&mut prg, n, bits);
                let words = pack_fields(v.iter().map(|&x| (x, bits)), n * bits as usize);
                assert_eq!(words.len(), (n * bits as usize).div_ceil(64));
                let back: Vec<W> = unpack_fields(&words, (0..n).map(|_| bits));
                assert_eq!(back, v, "{bits} bits, {n} values");
            }
        }
        for bits in [1, 2, 31, 63, 65, 66, 100, 127, 129, 130, 192, 194, 255, 256] {
            check::<U256>(bits);
            if bits <= 128 {
                check::<u128>(bits);
            }
        }
    }

    /// Rows of decreasing widths (the vector OLE's) round trip in one stream.
    #[test]
    fn packed_rows_of_their_own_widths_round_trip() {
        let mut prg = Prg::new(&Seed::from_bytes([7; 32]), 0, 0);
        let (w, s, n) = (194u32, 64u32, 5usize);
        let widths: Vec<u32> = (0..s).map(|l| w - l).collect();
        let rows: Vec<U256> =
            widths.iter().flat_map(|&b| U256::random(&mut prg, n, b)).collect::<Vec<_>>();
        let words = pack_fields(
            rows.iter().enumerate().map(|(i, &v)| (v, widths[i / n])),
            widths.iter().map(|&b| b as usize * n).sum(),
        );
        let total: usize = widths.iter().map(|&b| b as usize * n).sum();
        assert_eq!(words.len(), total.div_ceil(64));
        let back: Vec<U256> =
            unpack_fields(&words, widths.iter().flat_map(|&b| core::iter::repeat_n(b, n)));
        assert_eq!(back, rows);
    }
}
