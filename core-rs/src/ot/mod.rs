//! `ot`: oblivious transfer, for preprocessing by the parties themselves (no dealer): base OTs
//! on the Ristretto group ([`base`]), correlated OT extension with its consistency check
//! ([`ext`]), and the field arithmetic of that check ([`gf128`]). Knows no sharing scheme.

pub mod base;
pub mod ext;
pub mod gf128;

pub use base::BaseOts;
pub use ext::{Cot, Extended, Tccr, KAPPA};
