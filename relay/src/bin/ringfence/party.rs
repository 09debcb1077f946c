//! The child side: read the setup from stdin, bind, report the port, connect to the peers and
//! hand a ready session to the bench or session-party code: a [`Rep3`] session ([`run`]), or any
//! [`Base`] session kind ([`run_as`]), e.g. an [`Rss`] one among 3, 5 or 7 parties.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;

use ringfence_core::net::{Ctx, PartyId, Roster, SessionId};
use ringfence_core::prg::Seed;
use ringfence_core::rep3::Rep3;
use ringfence_core::rss::{Access, Rss, SUPPORTED};
use ringfence_core::service::ServiceBase;
use ringfence_core::spdz2k::{Mesh, Source};
use ringfence_relay::ws::{parse_session_hex, RelayLinkConfig};
use ringfence_relay::{
    PrivateKey, PublicKey, Security, StaticKeypair, TcpTransport, TransportConfig,
};

use crate::msgs::{FromChild, ToChild};
use crate::webrtc::WebrtcArgs;

/// The relay this party process links through (`--relay`), set once from its command line
/// before [`run`]; `None` means direct TCP.
static RELAY: OnceLock<Option<String>> = OnceLock::new();
/// Its WebRTC options (`--webrtc`), set with the relay.
static WEBRTC: OnceLock<WebrtcArgs> = OnceLock::new();

/// Sets the relay and WebRTC options for this process's party (first call wins).
pub(crate) fn set_relay(url: Option<String>, webrtc: WebrtcArgs) {
    let _ = RELAY.set(url);
    let _ = WEBRTC.set(webrtc);
}

/// A connected rep3 session.
pub(crate) type Session = Rep3<TcpTransport>;

/// A session kind a party process starts on its connected links; what the measurements need
/// whatever the scheme (context, roster, barrier) is the service's [`ServiceBase`].
#[allow(async_fn_in_trait)]
pub(crate) trait Base: ServiceBase<TcpTransport> {
    /// Starts the session among `parties` compute parties on the links of `ctx` (its setup
    /// round, if it has one).
    async fn start(ctx: Ctx<TcpTransport>, parties: usize) -> Result<Self, String>;
}

/// rep3, among the binary's three compute parties, seeded from its links and the OS.
impl Base for Session {
    async fn start(ctx: Ctx<TcpTransport>, parties: usize) -> Result<Self, String> {
        if parties != crate::ROSTER.n() {
            return Err(format!(
                "rep3 runs among {} compute parties, not {parties}",
                crate::ROSTER.n()
            ));
        }
        let seeds = ctx.transport().rep3_seeds().map_err(|e| e.to_string())?;
        Self::setup(ctx, seeds).await.map_err(|e| e.to_string())
    }
}

/// The roster of rss among `n` parties: the threshold is `t = (n − 1) / 2` (honest majority),
/// and `(n, t)` must be one of [`ringfence_core::rss::SUPPORTED`] (the error says which are).
pub(crate) fn rss_roster(n: usize) -> Result<Roster, String> {
    let t = n.saturating_sub(1) / 2;
    if !SUPPORTED.contains(&(n, t)) {
        let pairs: Vec<String> = SUPPORTED.iter().map(|(n, t)| format!("({n}, {t})")).collect();
        return Err(format!(
            "--parties {n}: rss supports (N, t) = {} with threshold t = (N − 1) / 2, not \
             ({n}, {t})",
            pairs.join(", ")
        ));
    }
    Access::new(n, t).map(|a| a.roster()).map_err(|e| format!("--parties {n}: {e}"))
}

/// rss among `n = 2t + 1` parties; its share keys come from this party's OS randomness and are
/// agreed over the (encrypted) links in its setup round.
impl Base for Rss<TcpTransport> {
    async fn start(ctx: Ctx<TcpTransport>, parties: usize) -> Result<Self, String> {
        let roster = rss_roster(parties)?;
        let own = Seed::from_bytes(crate::random_bytes::<32>()?);
        Self::setup(ctx, roster, own).await.map_err(|e| e.to_string())
    }
}

/// The roster of spdz2k among `n ≥ 2` parties: any `n − 1` of them may be corrupt.
pub(crate) fn spdz2k_roster(n: usize) -> Result<Roster, String> {
    ringfence_core::service::Backend::Spdz2k.party_roster(n).map_err(|e| match e {
        ringfence_core::Error::ApiMisuse(why) => format!("--parties {n}: {why}"),
        e => format!("--parties {n}: {e}"),
    })
}

/// spdz2k's session among `n ≥ 2` parties: the links and this party's OS randomness; the
/// parties make their material together (base OTs when the first is needed), no dealer.
impl Base for Mesh<TcpTransport> {
    async fn start(ctx: Ctx<TcpTransport>, parties: usize) -> Result<Self, String> {
        let roster = spdz2k_roster(parties)?;
        let own = Seed::from_bytes(crate::random_bytes::<32>()?);
        Self::new(ctx, roster, own, Source::parties()).map_err(|e| e.to_string())
    }
}

