//! Online cost per party, measured by the context's counters, against the [`CostModel`].

use core::fmt;

use super::{
    combine, input_now, label, random, run, stats_of, CostModel, Party, PartyCost, Scheme, TestBase,
};
use crate::net::{frame, PartyId, Stats};
use crate::ring::IntRing;

/// An online operation whose cost is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Input(PartyId),
    Open,
    OpenTo(PartyId),
    Mul,
    MulFixed,
    MatMul,
    MatMulFixed,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Input(owner) => write!(f, "input from {owner}"),
            Self::OpenTo(to) => write!(f, "opening to {to}"),
            op => write!(f, "{op:?}"),
        }
    }
}

impl CostModel {
    /// Fails unless every field has one entry per party of a roster of `n` parties.
    fn check_len(&self, at: &str, n: usize) {
        let fields = [
            ("input", &self.input),
            ("open", &self.open),
            ("open_to", &self.open_to),
            ("mul", &self.mul),
            ("mul_fixed", &self.mul_fixed),
            ("matmul", &self.matmul),
            ("matmul_fixed", &self.matmul_fixed),
        ];
        for (what, v) in fields {
            assert_eq!(
                v.len(),
                n,
                "{at}: the cost model's `{what}` has {} entries, but the scheme's roster has {n} \
                 parties (one entry per party)",
                v.len()
            );
        }
    }

    /// The counters `me` should show after `op` on `count` values (outputs for products), in a
    /// ring of `elem_bytes` bytes per element, with every message in one frame, in a session of
    /// `n` parties.
    fn expected(&self, op: Op, me: PartyId, n: usize, count: u64, elem_bytes: u64) -> Stats {
        let role = |about: PartyId| role_of(me, about, n);
        let by_party = me.index();
        let c: PartyCost = match op {
            Op::Input(owner) => self.input[role(owner)],
            Op::Open => self.open[by_party],
            Op::OpenTo(to) => self.open_to[role(to)],
            Op::Mul => self.mul[by_party],
            Op::MulFixed => self.mul_fixed[by_party],
            Op::MatMul => self.matmul[by_party],
            Op::MatMulFixed => self.matmul_fixed[by_party],
        };
        let payload = c.elems * count * elem_bytes;
        Stats {
            bytes_sent: payload + c.msgs * frame::HEADER_LEN as u64,
            payload_bytes_sent: payload,
            frames_sent: c.msgs,
            rounds: c.rounds,
        }
    }
}

/// 0 for `about` itself, 1 for the next party around the ring of `n` parties, 2 for the one
/// after, and so on: `(me − about) mod n`.
fn role_of(me: PartyId, about: PartyId, n: usize) -> usize {
    (me.index() + n - about.index()) % n
}

/// Every online operation's counters (bytes with and without headers, frames, rounds) at every
/// party equal the scheme's [`CostModel`]: inputs from each party, openings to all and to each
/// party, exact and fixed-point products and matrix products.
pub fn costs<R: IntRing, S: Party<R, B>, B: TestBase>(sc: &Scheme<S, B>) {
    let at = label::<R, S>();
    let Some(model) = &sc.cost else {
        panic!("{at}: the scheme's description has no cost model");
    };
    model.check_len(&at, sc.roster.n());
    let parties = &sc.parties();
    let n = 10;
    let dims @ (m, k, p) = (3, 4, 2);
    let d = R::BITS / 4;
    let (x, a, b) = (&random::<R>(70, n), &random::<R>(71, m * k), &random::<R>(72, k * p));
    let stats = stats_of::<B, S>;
    let outs = run(sc, &at, 73, |mut s| async move {
        let mut measured: Vec<(Op, u64, Stats)> = Vec::new();
        let mut shares = Vec::new();
        for &owner in parties {
            let before = stats(&s);
            shares.push(input_now(&mut s, owner, x).await?);
            measured.push((Op::Input(owner), n as u64, stats(&s) - before));
        }
        let (vx, vy) = (&shares[0], &shares[1]);
        let va = input_now(&mut s, PartyId(0), a).await?;
        let vb = input_now(&mut s, PartyId(1), b).await?;
        let (tx, ty, ta, tb) = (S::tag(vx), S::tag(vy), S::tag(&va), S::tag(&vb));
        let (pm, _) = s.mul_prep(&tx, &ty, 0).await?;
        let (pmf, _) = s.mul_prep(&tx, &ty, d).await?;
        let (pmm, _) = s.matmul_prep(&ta, &tb, dims, 0).await?;
        let (pmmf, _) = s.matmul_prep(&ta, &tb, dims, d).await?;

        // Linear operations need no measuring: they cannot reach the context.
        let lin = combine(vx, vy, &s.constant(x))?;
        let before = stats(&s);
        s.mul(vx, vy, pm).await?;
        measured.push((Op::Mul, n as u64, stats(&s) - before));
        let before = stats(&s);
        s.mul(vx, vy, pmf).await?;
        measured.push((Op::MulFixed, n as u64, stats(&s) - before));
        let before = stats(&s);
        s.matmul(&va, &vb, dims, pmm).await?;
        measured.push((Op::MatMul, (m * p) as u64, stats(&s) - before));
        let before = stats(&s);
        s.matmul(&va, &vb, dims, pmmf).await?;
        measured.push((Op::MatMulFixed, (m * p) as u64, stats(&s) - before));
        let before = stats(&s);
        s.open(lin.clone()).await?;
        measured.push((Op::Open, n as u64, stats(&s) - before));
        for &to in parties {
            let before = stats(&s);
            s.open_to(to, lin.clone()).await?;
            measured.push((Op::OpenTo(to), n as u64, stats(&s) - before));
        }
        Ok(measured)
    });
    for (me, measured) in parties.iter().zip(&outs) {
        for &(op, count, got) in measured {
            let want = model.expected(op, *me, parties.len(), count, R::BYTES as u64);
            assert_eq!(got, want, "{at}: {op} ({count} values or outputs), counters of {me}");
        }
    }
}
