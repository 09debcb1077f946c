//! The one place the served protocol families are listed: their names and wire codes
//! ([`Backend`]), what each can reveal and among how many servers it runs, the session each
//! runs on ([`ServiceBase`]: rep3's for the three-party families, rss's own for rss) and the
//! scheme types behind each ([`Dispatch`], [`dispatch_client`]).
//!
//! Everything else in `service` is written once over [`ServedScheme`]: a scheme that runs plans
//! ([`Inference`]) on a session. Adding a family is a row of [`FAMILIES`], a variant of
//! [`Backend`] and an arm of its session's [`Dispatch`].

use super::erased::{AnyBoolean, AnyParty, Extras, SchemeSession};
use super::Catalog;
use crate::mal3::client::Mal3Client;
use crate::mal3::Mal3;
use crate::meteor::client::MeteorClient;
use crate::meteor::Meteor;
use crate::net::{Ctx, PartyId, Roster, Transport};
use crate::nn::Inference;
use crate::prg::Seed;
use crate::rep3::client::Rep3Client;
use crate::rep3::{Rep3, Rep3Seeds};
use crate::ring::Z64;
use crate::rss::client::RssClient;
use crate::rss::{Access, Rss, KEY_WORDS};
use crate::sharing::{Arith, InputClient, Session};
use crate::spdz2k::{Mesh, Spdz2k};
use crate::Error;

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
    /// Threshold replicated sharing among 5 or 7 servers ([`crate::rss`]): any 2 (of 5) or 3
    /// (of 7) servers together learn nothing; can reveal only the class.
    Rss,
    /// Authenticated additive sharing with a dishonest majority ([`crate::spdz2k`]): one or two
    /// servers and the client, which computes as the last party; each party is protected
    /// against all the others even if they deviate together (the run aborts). Can reveal only
    /// the class.
    Spdz2k,
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
    /// Whether it runs integer plans (quantized models: exact products and secret rescaling).
    integer_plans: bool,
    /// The numbers of servers it is served among.
    servers: &'static [usize],
    /// The sizes (in ring elements) of the messages a client sends compute party `me` of
    /// `roster` for an input of `values` values.
    client_frames: fn(Roster, PartyId, usize) -> Vec<usize>,
    /// Whether the client is one of the compute parties (the last), rather than an input
    /// provider beside them: it then runs the whole protocol, preprocessing included.
    client_computes: bool,
}

const THREE: &[usize] = &[3];

const FAMILIES: [Family; 5] = [
    Family {
        backend: Backend::Rep3,
        name: "rep3",
        code: 1,
        reveals_class: true,
        integer_plans: true,
        servers: THREE,
        client_frames: |_, _, values| vec![2 * values],
        client_computes: false,
    },
    Family {
        backend: Backend::Meteor,
        name: "meteor",
        code: 2,
        reveals_class: false,
        integer_plans: false,
        servers: THREE,
        client_frames: |_, _, values| vec![values],
        client_computes: false,
    },
    Family {
        backend: Backend::Mal3,
        name: "mal3",
        code: 3,
        reveals_class: true,
        integer_plans: true,
        servers: THREE,
        client_frames: |_, _, values| vec![2 * values],
        client_computes: false,
    },
    Family {
        backend: Backend::Rss,
        name: "rss",
        code: 4,
        reveals_class: true,
        integer_plans: true,
        servers: &[5, 7],
        client_frames: rss_client_frames,
        client_computes: false,
    },
    Family {
        backend: Backend::Spdz2k,
        name: "spdz2k",
        code: 5,
        reveals_class: true,
        integer_plans: true,
        servers: &[1, 2],
        // Its input is a compute party's: one masked vector to each other party.
        client_frames: |_, _, values| vec![values],
        client_computes: true,
    },
];

