//! The two checks every mal3 result passes before anything is released: products checked
//! against validated triples ([`check_products`]) and openings received twice ([`open`]).

use super::triples::Triples;
use super::{compare_and_rule, exchange_opened, settle, Tag};
use crate::net::{PartyId, Transport};
use crate::rep3::{next, prev, Rep3, Rep3Vec};
use crate::ring::{kernels, Ring};
use crate::Error;

/// Checks that `z = x·y` elementwise, each against one triple `(a, b, c)` of `helpers` (which
/// are used up): open `ρ = x − a`, `σ = y − b` (with `extra`, in the same round), compare the
/// openings around the ring (settled with the zero test: [`super::exchange_opened`]), then
/// test `v = z − c − σ·a − ρ·b − ρσ` for zero by MAC tags. `v`
/// is the difference of the two products' errors, so a wrong product passes only against a
/// triple wrong by the same amount. `judge` rules on the opened `extra` before the verdict.
/// Four rounds with the verdicts.
///
/// `at` pairs them without copying the helpers into place: `None` checks product `i` with
/// triple `i`; `Some(at)` (a multiple of the products' count, `n`) checks product `j mod n`
/// with triple `at[j]`, so one product can be checked against several triples (a bucket).
pub(crate) async fn sacrifice<R: Ring, T: Transport>(
    p: &mut Rep3<T>,
    [x, y, z]: [&Rep3Vec<R>; 3],
    [a, b, c]: [&Rep3Vec<R>; 3],
    at: Option<&[usize]>,
    extra: Option<Rep3Vec<R>>,
    judge: impl FnOnce(&[R]) -> Result<(), Error>,
) -> Result<(), Error> {
    let n = x.len();
    let h = a.len();
    let checks = at.map_or(n, <[usize]>::len);
    let paired = match at {
        None => h == n,
        Some(at) => n > 0 && checks % n == 0 && at.iter().all(|&i| i < h),
    };
    if [y.len(), z.len()] != [n; 2] || [b.len(), c.len()] != [h; 2] || !paired {
        return Err(Error::ApiMisuse(format!(
            "product check: {n} products against {checks} of {h} triples (or operands of \
             other lengths)"
        )));
    }
    let extra_len = extra.as_ref().map_or(0, Rep3Vec::len);
    // ρ, σ and `extra` written once into the vector that is opened (these vectors are the
    // size of a whole validation run: every copy and fresh page shows in its time).
    let me = p.me();
    let opening = {
        let part = |f: fn(&Rep3Vec<R>) -> &[R]| {
            let mut v = Vec::with_capacity(2 * checks + extra_len);
            let (x, a, y, b) = (f(x), f(a), f(y), f(b));
            each_pair(n, at, |i, t| v.push(x[i] - a[t]));
            each_pair(n, at, |i, t| v.push(y[i] - b[t]));
            v.extend_from_slice(extra.as_ref().map_or(&[][..], f));
            v
        };
        Rep3Vec::from_parts(me, part(|v| &v.a), part(|v| &v.b))
    };
    let op = p.ctx_mut().next_op();
    let open = p.reveal(opening).await?;
    let confirmed = exchange_opened(p, "opened values", op, &open).await?;

    let (rho, sigma) = (&open[..checks], &open[checks..2 * checks]);
    let ruling = confirmed.and_then(|()| judge(&open[2 * checks..2 * checks + extra_len]));
    // v = z − c − σ·a − ρ·b − ρσ (the public ρσ in P0's first component, P2's second), tagged
    // as in [`zero`] without materialising v: P_i tags v_i + v_{i+1}, P_{i+1} tags −v_{i+2}.
    let (pub_a, pub_b) = (me.0 == 0, me.0 == 2);
    let (za, ca, aa, ba) = (&z.a[..], &c.a[..], &a.a[..], &b.a[..]);
    let (zb, cb, ab, bb) = (&z.b[..], &c.b[..], &a.b[..], &b.b[..]);
    let mut t = Vec::with_capacity(checks);
    let mut neg = Vec::with_capacity(checks);
    let mut j = 0;
    each_pair(n, at, |i, h| {
        let (r, s) = (rho[j], sigma[j]);
        let public = r * s;
        let mut va = za[i] - ca[h] - s * aa[h] - r * ba[h];
        let mut vb = zb[i] - cb[h] - s * ab[h] - r * bb[h];
        if pub_a {
            va -= public;
        }
        if pub_b {
            vb -= public;
        }
        t.push(va + vb);
        neg.push(-vb);
        j += 1;
    });
    zero_tags(p, op, &t, &neg, "product checks", ruling).await
}

/// Visits (product, triple) of every check of [`sacrifice`] in order: bucket checks go
/// through the products once per triple array, so `j mod n` is never computed.
fn each_pair(n: usize, at: Option<&[usize]>, mut f: impl FnMut(usize, usize)) {
    match at {
        None => (0..n).for_each(|i| f(i, i)),
        Some(at) => at.chunks_exact(n).for_each(|run| {
            run.iter().enumerate().for_each(|(i, &t)| f(i, t));
        }),
    }
}

