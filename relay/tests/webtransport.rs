//! The relay's WebTransport front end with native `wtransport` clients: admission and refusals
//! with their reason, forwarding both ways between a WebTransport party and a WebSocket party
//! of one session, limits, and how the relay ends a connection.
//!
//! The client pins the relay's self-signed certificate by hash with the checks browsers make
//! for `serverCertificateHashes` (ECDSA P-256, validity at most 14 days), so every connection
//! here also checks that the certificate is one a browser accepts.

use crate::relay_common;

use std::net::SocketAddr;
use std::time::Duration;

use crate::relay_common::{assert_metrics, join, next, send, Got, WAIT};
use ringfence_core::net::{PartyId, SessionId};
use ringfence_relay::token::{unix_now, DeploymentKey, Token, Trusted};
use ringfence_relay::ws::{RelayLimits, RelayServer};
use ringfence_relay::wt::wire::{self, Control};
use ringfence_relay::wt::{WtCertificate, WtServer};
use wtransport::endpoint::endpoint_side::Client;
use wtransport::error::StreamReadExactError;
use wtransport::tls::Sha256Digest;
use wtransport::{ClientConfig, Connection, Endpoint, RecvStream, SendStream};

const S: SessionId = SessionId(*b"webtransport-tst");

/// A relay with both front ends on loopback.
struct Relay {
    ws: String,
    wt: String,
    hash: [u8; 32],
}

async fn relay(limits: RelayLimits, trusted: Trusted) -> Relay {
    relay_with_metrics(limits, trusted).await.0
}

