//! The one place the served protocol families are listed: their names and wire codes
//! ([`Backend`]), what each can reveal, and the scheme types behind each ([`dispatch`],
//! [`dispatch_client`]).
//!
//! Everything else in `service` is written once over [`ServedScheme`]: a scheme that runs plans
//! ([`Inference`]) on a session. Adding a family is a row of [`FAMILIES`], a variant of
//! [`Backend`] and an arm of [`dispatch`].

use super::erased::{AnyParty, Extras};
use crate::mal3::client::Mal3Client;
use crate::mal3::Mal3;
use crate::meteor::client::MeteorClient;
use crate::meteor::Meteor;
use crate::net::{Ctx, Transport};
use crate::nn::Inference;
use crate::prg::Seed;
use crate::rep3::client::Rep3Client;
use crate::rep3::Rep3;
use crate::ring::Z64;
use crate::sharing::{Arith, InputClient, Session};

/// The protocol family a request runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// Replicated 3-party sharing ([`crate::rep3`]): can reveal only the class.
    Rep3,
    /// METEOR ([`crate::meteor`]): fewer online rounds; reveals the scores to the client.
    Meteor,
    /// rep3's sharing with every product checked ([`crate::mal3`]): a server that deviates
    /// makes the run abort instead of changing the answer; can reveal only the class.
    Mal3,
}

/// A served family's public facts.
struct Family {
    backend: Backend,
    /// Its name on command lines, in requests' logs and in the SDK.
    name: &'static str,
    /// Its code in a request (one byte, never reused).
    code: u64,
    /// Whether it can reveal only the class (it has an argmax protocol).
    reveals_class: bool,
    /// Ring elements per input value that the client sends each compute party.
    client_pieces: usize,
}

const FAMILIES: [Family; 3] = [
    Family { backend: Backend::Rep3, name: "rep3", code: 1, reveals_class: true, client_pieces: 2 },
    Family {
        backend: Backend::Meteor,
        name: "meteor",
        code: 2,
        reveals_class: false,
        client_pieces: 1,
    },
    Family { backend: Backend::Mal3, name: "mal3", code: 3, reveals_class: true, client_pieces: 2 },
];

/// Runs `f` with the scheme of `backend` started on the session `base`; gives the session back.
pub(crate) async fn dispatch<T: Transport, F: ForScheme<T>>(
    backend: Backend,
    base: Rep3<T>,
    f: F,
) -> (Rep3<T>, F::Out) {
    match backend {
        Backend::Rep3 => run_on::<Rep3<T>, T, F>(base, f).await,
        Backend::Meteor => run_on::<Meteor<T>, T, F>(base, f).await,
        Backend::Mal3 => run_on::<Mal3<T>, T, F>(base, f).await,
    }
}

async fn run_on<S: ServedScheme<T>, T: Transport, F: ForScheme<T>>(
    base: Rep3<T>,
    f: F,
) -> (Rep3<T>, F::Out) {
    let mut s = S::start(base);
    let out = f.run(&mut s).await;
    (s.finish(), out)
}

/// Runs `f` with the client side of `backend`'s scheme on `ctx`; gives the context back.
pub(crate) async fn dispatch_client<T: Transport, F: ForClient<T>>(
    backend: Backend,
    ctx: Ctx<T>,
    own: Seed,
    f: F,
) -> (Ctx<T>, F::Out) {
    match backend {
        Backend::Rep3 => client_on::<Rep3Client<T>, T, F>(ctx, own, f).await,
        Backend::Meteor => client_on::<MeteorClient<T>, T, F>(ctx, own, f).await,
        Backend::Mal3 => client_on::<Mal3Client<T>, T, F>(ctx, own, f).await,
    }
}

async fn client_on<C: InputClient<T, Z64>, T: Transport, F: ForClient<T>>(
    ctx: Ctx<T>,
    own: Seed,
    f: F,
) -> (Ctx<T>, F::Out) {
    let mut c = C::new(ctx, own);
    let out = f.run(&mut c).await;
    (c.into_ctx(), out)
}