/// Tests the shared `v` for zero (every element) with MAC tags around the ring, `ruling` (this
/// party's verdict on another check) joined to the verdict; `op` keys the tags. Two rounds.
pub(crate) async fn zero<R: Ring, T: Transport>(
    p: &mut Rep3<T>,
    op: u64,
    v: &Rep3Vec<R>,
    what: &str,
    ruling: Result<(), Error>,
) -> Result<(), Error> {
    // P_i holds (v_i, v_{i+1}) and tags v_i + v_{i+1}; P_{i+1} tags −v_{i+2}.
    let t: Vec<R> = v.a.iter().zip(&v.b).map(|(p, q)| *p + *q).collect();
    let neg: Vec<R> = v.b.iter().map(|q| -*q).collect();
    zero_tags(p, op, &t, &neg, what, ruling).await
}

/// [`zero`]'s comparison, from this party's sum `t = v_i + v_{i+1}` and negated second
/// component `neg = −v_{i+1}` (what P_{i−1} expects of its own sum).
async fn zero_tags<R: Ring, T: Transport>(
    p: &mut Rep3<T>,
    op: u64,
    t: &[R],
    neg: &[R],
    what: &str,
    ruling: Result<(), Error>,
) -> Result<(), Error> {
    let (mut mine, mut expected) = (Tag::to_next(p, "zero", op), Tag::from_prev(p, "zero", op));
    mine.absorb(t);
    expected.absorb(neg);
    compare_and_rule(p, mine, expected, what, ruling).await
}

/// Checks products `z = x·y` (elementwise, as computed by rep3's product) against validated
/// `triples`, one per product, which are used up. Every party gets the same verdict: `Ok`, or
/// [`Error::Abort`] when any product is wrong. Four rounds; each party sends two ring elements
/// per product plus fixed words.
pub async fn check_products<R: Ring, T: Transport>(
    p: &mut Rep3<T>,
    x: &Rep3Vec<R>,
    y: &Rep3Vec<R>,
    z: &Rep3Vec<R>,
    triples: Triples<R>,
) -> Result<(), Error> {
    let helpers = [&triples.a, &triples.b, &triples.c];
    sacrifice(p, [x, y, z], helpers, None, None, |_| Ok(())).await
}

/// Opens `x` to every party with each missing component received from both parties that
/// hold it, compared before anything is returned: a party that sends a wrong component makes
/// every honest party abort. Two rounds (with the verdicts); two ring elements per value per
/// party.
pub async fn open<R: Ring, T: Transport>(p: &mut Rep3<T>, x: Rep3Vec<R>) -> Result<Vec<R>, Error> {
    let me = p.me();
    let n = x.len();
    let ctx = p.ctx_mut();
    ctx.round();
    // My missing component is P_{i+1}'s second and P_{i−1}'s first.
    ctx.send(next(me), &x.a)?;
    ctx.send(prev(me), &x.b)?;
    let from_prev = ctx.recv::<R>(prev(me), n).await?;
    let from_next = ctx.recv::<R>(next(me), n).await?;
    let verdict = if from_prev == from_next {
        Ok(())
    } else {
        Err(Error::Abort {
            blame: None,
            reason: format!("an opening: {} and {} sent different values", prev(me), next(me)),
        })
    };
    settle(p, verdict).await?;
    let mut out = x.a;
    kernels::add_assign(&mut out, &x.b);
    kernels::add_assign(&mut out, &from_prev);
    Ok(out)
}

/// Opens `x` to compute party `to` only, which receives its missing component from both of
/// its holders and compares them; every party then learns the verdict. `to` gets
/// `Some(values)`, the others `None`. Two rounds; each holder sends one element per value.
pub async fn open_to<R: Ring, T: Transport>(
    p: &mut Rep3<T>,
    to: PartyId,
    x: Rep3Vec<R>,
) -> Result<Option<Vec<R>>, Error> {
    if !crate::net::Roster::THREE.is_party(to) {
        return Err(Error::ApiMisuse(format!("open_to: {to} is not a compute party")));
    }
    let me = p.me();
    let n = x.len();
    let ctx = p.ctx_mut();
    ctx.round();
    // `to`'s missing component is its next party's second and its previous party's first.
    if me == next(to) {
        ctx.send(to, &x.b)?;
    } else if me == prev(to) {
        ctx.send(to, &x.a)?;
    }
    let mut verdict = Ok(());
    let mut missing = None;
    if me == to {
        let from_prev = ctx.recv::<R>(prev(me), n).await?;
        let from_next = ctx.recv::<R>(next(me), n).await?;
        if from_prev == from_next {
            missing = Some(from_prev);
        } else {
            verdict = Err(Error::Abort {
                blame: None,
                reason: format!(
                    "an opening to {me}: {} and {} sent different values",
                    prev(me),
                    next(me)
                ),
            });
        }
    }
    settle(p, verdict).await?;
    Ok(missing.map(|m| {
        let mut out = x.a;
        kernels::add_assign(&mut out, &x.b);
        kernels::add_assign(&mut out, &m);
        out
    }))
}

/// Sends the external `client` both components of `x` that this party holds (one round, two
/// elements per value): the client receives every component from both of its holders and
/// compares them ([`super::client::Mal3Client::reconstruct`]), so a server that changes its
/// part makes the client abort rather than accept a wrong answer.
pub async fn open_to_client<R: Ring, T: Transport>(
    p: &mut Rep3<T>,
    client: PartyId,
    x: Rep3Vec<R>,
) -> Result<(), Error> {
    if crate::net::Roster::THREE.is_party(client) {
        return Err(Error::ApiMisuse(format!("{client} is a compute party, not a client")));
    }
    let ctx = p.ctx_mut();
    ctx.round();
    let mut both = x.a;
    both.extend_from_slice(&x.b);
    ctx.send(client, &both)
}
