//! `ringfence demo`: P0 and P1 each input a secret vector; the three parties compute the
//! elementwise product, the comparison a < b and ReLU(a − b), reveal them, and the parent checks
//! every party's outputs against the plaintext computation.

use std::time::Instant;

use ringfence_core::net::PartyId;
use ringfence_core::ring::{IntRing, Z64};

use crate::msgs::{DemoReport, FromChild};
use crate::party::{report, Session};

/// P0's secret vector.
pub(crate) const A: [i64; 8] = [3, -5, 12, 0, 7, -2, 100, -40];
/// P1's secret vector.
pub(crate) const B: [i64; 8] = [4, 2, -6, 0, 7, -9, 50, 41];

/// The outputs in the clear, as the parties must reveal them.
pub(crate) fn expected() -> Vec<(String, Vec<i64>)> {
    let prod = A.iter().zip(&B).map(|(a, b)| a * b).collect();
    let lt = A.iter().zip(&B).map(|(a, b)| i64::from(a < b)).collect();
    let relu = A.iter().zip(&B).map(|(a, b)| (a - b).max(0)).collect();
    vec![("a*b".into(), prod), ("a<b".into(), lt), ("relu(a-b)".into(), relu)]
}

/// The party side of the demo.
pub(crate) async fn run(mut p: Session, input: Option<Vec<i64>>) -> Result<Session, String> {
    let e = |e: ringfence_core::Error| e.to_string();
    let me = p.me();
    let n = A.len();
    let mine: Option<Vec<Z64>> = input.map(|v| v.into_iter().map(Z64::from_i64).collect());
    let start = Instant::now();
    let s0 = p.ctx().stats();
    let w0 = p.ctx().transport().wire_bytes_sent();
    let a =
        p.input(PartyId(0), mine.as_deref().filter(|_| me == PartyId(0)), n).await.map_err(e)?;
    let b =
        p.input(PartyId(1), mine.as_deref().filter(|_| me == PartyId(1)), n).await.map_err(e)?;
    let prod = p.mul(&a, &b).await.map_err(e)?;
    let lt = p.lt(&a, &b).await.map_err(e)?;
    let diff = a.sub(&b).map_err(e)?;
    let r = p.dabits::<Z64>(n).await.map_err(e)?;
    let relu = p.relu(&diff, r).await.map_err(e)?;
    let prod = p.reveal(prod).await.map_err(e)?;
    let lt = p.reveal_bits(lt).await.map_err(e)?;
    let relu = p.reveal(relu).await.map_err(e)?;
    let seconds = start.elapsed().as_secs_f64();
    p.ctx().transport().flushed().await.map_err(|e| e.to_string())?;
    let d = p.ctx().stats() - s0;
    let outputs = vec![
        ("a*b".into(), prod.iter().map(|v| v.to_i64()).collect()),
        ("a<b".into(), lt.iter().map(|&b| i64::from(b)).collect()),
        ("relu(a-b)".into(), relu.iter().map(|v| v.to_i64()).collect()),
    ];
    report(&FromChild::Demo(DemoReport {
        outputs,
        seconds,
        frame_bytes: d.bytes_sent,
        wire_bytes: p.ctx().transport().wire_bytes_sent() - w0,
        rounds: d.rounds,
    }));
    Ok(p)
}