/// Who takes part in a session of a deployment of `servers` servers: the servers are
/// participants 0 to `servers − 1` and the client the next; the compute parties are the
/// servers, and the client too where the deployment's family computes with it (one server:
/// spdz2k).
///
/// ```
/// use ringfence_core::{net::PartyId, service::{self, Deployment}};
/// let three = Deployment::new(3).unwrap();
/// assert_eq!((three.client(), three.roster()), (service::CLIENT, service::ROSTER));
/// let one = Deployment::new(1).unwrap();
/// assert_eq!((one.client(), one.roster().n(), one.roster().t()), (PartyId(1), 2, 1));
/// assert!(Deployment::new(4).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deployment {
    servers: usize,
}

impl Deployment {
    /// A deployment of `servers` servers: an error unless some family is served among that
    /// many.
    pub fn new(servers: usize) -> Result<Self, Error> {
        if Backend::all().any(|b| b.servers().contains(&servers)) {
            return Ok(Self { servers });
        }
        let mut sizes: Vec<usize> = Backend::all().flat_map(|b| b.servers()).copied().collect();
        sizes.sort_unstable();
        sizes.dedup();
        let sizes: Vec<String> = sizes.iter().map(usize::to_string).collect();
        let (last, rest) = sizes.split_last().map_or(("", &[][..]), |(l, r)| (l.as_str(), r));
        Err(Error::ApiMisuse(format!(
            "a deployment has {} or {last} servers, not {servers}",
            rest.join(", ")
        )))
    }

    /// The number of servers.
    pub fn servers(self) -> usize {
        self.servers
    }

    /// Whether the client computes as the last compute party.
    pub fn client_computes(self) -> bool {
        Backend::all().any(|b| b.servers().contains(&self.servers) && b.client_computes())
    }

    /// The compute parties of a session.
    pub fn roster(self) -> Roster {
        let n = self.servers;
        let r =
            if self.client_computes() { Roster::new(n + 1, n) } else { Roster::honest_majority(n) };
        r.expect("a served size")
    }

    /// The client's participant id.
    pub fn client(self) -> PartyId {
        PartyId(self.servers as u8)
    }

    /// Participants of a session: the servers and the client.
    pub fn participants(self) -> usize {
        self.servers + 1
    }
}

/// rss's client sends each party the seeds of the shares it holds, then the designated share's
/// values if it holds that ([`RssClient::share`]).
fn rss_client_frames(roster: Roster, me: PartyId, values: usize) -> Vec<usize> {
    let Ok(access) = Access::for_roster(roster) else { return vec![] };
    let held = access.held(me);
    let mut frames = vec![KEY_WORDS * held.iter().filter(|&&s| s != 0).count()];
    if held.contains(&0) {
        frames.push(values);
    }
    frames
}

/// The session a served family runs on, which a compute party sets up before it knows the
/// request: [`Rep3`]'s for the three-party families (rep3, METEOR, mal3), [`Rss`]'s for rss
/// among 5 or 7 servers. [`serve`](super::serve) takes either, and refuses a request for a
/// family that does not run on it. Sealed: the families are the registry's.
pub trait ServiceBase<T: Transport>: Dispatch<T> {
    /// The session's context.
    fn ctx(&self) -> &Ctx<T>;
    /// The session's context, mutably.
    fn ctx_mut(&mut self) -> &mut Ctx<T>;
    /// Gives the context back (e.g. to close its transport).
    fn into_ctx(self) -> Ctx<T>;
    /// Who takes part: the compute parties, then the clients.
    fn roster(&self) -> Roster;
    /// One round in which every party hears from every other (before links close).
    #[allow(async_fn_in_trait)]
    async fn barrier(&mut self) -> Result<(), Error>;
}

