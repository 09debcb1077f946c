//! The paper's applications at the shapes of its Tables II and III, two parties, batch 1:
//! private decision trees (Hill Valley: depth 3 in the paper's counting, 100 features;
//! Spambase: 6, 57; Diabetes: 9, 8) and SVMs (CIFAR-10: 10 classes, 2,048 features; MIT-67:
//! 67, 2,048; ALOI: 463, 128), random models and inputs. Printed per run: milliseconds and bytes
//! per party, with the test dealer's material at k = s = 32 and 64 (the dealer makes it locally
//! when each step is prepared: those rows are the online phase plus that local work), and end to
//! end with the parties' own material at k = s = 32. Both parties run on one thread of the
//! in-memory harness. `cargo run --release -p ringfence-core --features test-utils --example
//! spdz2k_apps -- [own]` (`own`: also the rows with the parties' material, slower).

use std::time::Instant;

use ringfence_core::net::{PartyId, Stats};
use ringfence_core::ring::{IntRing, Z32, Z64};
use ringfence_core::spdz2k::apps::{self, PrivateTree};
use ringfence_core::spdz2k::{Spdz2k, Spdz2kRing};
use ringfence_core::testing::{self, MemTransport, Net};
use ringfence_core::Error;

fn small<R: IntRing>(n: usize, seed: u64) -> Vec<R> {
    testing::random_words(seed, n)
        .into_iter()
        .map(|w| R::from_i64((w % 200) as i64 - 100))
        .collect()
}

fn tree<R: IntRing>(depth: usize, features: usize) -> PrivateTree<R> {
    let m = (1usize << depth) - 1;
    let w = testing::random_words(7, m);
    PrivateTree {
        depth,
        features,
        feature: w.iter().map(|w| (w % features as u64) as usize).collect(),
        threshold: small(m, 8),
        leaf: small(m + 1, 9),
    }
}

/// Runs `f` among two parties (the dealer's material, or the parties' own), printing P1's
/// time and bytes.
fn measure<R: Spdz2kRing, F, Fut>(what: &str, own: bool, f: F)
where
    F: Fn(Spdz2k<MemTransport>) -> Fut,
    Fut: std::future::Future<Output = Result<(Option<R>, Stats), Error>>,
{
    let start = Instant::now();
    let outs = if own {
        testing::run_spdz2k_generating(&Net::new(2), 2, 3, f)
    } else {
        testing::run_spdz2k(2, 3, f)
    };
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let source = if own { "own material" } else { "dealer" };
    match &outs[1] {
        Ok((answer, st)) => println!(
            "  {what:<26} k = {:>2} {source:<13} {ms:>9.1} ms {:>12} B/party {:>5} rounds  answer {answer:?}",
            R::BITS,
            st.payload_bytes_sent,
            st.rounds
        ),
        Err(e) => println!("  {what:<26} k = {:>2} {source:<13} failed: {e}", R::BITS),
    }
}

fn run<R: Spdz2kRing>(own: bool) {
    for (name, depth, features) in
        [("Hill Valley (3, 100)", 2, 100), ("Spambase (6, 57)", 5, 57), ("Diabetes (9, 8)", 8, 8)]
    {
        let t = tree::<R>(depth, features);
        let x = small::<R>(features, 10);
        let want = t.eval_plain(&x);
        measure::<R, _, _>(&format!("tree {name}"), own, |mut p| {
            let (t, x) = (t.clone(), x.clone());
            async move {
                let me = p.me();
                let model = (me == PartyId(0)).then_some(&t);
                let xs = (me == PartyId(1)).then_some(&x[..]);
                let a = apps::tree(&mut p, (PartyId(0), PartyId(1)), (depth, features), model, xs)
                    .await?;
                Ok((a, p.ctx().stats()))
            }
        });
        println!("    (plaintext answer {want:?})");
    }
    for (name, q, n) in [
        ("SVM CIFAR-10 (10, 2048)", 10, 2048),
        ("SVM MIT-67 (67, 2048)", 67, 2048),
        ("SVM ALOI (463, 128)", 463, 128),
    ] {
        let (f, b, x) = (small::<R>(q * n, 11), small::<R>(q, 12), small::<R>(n, 13));
        measure::<R, _, _>(name, own, |mut p| {
            let (f, b, x) = (f.clone(), b.clone(), x.clone());
            async move {
                let me = p.me();
                let model = (me == PartyId(0)).then_some((&f[..], &b[..]));
                let xs = (me == PartyId(1)).then_some(&x[..]);
                let a = apps::svm(&mut p, (PartyId(0), PartyId(1)), (q, n), model, xs).await?;
                Ok((a, p.ctx().stats()))
            }
        });
    }
}

fn main() {
    let own = std::env::args().any(|a| a == "own");
    println!("the paper's applications, two parties on one thread, batch 1");
    run::<Z32>(false);
    run::<Z64>(false);
    if own {
        run::<Z32>(true);
    }
}
