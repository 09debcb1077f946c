//! Misuse of preparations and inputs: refused as [`Error::ApiMisuse`], never a wrong result.

use super::{
    input_now, label, plain_matmul, plain_mul, random, run, run_on, Party, Scheme, TestBase,
};
use crate::net::PartyId;
use crate::ring::IntRing;
use crate::sharing::Arith;
use crate::testing::Net;
use crate::Error;

/// Preparations used for other lengths, shapes, operands or owners than they were made for.
///
/// Wrong lengths, shapes and owners are refused at every scheme. A preparation made for other
/// operands of the same shape is refused where the scheme binds preparations to operands
/// ([`Scheme::binds_operands`]) and gives the exact product of the operands passed where it
/// does not. A refused call sends nothing: the same session then computes a correct product.
pub fn misuse<R: IntRing, S: Party<R, B>, B: TestBase>(sc: &Scheme<S, B>) {
    let at = label::<R, S>();
    let parties = &sc.parties();
    let dims = (2, 3, 4);
    let v = |seed, n| random::<R>(seed, n);
    let (x, y, z, x5, y5) = (&v(80, 4), &v(81, 4), &v(82, 4), &v(83, 5), &v(84, 5));
    let (a, a2, b) = (&v(85, 6), &v(86, 6), &v(87, 12));
    let outs = run(sc, &at, 88, |mut s| async move {
        let (vx, vy, vz) = (
            input_now(&mut s, PartyId(0), x).await?,
            input_now(&mut s, PartyId(1), y).await?,
            input_now(&mut s, PartyId(2), z).await?,
        );
        let vx5 = input_now(&mut s, PartyId(0), x5).await?;
        let vy5 = input_now(&mut s, PartyId(1), y5).await?;
        let va = input_now(&mut s, PartyId(0), a).await?;
        let va2 = input_now(&mut s, PartyId(2), a2).await?;
        let vb = input_now(&mut s, PartyId(1), b).await?;
        let (tx, ty, ta, tb) = (S::tag(&vx), S::tag(&vy), S::tag(&va), S::tag(&vb));

        let (p, _) = s.mul_prep(&tx, &ty, 0).await?;
        let mul_len = s.mul(&vx5, &vy5, p).await.err();
        let (p, _) = s.mul_prep(&tx, &ty, 0).await?;
        let r = s.mul(&vx, &vz, p).await;
        let mul_operand = open_unless_refused(&mut s, r).await?;
        // The same operands read as 1×6 by 6×2: consistent lengths, other outputs.
        let (p, _) = s.matmul_prep(&ta, &tb, dims, 0).await?;
        let matmul_dims = s.matmul(&va, &vb, (1, 6, 2), p).await.err();
        let (p, _) = s.matmul_prep(&ta, &tb, dims, 0).await?;
        let r = s.matmul(&va2, &vb, dims, p).await;
        let matmul_operand = open_unless_refused(&mut s, r).await?;
        let (p, _) = s.input_prep(PartyId(0), x.len());
        let values = (s.me() == PartyId(1)).then_some(&x[..]);
        let input_owner = s.input(PartyId(1), values, p).await.err();

        let (p, _) = s.mul_prep(&tx, &ty, 0).await?;
        let xy = s.mul(&vx, &vy, p).await?;
        let refused = [mul_len, matmul_dims, input_owner];
        Ok((refused, mul_operand, matmul_operand, s.open(xy).await?))
    });
    let what = [
        "a product's preparation for 4 values used on 5",
        "a 2x3x4 preparation used as 1x6x2",
        "P0's input preparation used for P1's input",
    ];
    for (me, (refused, mul_operand, matmul_operand, xy)) in parties.iter().zip(&outs) {
        for (what, got) in what.iter().zip(refused) {
            assert!(matches!(got, Some(Error::ApiMisuse(_))), "{at}: {what}, at {me}: {got:?}");
        }
        let other = [
            ("x·y's preparation used for x·z", mul_operand, plain_mul(x, z)),
            ("a·b's preparation used for a'·b", matmul_operand, plain_matmul(a2, b, dims)),
        ];
        for (what, got, exact) in other {
            if sc.binds_operands {
                assert!(matches!(got, Err(Error::ApiMisuse(_))), "{at}: {what}, at {me}: {got:?}");
            } else {
                assert_eq!(got.as_ref().ok(), Some(&exact), "{at}: {what}, at {me}");
            }
        }
        assert_eq!(xy, &plain_mul(x, y), "{at}: a product after the refused calls, at {me}");
    }
}

/// An input whose values come from the wrong party, or in the wrong number, is refused at the
/// party that passed them (the session is then out of step, so each case has its own).
pub fn misuse_of_input_values<R: IntRing, S: Party<R, B>, B: TestBase>(sc: &Scheme<S, B>) {
    let at = label::<R, S>();
    let parties = &sc.parties();
    let x = &random::<R>(90, 4);
    let owner = PartyId(2);
    // Every party passes values: all but the owner must refuse.
    let outs = run_on(sc, &Net::new(sc.roster.n()), 91, |mut s| async move {
        let (p, _) = s.input_prep(owner, x.len());
        s.input(owner, Some(x), p).await.map(|_| ())
    });
    for (me, got) in parties.iter().zip(&outs) {
        if *me != owner {
            assert!(matches!(got, Err(Error::ApiMisuse(_))), "{at}: {me} passed values: {got:?}");
        }
    }
    // The owner passes one value too many.
    let outs = run_on(sc, &Net::new(sc.roster.n()), 92, |mut s| async move {
        let (p, _) = s.input_prep(owner, x.len() - 1);
        let values = (s.me() == owner).then_some(&x[..]);
        s.input(owner, values, p).await.map(|_| ())
    });
    let got = &outs[owner.index()];
    assert!(matches!(got, Err(Error::ApiMisuse(_))), "{at}: 4 values for 3, at {owner}: {got:?}");
}

/// The result of a call that may be refused: opened when it was not (every party makes the
/// same call, so all open or none does).
async fn open_unless_refused<R: IntRing, S: Arith<R>>(
    s: &mut S,
    r: Result<S::V, Error>,
) -> Result<Result<Vec<R>, Error>, Error> {
    match r {
        Ok(v) => s.open(v).await.map(Ok),
        Err(e) => Ok(Err(e)),
    }
}