/// [`relay`], and the address of its metrics endpoint.
async fn relay_with_metrics(limits: RelayLimits, trusted: Trusted) -> (Relay, SocketAddr) {
    let ws =
        RelayServer::bind_trusting("127.0.0.1:0".parse().unwrap(), limits, trusted).await.unwrap();
    let metrics = ws.serve_metrics("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = "127.0.0.1:0".parse().unwrap();
    let wt = WtServer::bind(addr, &ws, WtCertificate::self_signed_for(addr)).await.unwrap();
    let r = Relay {
        ws: format!("ws://{}", ws.local_addr()),
        wt: wt.url(),
        hash: wt.certificate_hash(),
    };
    assert_eq!(wt.certificate_hash_hex().len(), 64);
    assert!(wt.self_signed_expiry().is_some_and(|t| t.ends_with(" UTC")), "{wt:?}");
    tokio::spawn(wt.run());
    tokio::spawn(ws.run());
    (r, metrics)
}

/// A party connected over WebTransport.
struct Party {
    conn: Connection,
    send: SendStream,
    recv: RecvStream,
    _endpoint: Endpoint<Client>,
}

/// Opens a WebTransport session at `url` + `path` and reads the admission answer; a refusal
/// is `Err("HTTP {code}: {reason}")`.
async fn connect(url: &str, hash: [u8; 32], path: &str) -> Result<Party, String> {
    let config = ClientConfig::builder()
        .with_bind_address("127.0.0.1:0".parse().unwrap())
        .with_server_certificate_hashes([Sha256Digest::new(hash)])
        .build();
    let endpoint = Endpoint::client(config).unwrap();
    let opened = tokio::time::timeout(WAIT, async {
        let conn = endpoint.connect(format!("{url}{path}")).await.map_err(|e| e.to_string())?;
        let (send, mut recv) = conn.accept_bi().await.map_err(|e| e.to_string())?;
        let answer = read(&mut recv).await.map_err(|e| format!("no answer: {e}"))?;
        Ok::<_, String>((conn, send, recv, answer))
    })
    .await
    .map_err(|_| "timeout".to_string())??;
    let (conn, send, recv, answer) = opened;
    match Control::parse(&answer) {
        Some(c) if c.is_admitted() => Ok(Party { conn, send, recv, _endpoint: endpoint }),
        Some(c) => {
            conn.close(0u32.into(), b"refused");
            Err(format!("HTTP {}: {}", c.code, c.text))
        }
        None => Err(format!("not an admission answer: {answer:?}")),
    }
}

fn path(session: &SessionId, party: u8) -> String {
    relay_common::path(session, party, "plain-test-seeds")
}

async fn join_wt(r: &Relay, session: &SessionId, party: u8) -> Result<Party, String> {
    connect(&r.wt, r.hash, &path(session, party)).await
}

/// One message body from the relay.
async fn read(recv: &mut RecvStream) -> Result<Vec<u8>, String> {
    let mut prefix = [0u8; 4];
    recv.read_exact(&mut prefix).await.map_err(|e| match e {
        StreamReadExactError::FinishedEarly(0) => "eof".to_string(),
        e => e.to_string(),
    })?;
    let mut body = vec![0; wire::body_len(prefix, usize::MAX)?];
    recv.read_exact(&mut body).await.map_err(|e| e.to_string())?;
    Ok(body)
}

impl Party {
    async fn send(&mut self, to: u8, payload: &[u8]) {
        let mut body = vec![to];
        body.extend_from_slice(payload);
        self.send.write_all(&wire::encode(&body)).await.unwrap();
    }

    /// The next message, or the relay's closing reason, within [`WAIT`].
    async fn next(&mut self) -> Got {
        let m = tokio::time::timeout(WAIT, read(&mut self.recv)).await.expect("relay went silent");
        match m {
            Ok(b) => match Control::parse(&b) {
                Some(c) => {
                    assert_eq!(c.code, Control::CLOSING, "{c:?}");
                    Got::Closed(c.text)
                }
                None => Got::Msg(b[0], b[1..].to_vec()),
            },
            Err(e) => Got::Closed(format!("error: {e}")),
        }
    }
}

#[tokio::test]
async fn forwards_both_ways_between_webtransport_and_websocket_parties() {
    let r = relay(RelayLimits::default(), Trusted::default()).await;
    let mut p0 = join_wt(&r, &S, 0).await.unwrap();
    p0.send(2, b"early").await; // P2 is not connected yet: queued for it
    let mut p1 = join(&r.ws, &S, 1).await.unwrap();
    let mut p2 = join_wt(&r, &S, 2).await.unwrap();
    assert_eq!(p2.next().await, Got::Msg(0, b"early".to_vec()));
    for i in 0..20u8 {
        p0.send(1, &[i; 3]).await;
        send(&mut p1, 0, &[i; 5]).await;
    }
    // Large messages (many QUIC packets), in both directions.
    let big: Vec<u8> = (0..3 << 20).map(|i: u32| (i % 251) as u8).collect();
    p0.send(1, &big).await;
    send(&mut p1, 2, &big).await;
    for i in 0..20u8 {
        assert_eq!(next(&mut p1).await, Got::Msg(0, vec![i; 3]));
        assert_eq!(p0.next().await, Got::Msg(1, vec![i; 5]));
    }
    assert!(next(&mut p1).await == Got::Msg(0, big.clone()), "P0's big message");
    assert!(p2.next().await == Got::Msg(1, big), "P1's big message");
    // P0 leaves by finishing its stream: the others see its end of link, it sees why it ended.
    p0.send(2, b"last words").await;
    p0.send.finish().await.unwrap();
    assert_eq!(p2.next().await, Got::Msg(0, b"last words".to_vec()));
    assert_eq!(p2.next().await, Got::Msg(0, vec![]), "end-of-link marker");
    assert_eq!(next(&mut p1).await, Got::Msg(0, vec![]));
    assert_eq!(p0.next().await, Got::Closed("closed by the party".into()));
    p0.conn.close(0u32.into(), b"done");
    // A WebTransport party that vanishes (closes the connection) is a departure too.
    p2.conn.close(0u32.into(), b"gone");
    assert_eq!(next(&mut p1).await, Got::Msg(2, vec![]));
}

#[tokio::test]
async fn max_connections_counts_both_front_ends_together() {
    let mut limits = RelayLimits::default();
    limits.max_connections = 2;
    let r = relay(limits, Trusted::default()).await;
    let _p0 = join(&r.ws, &S, 0).await.unwrap();
    let _p1 = join_wt(&r, &S, 1).await.unwrap();
    assert!(join_wt(&r, &S, 2).await.is_err(), "a third connection over WebTransport is refused");
    assert!(join(&r.ws, &S, 2).await.is_err(), "a third over WebSocket too");
}

#[tokio::test]
async fn refusals_carry_the_websocket_relays_status_and_reason() {
    let r = relay(RelayLimits::default(), Trusted::default()).await;
    let _p0 = join(&r.ws, &S, 0).await.unwrap();
    let dup = join_wt(&r, &S, 0).await.err().unwrap();
    assert!(dup.starts_with("HTTP 409") && dup.contains("already connected"), "{dup}");
    let hex = "ab".repeat(16);
    for (bad, code, says) in [
        ("/".to_string(), 400, "/v1/"),
        (format!("/v1/{hex}/3?parties=3&mode=plain"), 400, "not among"),
        (format!("/v1/{hex}/0?parties=3"), 400, "mode"),
        ("/v1/lobby/acme/0?parties=3&mode=plain".to_string(), 400, "lobby over WebSocket"),
    ] {
        let e = connect(&r.wt, r.hash, &bad).await.err().unwrap();
        assert!(e.starts_with(&format!("HTTP {code}")) && e.contains(says), "{bad}: {e}");
    }
    // The query string reaches the relay: a mode mismatch is seen.
    let other =
        connect(&r.wt, r.hash, &relay_common::path(&S, 1, "noise-aesgcm")).await.err().unwrap();
    assert!(other.starts_with("HTTP 409") && other.contains("mode"), "{other}");
}

#[tokio::test]
async fn webtransport_connections_count_in_the_metrics_like_websocket_ones() {
    let (r, metrics) = relay_with_metrics(RelayLimits::default(), Trusted::default()).await;
    let mut p0 = join_wt(&r, &S, 0).await.unwrap();
    let mut p1 = join(&r.ws, &S, 1).await.unwrap();
    assert!(join_wt(&r, &S, 0).await.is_err(), "a second P0");
    let lobby = connect(&r.wt, r.hash, "/v1/lobby/acme/0?parties=3&mode=plain").await;
    assert!(lobby.is_err(), "a lobby over WebTransport");
    p0.send(1, b"12345").await;
    assert_eq!(next(&mut p1).await, Got::Msg(0, b"12345".to_vec()));
    assert_metrics(
        metrics,
        &[
            "ringfence_relay_connections_total 2",
            "ringfence_relay_refused_total 2",
            "ringfence_relay_sessions_opened_total 1",
            "ringfence_relay_messages_total 1",
            "ringfence_relay_bytes_total 6",
        ],
    )
    .await;
}

#[tokio::test]
async fn tokens_are_checked_as_over_websocket() {
    let key = DeploymentKey::generate().unwrap();
    let mut trusted = Trusted::default();
    trusted.add("acme", key.public());
    let r = relay(RelayLimits::default(), trusted).await;
    let e = join_wt(&r, &S, 0).await.err().unwrap();
    assert!(e.starts_with("HTTP 401") && e.contains("requires a token"), "{e}");
    let token = |session: SessionId, party: u8| {
        let t = Token {
            deployment: "acme".into(),
            session: Some(session),
            party: PartyId(party),
            client_key: None,
            expires: unix_now() + 60,
        };
        t.sign(&key)
    };
    let other = format!("{}&token={}", path(&S, 0), token(SessionId([1; 16]), 0));
    let e = connect(&r.wt, r.hash, &other).await.err().unwrap();
    assert!(e.starts_with("HTTP 403") && e.contains("another session"), "{e}");
    let forged = format!("{}&token={}", path(&S, 1), token(S, 0));
    let e = connect(&r.wt, r.hash, &forged).await.err().unwrap();
    assert!(e.starts_with("HTTP 403") && e.contains("not P1"), "{e}");
    let good = format!("{}&token={}", path(&S, 0), token(S, 0));
    let mut p0 = connect(&r.wt, r.hash, &good).await.unwrap();
    let mut p1 = relay_common::connect(&format!("{}{}&token={}", r.ws, path(&S, 1), token(S, 1)))
        .await
        .unwrap();
    p0.send(1, b"with a token").await;
    assert_eq!(next(&mut p1).await, Got::Msg(0, b"with a token".to_vec()));
}

#[tokio::test]
async fn oversized_and_misaddressed_messages_close_the_sender_only() {
    let mut l = RelayLimits::default();
    l.max_message = 1025;
    let r = relay(l, Trusted::default()).await;
    let mut p0 = join_wt(&r, &S, 0).await.unwrap();
    let mut p1 = join(&r.ws, &S, 1).await.unwrap();
    let mut p2 = join_wt(&r, &S, 2).await.unwrap();
    p0.send(1, &[7; 1024]).await; // exactly at the limit: fine
    assert_eq!(next(&mut p1).await, Got::Msg(0, vec![7; 1024]));
    p0.send(1, &[7; 1025]).await;
    match p0.next().await {
        Got::Closed(r) => assert!(r.contains("message too big (1026 bytes"), "{r}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(next(&mut p1).await, Got::Msg(0, vec![]));
    assert_eq!(p2.next().await, Got::Msg(0, vec![]));
    p2.send(2, b"to myself").await;
    match p2.next().await {
        Got::Closed(r) => assert!(r.contains("addressed P2"), "{r}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(next(&mut p1).await, Got::Msg(2, vec![]));
    // A zero-length message is malformed too.
    let mut q0 = join_wt(&r, &SessionId([5; 16]), 0).await.unwrap();
    q0.send.write_all(&[0, 0, 0, 0]).await.unwrap();
    assert_eq!(q0.next().await, Got::Closed("an empty message".into()));
}

#[tokio::test]
async fn a_queue_that_stays_full_closes_the_session_for_both_front_ends() {
    let mut l = RelayLimits::default();
    l.conn_queue = 2;
    l.stall_timeout = Duration::from_millis(200);
    let (r, metrics) = relay_with_metrics(l, Trusted::default()).await;
    let mut p0 = join_wt(&r, &S, 0).await.unwrap();
    let mut p1 = join(&r.ws, &S, 1).await.unwrap();
    for _ in 0..4 {
        p0.send(2, b"for nobody yet").await; // P2 never joins: its queue fills
    }
    match next(&mut p1).await {
        Got::Closed(r) => assert!(r.contains("P2 did not drain its queue"), "{r}"),
        other => panic!("{other:?}"),
    }
    match p0.next().await {
        Got::Closed(r) => assert!(r.contains("P2 did not drain its queue"), "{r}"),
        other => panic!("{other:?}"),
    }
    // Closed by the relay, on a WebTransport party's message, is counted as over WebSocket.
    assert_metrics(metrics, &["ringfence_relay_sessions_closed_early_total 1"]).await;
}

#[tokio::test]
async fn a_closing_session_tells_webtransport_parties_why() {
    let mut l = RelayLimits::default();
    l.idle_timeout = Duration::from_millis(300);
    let r = relay(l, Trusted::default()).await;
    let mut p0 = join_wt(&r, &S, 0).await.unwrap();
    match p0.next().await {
        Got::Closed(r) => assert!(r.contains("idle"), "{r}"),
        other => panic!("{other:?}"),
    }
    // The relay finished its stream after the reason.
    assert_eq!(read(&mut p0.recv).await, Err("eof".into()));
}

#[tokio::test]
async fn a_client_pinning_another_certificate_does_not_connect() {
    let r = relay(RelayLimits::default(), Trusted::default()).await;
    let mut wrong = r.hash;
    wrong[0] ^= 1;
    let e = connect(&r.wt, wrong, &path(&S, 0)).await.err().unwrap();
    assert!(!e.starts_with("HTTP"), "{e}");
}

#[tokio::test]
async fn certificates_can_come_from_pem_files() {
    let dir = std::env::temp_dir().join(format!("ringfence-wt-pem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let identity = wtransport::Identity::self_signed(["localhost", "127.0.0.1"]).unwrap();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    identity.certificate_chain().store_pemfile(&cert).await.unwrap();
    identity.private_key().store_secret_pemfile(&key).await.unwrap();
    let ws =
        RelayServer::bind("127.0.0.1:0".parse().unwrap(), RelayLimits::default()).await.unwrap();
    let pem = WtCertificate::Pem { cert, key };
    let wt = WtServer::bind("127.0.0.1:0".parse().unwrap(), &ws, pem).await.unwrap();
    let want = identity.certificate_chain().as_slice()[0].hash();
    assert_eq!(wt.certificate_hash(), *want.as_ref());
    assert_eq!(wt.self_signed_expiry(), None);
    let r = Relay {
        ws: format!("ws://{}", ws.local_addr()),
        wt: wt.url(),
        hash: wt.certificate_hash(),
    };
    tokio::spawn(wt.run());
    tokio::spawn(ws.run());
    let mut p0 = join_wt(&r, &S, 0).await.unwrap();
    let mut p1 = join(&r.ws, &S, 1).await.unwrap();
    send(&mut p1, 0, b"pem").await;
    assert_eq!(p0.next().await, Got::Msg(1, b"pem".to_vec()));
    let _ = std::fs::remove_dir_all(&dir);
    let missing = WtCertificate::Pem { cert: dir.join("no.pem"), key: dir.join("no.key") };
    let e = WtServer::bind("127.0.0.1:0".parse().unwrap(), &ws_for_errors().await, missing)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("no.pem"), "{e}");
}

async fn ws_for_errors() -> RelayServer {
    RelayServer::bind("127.0.0.1:0".parse().unwrap(), RelayLimits::default()).await.unwrap()
}

#[tokio::test]
async fn the_cli_relay_serves_webtransport_and_prints_its_certificate_hash() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let exe = env!("CARGO_BIN_EXE_ringfence");
    let mut child = Kill(
        Command::new(exe)
            .args(["relay", "--listen", "127.0.0.1:0", "--webtransport", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut out = BufReader::new(child.0.stdout.take().unwrap());
    let lines = tokio::task::spawn_blocking(move || {
        let mut lines = [String::new(), String::new()];
        for l in &mut lines {
            out.read_line(l).unwrap();
        }
        lines
    });
    let [ws, wt] = tokio::time::timeout(Duration::from_secs(20), lines).await.unwrap().unwrap();
    let ws = ws.trim().rsplit(' ').next().unwrap().to_string();
    assert!(ws.starts_with("ws://127.0.0.1:"), "{ws}");
    // ringfence relay webtransport on https://ADDR (certificate sha-256 HEX)
    let words: Vec<&str> = wt.split_whitespace().collect();
    assert_eq!(words[..4], ["ringfence", "relay", "webtransport", "on"], "{wt}");
    let hex = words[7].trim_end_matches(')');
    assert_eq!(words[5..7], ["(certificate", "sha-256"], "{wt}");
    let hash: Vec<u8> =
        (0..32).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect();
    let r = Relay { ws, wt: words[4].to_string(), hash: hash.try_into().unwrap() };
    let mut p0 = join_wt(&r, &S, 0).await.unwrap();
    let mut p1 = join(&r.ws, &S, 1).await.unwrap();
    send(&mut p1, 0, b"from the CLI relay").await;
    assert_eq!(p0.next().await, Got::Msg(1, b"from the CLI relay".to_vec()));

    // A certificate without its key is a usage error.
    let bad = Command::new(exe)
        .args(["relay", "--listen", "127.0.0.1:0", "--webtransport", "127.0.0.1:0"])
        .args(["--webtransport-cert", "cert.pem"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--webtransport-key"));
    drop(child);
}
