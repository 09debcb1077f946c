//! bin3 as a boolean circuit engine ([`Gates`]): bits packed 64 per word, so every gate runs
//! on 64 instances per word, and a layer of ANDs of any fan-in in one round per eight-fold
//! of fan-in (one round up to eight inputs).

use super::{gates::MAX_FAN_IN, Bin3, Bin3Vec, Role};
use std::borrow::BorrowMut;

use crate::net::{PartyId, Transport};
use crate::rep3::Rep3;
use crate::ring::Bits;
use crate::sharing::{pack_bits, unpack_bools, Gates, Packed, WordShares};
use crate::Error;

/// `n` shared bits of bin3, packed 64 per word.
pub type Bin3Bits = Packed<Bin3Vec<Bits>>;

impl WordShares for Bin3Vec<Bits> {
    type Holder = Role;
    fn holder(&self) -> Role {
        self.role
    }
    fn components(&self) -> Vec<&[Bits]> {
        vec![&self.a, &self.b]
    }
    fn from_components(holder: Role, components: Vec<Vec<Bits>>) -> Self {
        let mut c = components.into_iter();
        Self::from_parts(holder, c.next().unwrap_or_default(), c.next().unwrap_or_default())
    }
    fn xor_words(&self, o: &Self) -> Result<Self, Error> {
        self.add(o)
    }
    fn not_words(&self) -> Self {
        // P1 and P2 flip their first component; P3's masks stay.
        let mut out = self.clone();
        if self.role != Role::P3 {
            out.a.iter_mut().for_each(|w| w.0 = !w.0);
        }
        out
    }
}

impl<T: Transport, B: BorrowMut<Rep3<T>>> Gates for Bin3<T, B> {
    type Bits = Bin3Bits;

    /// One round: a word per 64 bits from an owner in seat P1 or P2, two from P3.
    async fn input_bits(
        &mut self,
        owner: PartyId,
        bits: Option<&[bool]>,
        n: usize,
    ) -> Result<Bin3Bits, Error> {
        if let Some(b) = bits {
            crate::sharing::same_len(b.len(), n, "bin3 input_bits")?;
        }
        let words = bits.map(pack_bits);
        let w = self.input::<Bits>(owner, words.as_deref(), n.div_ceil(64)).await?;
        Ok(Packed { n, words: w })
    }

    fn constant_bits(&self, bits: &[bool]) -> Bin3Bits {
        Packed { n: bits.len(), words: self.constant(&pack_bits(bits)) }
    }

    /// One round, one word per 64 bits from each party; P3 receives nothing.
    async fn and(&mut self, x: &Bin3Bits, y: &Bin3Bits) -> Result<Bin3Bits, Error> {
        crate::sharing::same_len(x.n, y.n, "and")?;
        Ok(Packed { n: x.n, words: self.mul(&x.words, &y.words).await? })
    }

    async fn open_bits(&mut self, b: Bin3Bits) -> Result<Vec<bool>, Error> {
        let n = b.n;
        Ok(unpack_bools(&self.open(b.words).await?, n))
    }

    /// Gates of up to eight inputs in one round ([`Bin3::mul_layer`]); a wider gate becomes a
    /// tree of such gates, one round per level.
    async fn and_layer(&mut self, gates: &[&[&Bin3Bits]]) -> Result<Vec<Bin3Bits>, Error> {
        let mut level: Vec<Vec<Bin3Bits>> = Vec::with_capacity(gates.len());
        for g in gates {
            let Some(first) = g.first() else {
                return Err(Error::ApiMisuse("and: a gate without operands".into()));
            };
            if g.iter().any(|x| x.n != first.n) {
                return Err(Error::ApiMisuse("and: operands of different lengths".into()));
            }
            level.push(g.iter().map(|&x| x.clone()).collect());
        }
        while level.iter().any(|g| g.len() > 1) {
            // Each gate's operands in groups of up to eight; a group of one waits a level.
            let groups: Vec<Vec<&Bin3Vec<Bits>>> = level
                .iter()
                .flat_map(|g| g.chunks(MAX_FAN_IN).filter(|c| c.len() > 1))
                .map(|c| c.iter().map(|x| &x.words).collect())
                .collect();
            let refs: Vec<&[&Bin3Vec<Bits>]> = groups.iter().map(|g| &g[..]).collect();
            let mut out = self.mul_layer(&refs).await?.into_iter();
            for g in &mut level {
                let n = g[0].n;
                let mut next = Vec::with_capacity(g.len().div_ceil(MAX_FAN_IN));
                for c in g.chunks(MAX_FAN_IN) {
                    next.push(match c {
                        [one] => one.clone(),
                        _ => Packed { n, words: out.next().ok_or_else(lost)? },
                    });
                }
                *g = next;
            }
        }
        Ok(level.into_iter().filter_map(|mut g| g.pop()).collect())
    }
}

fn lost() -> Error {
    Error::ApiMisuse("bin3: a layer returned fewer gates than it was given".into())
}