/// How a session runs the families on it (the registry's part of [`ServiceBase`]).
pub trait Dispatch<T: Transport>: Sized {
    /// Whether `backend` runs on this session.
    fn runs(backend: Backend) -> bool;
    /// Whether the client of a session of this kind is its last compute party.
    fn client_computes() -> bool {
        Backend::all().any(|b| Self::runs(b) && b.client_computes())
    }
    /// Applies what the catalogue says of how the families run (rep3's comparisons).
    fn configure(&mut self, catalog: &Catalog);
    /// Runs `f` with the scheme of `backend` started on this session; gives the session back.
    /// `None` when `backend` does not run on it (callers check [`Dispatch::runs`] first).
    #[allow(async_fn_in_trait)]
    async fn dispatch<F: ForScheme<T, Self>>(
        self,
        backend: Backend,
        f: F,
    ) -> (Self, Option<F::Out>);
}

/// Implements [`ServiceBase`] for a session type by forwarding to its inherent methods of
/// the same names.
macro_rules! forward_service_base {
    ($ty:ident) => {
        impl<T: Transport> ServiceBase<T> for $ty<T> {
            fn ctx(&self) -> &Ctx<T> {
                Self::ctx(self)
            }
            fn ctx_mut(&mut self) -> &mut Ctx<T> {
                Self::ctx_mut(self)
            }
            fn into_ctx(self) -> Ctx<T> {
                Self::into_ctx(self)
            }
            fn roster(&self) -> Roster {
                Self::roster(self)
            }
            async fn barrier(&mut self) -> Result<(), Error> {
                Self::barrier(self).await
            }
        }
    };
}

forward_service_base!(Rep3);
forward_service_base!(Rss);
forward_service_base!(Mesh);

impl<T: Transport> Dispatch<T> for Rep3<T> {
    fn runs(backend: Backend) -> bool {
        matches!(backend, Backend::Rep3 | Backend::Meteor | Backend::Mal3)
    }
    fn configure(&mut self, catalog: &Catalog) {
        self.set_comparisons(catalog.comparisons);
    }
    async fn dispatch<F: ForScheme<T, Self>>(
        self,
        backend: Backend,
        f: F,
    ) -> (Self, Option<F::Out>) {
        match backend {
            Backend::Rep3 => run_on::<Self, T, _, F>(self, f).await,
            Backend::Meteor => run_on::<Meteor<T>, T, _, F>(self, f).await,
            Backend::Mal3 => run_on::<Mal3<T>, T, _, F>(self, f).await,
            Backend::Rss | Backend::Spdz2k => (self, None),
        }
    }
}

/// [`Dispatch`] for a session that runs one family, on scheme `$scheme`.
macro_rules! dispatch_one_family {
    ($session:ident, $backend:path, $scheme:ty) => {
        impl<T: Transport> Dispatch<T> for $session<T> {
            fn runs(backend: Backend) -> bool {
                backend == $backend
            }
            fn configure(&mut self, _: &Catalog) {}
            async fn dispatch<F: ForScheme<T, Self>>(
                self,
                backend: Backend,
                f: F,
            ) -> (Self, Option<F::Out>) {
                match backend {
                    $backend => run_on::<$scheme, T, _, F>(self, f).await,
                    _ => (self, None),
                }
            }
        }
    };
}

dispatch_one_family!(Rss, Backend::Rss, Self);
dispatch_one_family!(Mesh, Backend::Spdz2k, Spdz2k<T>);

async fn run_on<S: ServedScheme<T, B>, T: Transport, B, F: ForScheme<T, B>>(
    base: B,
    f: F,
) -> (B, Option<F::Out>) {
    let mut s = S::start(base);
    let out = f.run(&mut s).await;
    (s.finish(), Some(out))
}

/// Runs `f` with the client side of `backend`'s scheme on `ctx`; gives the context back.
/// `None` for a family whose client computes as a party (it has no input-provider side).
pub(crate) async fn dispatch_client<T: Transport, F: ForClient<T>>(
    backend: Backend,
    ctx: Ctx<T>,
    own: Seed,
    f: F,
) -> (Ctx<T>, Option<F::Out>) {
    match backend {
        Backend::Rep3 => client_on::<Rep3Client<T>, T, F>(ctx, own, f).await,
        Backend::Meteor => client_on::<MeteorClient<T>, T, F>(ctx, own, f).await,
        Backend::Mal3 => client_on::<Mal3Client<T>, T, F>(ctx, own, f).await,
        Backend::Rss => client_on::<RssClient<T>, T, F>(ctx, own, f).await,
        Backend::Spdz2k => (ctx, None),
    }
}