impl Backend {
    /// This family's party started on `base`, with its type erased: for callers that pick the
    /// scheme at run time (the SDK's `Party`). Static dispatch stays inside each operation.
    pub fn party<T: Transport + 'static>(self, base: Rep3<T>) -> Box<dyn AnyParty<T>> {
        match self {
            Self::Rep3 => Box::new(base),
            Self::Meteor => Box::new(Meteor::start(base)),
            Self::Mal3 => Box::new(Mal3::start(base)),
        }
    }

    fn family(self) -> &'static Family {
        FAMILIES.iter().find(|f| f.backend == self).expect("every backend has a row")
    }

    /// Every served family, in the registry's order.
    pub fn all() -> impl Iterator<Item = Self> {
        FAMILIES.iter().map(|f| f.backend)
    }

    /// Its name on command lines and in the SDK.
    pub fn name(self) -> &'static str {
        self.family().name
    }

    /// Whether it can reveal only the class (rather than every score).
    pub fn reveals_class(self) -> bool {
        self.family().reveals_class
    }

    /// Ring elements per input value that a client sends each compute party.
    pub(super) fn client_pieces(self) -> usize {
        self.family().client_pieces
    }

    pub(super) fn code(self) -> u64 {
        self.family().code
    }

    pub(super) fn from_code(c: u64) -> Option<Self> {
        FAMILIES.iter().find(|f| f.code == c).map(|f| f.backend)
    }

    /// The names of the families that can reveal only the class, for messages.
    pub(super) fn class_revealers() -> String {
        let names: Vec<&str> =
            FAMILIES.iter().filter(|f| f.reveals_class).map(|f| f.name).collect();
        names.join(" or ")
    }
}

/// METEOR has neither comparisons for a party API nor material made ahead of its operands
/// (its products' material depends on their masks): its [`AnyParty`] offers arithmetic only.
/// rep3's and mal3's extras come from their uniform material ([`Extras`]).
impl<T: Transport> Extras<T> for Meteor<T> {}

impl core::str::FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        FAMILIES.iter().find(|f| f.name == s).map(|f| f.backend).ok_or_else(|| {
            let names: Vec<&str> = FAMILIES.iter().map(|f| f.name).collect();
            format!("unknown backend {s:?} ({})", names.join(" or "))
        })
    }
}

/// A scheme the service can serve: it runs plans over Z_2^64 on a session, and its shares and
/// material can wait on a [`Shelf`](super::stock::Shelf) shared across threads.
pub(crate) trait ServedScheme<T: Transport>:
    Inference<Z64, Prep: Send + 'static> + Arith<Z64, V: Send + Sync + 'static> + Session<Rep3<T>>
{
}

impl<T: Transport, S> ServedScheme<T> for S where
    S: Inference<Z64, Prep: Send + 'static>
        + Arith<Z64, V: Send + Sync + 'static>
        + Session<Rep3<T>>
{
}

/// Work written once over the served scheme `S`, which [`dispatch`] picks by backend.
#[allow(async_fn_in_trait)]
pub(crate) trait ForScheme<T: Transport> {
    /// What the work gives.
    type Out;
    /// Does the work as party `s` of scheme `S`.
    async fn run<S: ServedScheme<T>>(self, s: &mut S) -> Self::Out;
}

/// Work written once over the client side `C` of a scheme, which [`dispatch_client`] picks.
#[allow(async_fn_in_trait)]
pub(crate) trait ForClient<T: Transport> {
    /// What the work gives.
    type Out;
    /// Does the work as client `c`.
    async fn run<C: InputClient<T, Z64>>(self, c: &mut C) -> Self::Out;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_codes_are_distinct_and_round_trip() {
        for b in Backend::all() {
            assert_eq!(b.name().parse::<Backend>(), Ok(b));
            assert_eq!(Backend::from_code(b.code()), Some(b));
            assert_eq!(
                FAMILIES.iter().filter(|f| f.name == b.name() || f.code == b.code()).count(),
                1
            );
        }
        assert_eq!(Backend::from_code(0), None);
        let err = "spdz".parse::<Backend>().unwrap_err();
        assert!(err.contains("rep3") && err.contains("meteor") && err.contains("mal3"), "{err}");
    }
}
