//! `ringfence interop-party` (hidden): one compute party of a 3-party rep3 session over Z_2^64, joined through
//! a relay, running the interoperability check program. Any mix of native parties and SDK
//! (WebAssembly) parties can run it together: the SDK side runs the same operations in the
//! same order (`web/test/ws-mixed.test.mjs`).
//!
//! The program: every party P_i inputs its vector `x_i` (all of length n = d²), then
//! `x0·x1` (mul), `x0 < x1` (lt) and the d×d matrix product `x0·x2` (matmul) are computed and
//! revealed to all; the party prints them as one JSON line on stdout:
//! `{"mul":["-15",...],"lt":[1,0,...],"matmul":[...]}` (64-bit values as decimal strings), with
//! `"links":[{"peer":0,"via":"webrtc"},...]` after `--webrtc`.

use std::time::Duration;

use clap::Args;
use ringfence_core::net::{Ctx, PartyId};
use ringfence_core::rep3::Rep3;
use ringfence_core::ring::{IntRing, Z64};
use ringfence_core::sharing::Boolean;
use ringfence_relay::ws::{parse_session_hex, RelayLinkConfig};
use ringfence_relay::{PrivateKey, PublicKey, Security, StaticKeypair, TcpTransport};

/// Options of `ringfence party`.
#[derive(Args, Clone)]
pub(crate) struct JoinArgs {
    /// The relay, e.g. ws://127.0.0.1:9000.
    #[arg(long)]
    relay: String,
    /// The session id, 32 hex digits, the same at all parties.
    #[arg(long)]
    session: String,
    /// This party's index: 0, 1 or 2.
    #[arg(long)]
    id: u8,
    /// This party's input vector, comma-separated signed 64-bit integers (length d²).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    values: Vec<i64>,
    /// Dimension d of the matrix product.
    #[arg(long)]
    matmul_dim: usize,
    /// INSECURE, tests and demos only: plaintext frames through the relay and pairwise seeds
    /// derived from this public label (the SDK's `WebSocketTransport` with
    /// `insecureTestSeeds(label, id)`). Without it, links run Noise KK (as the SDK's
    /// `SecureRelayTransport` does) and the keys are read from stdin as one JSON line
    /// `{"private_key": HEX, "public_keys": [HEX, HEX, HEX]}`.
    #[arg(long, value_name = "LABEL")]
    danger_insecure_test_seeds: Option<String>,
    /// How long to wait for a peer's message (and for all peers to join).
    #[arg(long, default_value_t = 30_000)]
    timeout_ms: u64,
    #[command(flatten)]
    webrtc: crate::webrtc::WebrtcArgs,
}

#[derive(serde::Deserialize)]
struct Keys {
    private_key: String,
    public_keys: Vec<String>,
}

/// Runs the party; prints the revealed results.
pub(crate) fn run(a: &JoinArgs) -> Result<(), String> {
    if !crate::ROSTER.is_party(PartyId(a.id)) {
        return Err(format!("--id {} is not 0, 1 or 2", a.id));
    }
    let d = a.matmul_dim;
    if d == 0 || a.values.len() != d * d {
        return Err(format!(
            "--values has {} entries; --matmul-dim {d} needs {}",
            a.values.len(),
            d * d
        ));
    }
    let security = match &a.danger_insecure_test_seeds {
        Some(label) => Security::DangerInsecureTestSeeds { label: label.clone() },
        None => noise_from_stdin(a.id)?,
    };
    let me = PartyId(a.id);
    let session = parse_session_hex(&a.session)?;
    let mut cfg = RelayLinkConfig::new(a.relay.clone(), me, crate::PARTIES, security, session);
    cfg.recv_timeout = Duration::from_millis(a.timeout_ms);
    cfg.connect_timeout = Duration::from_millis(a.timeout_ms);
    let rt = crate::runtime(1)?;
    let mine: Vec<Z64> = a.values.iter().map(|&v| Z64::from_i64(v)).collect();
    let webrtc = a.webrtc.clone();
    let out = rt.block_on(async move {
        let mut t = TcpTransport::connect_via_relay(cfg).await.map_err(|e| e.to_string())?;
        let links = webrtc.connect(&mut t).await?;
        let seeds = t.rep3_seeds().map_err(|e| e.to_string())?;
        let ctx = Ctx::new(me, crate::ROSTER.n(), session, t);
        let mut p = Rep3::setup(ctx, seeds).await.map_err(|e| e.to_string())?;
        let mut out = program(&mut p, &mine, d).await.map_err(|e| e.to_string())?;
        if let Some(links) = links {
            out["links"] = serde_json::to_value(links).map_err(|e| e.to_string())?;
        }
        p.into_ctx().into_transport().close().await.map_err(|e| e.to_string())?;
        Ok::<_, String>(out)
    })?;
    println!("{out}");
    Ok(())
}

/// The check program; returns its JSON line.
async fn program(
    p: &mut Rep3<TcpTransport>,
    mine: &[Z64],
    d: usize,
) -> Result<serde_json::Value, ringfence_core::Error> {
    let me = p.me();
    let n = d * d;
    let mut x = Vec::new();
    for owner in crate::ROSTER.parties() {
        x.push(p.input(owner, Some(mine).filter(|_| me == owner), n).await?);
    }
    let mul = p.mul(&x[0], &x[1]).await?;
    let lt = p.lt(&x[0], &x[1]).await?;
    let mm = p.matmul(&x[0], &x[2], d, d, d).await?;
    let mul = p.reveal(mul).await?;
    let lt = p.reveal_bits(lt).await?;
    let mm = p.reveal(mm).await?;
    let strings = |v: &[Z64]| v.iter().map(|z| z.to_i64().to_string()).collect::<Vec<_>>();
    let lt: Vec<u8> = lt.into_iter().map(u8::from).collect();
    Ok(serde_json::json!({ "mul": strings(&mul), "lt": lt, "matmul": strings(&mm) }))
}

fn noise_from_stdin(id: u8) -> Result<Security, String> {
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).map_err(|e| format!("reading keys from stdin: {e}"))?;
    let k: Keys = serde_json::from_str(&line).map_err(|e| format!("keys on stdin: {e}"))?;
    let private = PrivateKey::from_hex(&k.private_key).map_err(|e| e.to_string())?;
    let public_keys = k
        .public_keys
        .iter()
        .map(|h| PublicKey::from_hex(h))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let public = *public_keys.get(usize::from(id)).ok_or("no public key for this party")?;
    Ok(Security::Noise { keypair: StaticKeypair { private, public }, public_keys })
}