/// Prints one message for the parent.
pub(crate) fn report(msg: &FromChild) {
    if let Ok(line) = serde_json::to_string(msg) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

fn read_msg() -> Result<ToChild, String> {
    let mut line = String::new();
    match std::io::stdin().read_line(&mut line) {
        Ok(0) => Err("stdin closed before setup".into()),
        Ok(_) => serde_json::from_str(&line).map_err(|e| format!("bad message from parent: {e}")),
        Err(e) => Err(format!("reading stdin: {e}")),
    }
}

/// Runs party `id` of a rep3 session: setup over stdin, then `body` on a connected session;
/// reports errors and `Done` to the parent and returns the process exit code.
pub(crate) fn run<F, Fut>(id: u8, plain: bool, timeout_ms: u64, body: F) -> std::process::ExitCode
where
    F: FnOnce(Session) -> Fut,
    Fut: std::future::Future<Output = Result<Session, String>>,
{
    run_as::<Session, F, Fut>(id, crate::ROSTER.n(), plain, timeout_ms, body)
}

/// [`run`] for a session of kind `S` among `parties` compute parties.
pub(crate) fn run_as<S, F, Fut>(
    id: u8,
    parties: usize,
    plain: bool,
    timeout_ms: u64,
    body: F,
) -> std::process::ExitCode
where
    S: Base,
    F: FnOnce(S) -> Fut,
    Fut: std::future::Future<Output = Result<S, String>>,
{
    match try_run(id, parties, plain, timeout_ms, body) {
        Ok(()) => {
            report(&FromChild::Done);
            std::process::ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("ringfence P{id}: {message}");
            report(&FromChild::Error { message });
            std::process::ExitCode::FAILURE
        }
    }
}

fn try_run<S, F, Fut>(
    id: u8,
    parties: usize,
    plain: bool,
    timeout_ms: u64,
    body: F,
) -> Result<(), String>
where
    S: Base,
    F: FnOnce(S) -> Fut,
    Fut: std::future::Future<Output = Result<S, String>>,
{
    let ToChild::Setup { private_key, public_keys, session, participants } = read_msg()? else {
        return Err("expected the setup message first".into());
    };
    let security = if plain {
        Security::DangerInsecurePlain
    } else {
        let private = PrivateKey::from_hex(private_key.as_deref().ok_or("no private key")?)
            .map_err(|e| e.to_string())?;
        let public_keys = public_keys
            .iter()
            .map(|k| PublicKey::from_hex(k))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let public = *public_keys.get(usize::from(id)).ok_or("no public key for this party")?;
        Security::Noise { keypair: StaticKeypair { private, public }, public_keys }
    };
    let session = parse_session(&session)?;
    let listener =
        std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("binding: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    report(&FromChild::Port { port });
    let ToChild::Peers { addrs } = read_msg()? else {
        return Err("expected the peers message".into());
    };
    let addrs = addrs
        .iter()
        .map(|a| a.parse::<SocketAddr>().map_err(|e| format!("address {a}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    // From now on stdin only signals the parent's death: exit when it closes.
    std::thread::spawn(move || {
        let mut sink = String::new();
        while matches!(std::io::stdin().read_line(&mut sink), Ok(n) if n > 0) {
            sink.clear();
        }
        eprintln!("ringfence P{id}: parent went away, exiting");
        std::process::exit(3);
    });
    let relay = RELAY.get().cloned().flatten();
    if usize::from(participants) != parties && relay.is_none() {
        return Err(format!("{participants} participants: a client joins through a relay only"));
    }
    if addrs.len() != parties && relay.is_none() {
        return Err(format!("{} addresses for {parties} parties", addrs.len()));
    }
    let webrtc = WEBRTC.get().cloned().unwrap_or_default();
    if webrtc.webrtc.is_some() && (relay.is_none() || plain) {
        return Err("--webrtc needs --relay and Noise links (not --plain)".into());
    }
    let mut cfg = TransportConfig::new(PartyId(id), addrs, security, session);
    cfg.recv_timeout = Duration::from_millis(timeout_ms);
    // The protocol runs on this thread (its futures need not be Send); the link tasks, which
    // encrypt, decrypt and do the socket I/O, run on one worker thread beside it.
    let rt = crate::runtime(1)?;
    rt.block_on(async move {
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        let listener = tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?;
        let t = match relay {
            Some(url) => {
                let n = participants;
                let mut r = RelayLinkConfig::new(url, cfg.me, n, cfg.security, session);
                r.recv_timeout = cfg.recv_timeout;
                TcpTransport::connect_via_relay(r).await
            }
            None => TcpTransport::connect(cfg, Some(listener)).await,
        };
        let mut t = t.map_err(|e| e.to_string())?;
        if let Some(links) = webrtc.connect(&mut t).await? {
            report(&FromChild::Links { links });
        }
        let ctx = Ctx::new(PartyId(id), usize::from(participants), session, t);
        let p = S::start(ctx, parties).await?;
        let p = body(p).await?;
        p.into_ctx().into_transport().close().await.map_err(|e| e.to_string())
    })
}

/// One synchronisation round among the parties ([`ServiceBase::barrier`]).
pub(crate) async fn barrier<B: Base>(p: &mut B) -> Result<(), String> {
    ServiceBase::barrier(p).await.map_err(|e| e.to_string())
}

fn parse_session(hex: &str) -> Result<SessionId, String> {
    parse_session_hex(hex)
}