async fn client_on<C: InputClient<T, Z64>, T: Transport, F: ForClient<T>>(
    ctx: Ctx<T>,
    own: Seed,
    f: F,
) -> (Ctx<T>, Option<F::Out>) {
    let mut c = C::new(ctx, own);
    let out = f.run(&mut c).await;
    (c.into_ctx(), Some(out))
}

impl Backend {
    /// This family's party started on `base`, with its type erased: for callers that pick the
    /// scheme at run time (the SDK's `Party`). Static dispatch stays inside each operation.
    /// rss runs on its own session ([`Rss::setup`]), not on rep3's: `ApiMisuse`.
    pub fn party<T: Transport + 'static>(
        self,
        base: Rep3<T>,
    ) -> Result<Box<dyn AnyParty<T>>, Error> {
        Ok(match self {
            Self::Rep3 => Box::new(base),
            Self::Meteor => Box::new(Meteor::start(base)),
            Self::Mal3 => Box::new(Mal3::start(base)),
            Self::Rss => {
                return Err(Error::ApiMisuse(
                    "rss runs on its own session (among 5 or 7 parties), not on rep3's".into(),
                ))
            }
            Self::Spdz2k => {
                return Err(Error::ApiMisuse(
                    "spdz2k runs on its own session (a server and the client), not on rep3's"
                        .into(),
                ))
            }
        })
    }

    /// The compute parties of a session of `n` parties joined as this family's (the SDK's
    /// `Party`): an honest majority among the sizes the family is served with, or for spdz2k
    /// (whose client computes) any `n ≥ 2`, all but one of them possibly corrupt. Other counts
    /// are `ApiMisuse`.
    pub fn party_roster(self, n: usize) -> Result<Roster, Error> {
        if self.client_computes() {
            if n < 2 {
                return Err(Error::ApiMisuse(format!(
                    "{} runs among 2 or more parties, not {n}",
                    self.name()
                )));
            }
            return Roster::new(n, n - 1);
        }
        if !self.servers().contains(&n) {
            let among: Vec<String> = self.servers().iter().map(usize::to_string).collect();
            return Err(Error::ApiMisuse(format!(
                "{} runs among {} parties, not {n}",
                self.name(),
                among.join(" or ")
            )));
        }
        Roster::honest_majority(n)
    }

    /// This family's party among `parties` compute parties ([`Backend::party_roster`]), set
    /// up on `ctx` with `seeds` (rep3's pairwise keys and this party's own randomness; rss and
    /// spdz2k use only the latter), with its type erased: the SDK's `Party.join`. rep3's
    /// families and rss agree their keys in one round; spdz2k makes its base OTs when its
    /// first material is needed.
    pub async fn join<T: Transport + 'static>(
        self,
        ctx: Ctx<T>,
        parties: usize,
        seeds: Rep3Seeds,
    ) -> Result<Box<dyn AnyParty<T>>, Error> {
        let roster = self.party_roster(parties)?;
        match self {
            Self::Rss => Ok(Box::new(Rss::setup(ctx, roster, seeds.own).await?)),
            Self::Spdz2k => {
                let mesh = Mesh::new(ctx, roster, seeds.own, crate::spdz2k::Source::parties())?;
                Ok(Box::new(Spdz2k::start(mesh)))
            }
            _ => self.party(Rep3::setup(ctx, seeds).await?),
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

    /// The numbers of servers it is served among (rep3, METEOR, mal3: 3; rss: 5 or 7;
    /// spdz2k: 1, beside the client that computes).
    pub fn servers(self) -> &'static [usize] {
        self.family().servers
    }

    /// Whether the client is one of the compute parties (spdz2k: the last of them), running
    /// the whole protocol with the servers, rather than an input provider beside them.
    pub fn client_computes(self) -> bool {
        self.family().client_computes
    }

    /// The sizes (in ring elements) of the messages a client sends compute party `me` of
    /// `roster` for an input of `values` values.
    pub(super) fn client_frames(self, roster: Roster, me: PartyId, values: usize) -> Vec<usize> {
        (self.family().client_frames)(roster, me, values)
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

    /// Whether it runs a quantized model's integer plan (METEOR runs fixed-point plans only).
    pub fn runs_integer_plans(self) -> bool {
        self.family().integer_plans
    }

    /// The names of the families that run integer plans, for messages.
    pub(super) fn integer_runners() -> String {
        let names: Vec<&str> =
            FAMILIES.iter().filter(|f| f.integer_plans).map(|f| f.name).collect();
        names.join(", ")
    }
}

/// METEOR has neither comparisons for a party API nor material made ahead of its operands
/// (its products' material depends on their masks): its [`AnyParty`] offers arithmetic only.
/// rep3's and mal3's extras come from their uniform material ([`Extras`]).
impl<T: Transport> Extras<T> for Meteor<T> {}

/// rss offers its comparisons; its material made ahead is not erased yet (products and ReLUs
/// make theirs when they run).
impl<T: Transport> Extras<T> for Rss<T> {
    fn boolean(&mut self) -> Option<&mut dyn AnyBoolean> {
        Some(self)
    }
}

impl<T: Transport> SchemeSession<T> for Rep3<T> {
    type Base = Self;
}
impl<T: Transport> SchemeSession<T> for Meteor<T> {
    type Base = Rep3<T>;
}
impl<T: Transport> SchemeSession<T> for Mal3<T> {
    type Base = Rep3<T>;
}
impl<T: Transport> SchemeSession<T> for Rss<T> {
    type Base = Self;
}
impl<T: Transport> SchemeSession<T> for Spdz2k<T> {
    type Base = Mesh<T>;
}

/// spdz2k offers its comparisons; its material depends on nothing but counts, yet is made as
/// the operations run (the party's generator makes it with the others when drawn).
impl<T: Transport> Extras<T> for Spdz2k<T> {
    fn boolean(&mut self) -> Option<&mut dyn AnyBoolean> {
        Some(self)
    }
}

impl core::str::FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        FAMILIES.iter().find(|f| f.name == s).map(|f| f.backend).ok_or_else(|| {
            let names: Vec<&str> = FAMILIES.iter().map(|f| f.name).collect();
            format!("unknown backend {s:?} ({})", names.join(" or "))
        })
    }
}

/// A scheme the service can serve: it runs plans over Z_2^64 on a session `B`, and its shares
/// and material can wait on a [`Shelf`](super::stock::Shelf) shared across threads.
pub trait ServedScheme<T: Transport, B>:
    Inference<Z64, Prep: Send + 'static> + Arith<Z64, V: Send + Sync + 'static> + Session<B>
{
}

impl<T: Transport, B, S> ServedScheme<T, B> for S where
    S: Inference<Z64, Prep: Send + 'static> + Arith<Z64, V: Send + Sync + 'static> + Session<B>
{
}

/// Work written once over the served scheme `S` on session `B`, which [`Dispatch::dispatch`]
/// picks by backend.
#[allow(async_fn_in_trait)]
pub trait ForScheme<T: Transport, B> {
    /// What the work gives.
    type Out;
    /// Does the work as party `s` of scheme `S`.
    async fn run<S: ServedScheme<T, B>>(self, s: &mut S) -> Self::Out;
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
        for name in ["rep3", "meteor", "mal3", "rss", "spdz2k"] {
            assert!(err.contains(name), "{err}");
        }
    }
}
