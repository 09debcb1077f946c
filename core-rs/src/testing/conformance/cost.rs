//! Online cost per party, measured by the context's counters, against the [`CostModel`].

use core::fmt;

use super::{
    combine, input_now, label, random, run, stats_of, CostModel, Party, PartyCost, Scheme, PARTIES,
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
    /// The counters `me` should show after `op` on `count` values (outputs for products), in a
    /// ring of `elem_bytes` bytes per element, with every message in one frame.
    fn expected(&self, op: Op, me: PartyId, count: u64, elem_bytes: u64) -> Stats {
        let role = |about: PartyId| role_of(me, about);
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

/// 0 for `about` itself, 1 for the next party around the ring, 2 for the one after.
fn role_of(me: PartyId, about: PartyId) -> usize {
    (me.index() + PARTIES.len() - about.index()) % PARTIES.len()
}

/// Every online operation's counters (bytes with and without headers, frames, rounds) at every
/// party equal the scheme's [`CostModel`]: inputs from each party, openings to all and to each
/// party, exact and fixed-point products and matrix products.
pub fn costs<R: IntRing, S: Party<R>>(sc: &Scheme<S>) {
    let at = label::<R, S>();
    let Some(model) = sc.cost else {
        panic!("{at}: the scheme's description has no cost model");
    };
    let n = 10;
    let dims @ (m, k, p) = (3, 4, 2);
    let d = R::BITS / 4;
    let (x, a, b) = (&random::<R>(70, n), &random::<R>(71, m * k), &random::<R>(72, k * p));
    let stats = stats_of::<S>;
    let outs = run(sc, &at, 73, |mut s| async move {
        let mut measured: Vec<(Op, u64, Stats)> = Vec::new();
        let mut shares = Vec::new();
        for owner in PARTIES {
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
        for to in PARTIES {
            let before = stats(&s);
            s.open_to(to, lin.clone()).await?;
            measured.push((Op::OpenTo(to), n as u64, stats(&s) - before));
        }
        Ok(measured)
    });
    for (me, measured) in PARTIES.iter().zip(&outs) {
        for &(op, count, got) in measured {
            let want = model.expected(op, *me, count, R::BYTES as u64);
            assert_eq!(got, want, "{at}: {op} ({count} values or outputs), counters of {me}");
        }
    }
}
