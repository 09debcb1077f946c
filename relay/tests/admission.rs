//! Admission refusals a browser can read: a client offering the relay's in-band admission
//! subprotocol is upgraded either way, then told `admitted` or closed with 4000 + the HTTP
//! status of the refusal and its reason, one status per thing to do about it (no token or one
//! that does not verify, a token for another session or party, an unknown deployment). Clients
//! that do not offer it keep the HTTP refusal.

use futures_util::StreamExt;
use ringfence_core::net::{PartyId, SessionId};
use ringfence_relay::token::{unix_now, DeploymentKey, Token, Trusted};
use ringfence_relay::ws::{RelayLimits, RelayServer, ADMITTED, IN_BAND_ADMISSION};
use ringfence_relay::PublicKey;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;

use crate::relay_common::{connect, WAIT};

const S: SessionId = SessionId(*b"admission-tests!");

/// A relay trusting deployment `acme`; its URL and acme's signing key.
async fn trusting_relay() -> (String, DeploymentKey) {
    let key = DeploymentKey::generate().unwrap();
    let mut trusted = Trusted::default();
    trusted.add("acme", key.public());
    let server =
        RelayServer::bind_trusting("127.0.0.1:0".parse().unwrap(), RelayLimits::default(), trusted)
            .await
            .unwrap();
    let url = format!("ws://{}", server.local_addr());
    tokio::spawn(server.run());
    (url, key)
}

/// Client P3's path in session `S` (of 4), with `query` appended.
fn client_path(query: &str) -> String {
    let hex: String = S.0.iter().map(|b| format!("{b:02x}")).collect();
    format!("/v1/{hex}/3?parties=4&mode=noise-aesgcm{query}")
}

/// The invited client's key in these tests.
const CLIENT_KEY: PublicKey = PublicKey([0xab; 32]);

/// A token of `acme`; a client's (participant 3) is bound to [`CLIENT_KEY`].
fn token(key: &DeploymentKey, session: Option<SessionId>, party: u8, expires: u64) -> String {
    let client_key = (party == 3).then_some(CLIENT_KEY);
    Token { deployment: "acme".into(), session, party: PartyId(party), client_key, expires }
        .sign(key)
}

/// What an in-band client learns: `Ok(first text message)` or `Err((close code, reason))`.
async fn in_band(url: &str) -> Result<String, (u16, String)> {
    let mut req = url.into_client_request().unwrap();
    req.headers_mut().insert("sec-websocket-protocol", HeaderValue::from_static(IN_BAND_ADMISSION));
    let (mut ws, resp) = tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(req))
        .await
        .expect("no answer in time")
        .expect("an in-band client is always upgraded");
    let chosen = resp.headers().get("sec-websocket-protocol").map(|v| v.to_str().unwrap());
    assert_eq!(chosen, Some(IN_BAND_ADMISSION));
    loop {
        match tokio::time::timeout(WAIT, ws.next()).await.expect("relay went silent") {
            Some(Ok(Message::Text(t))) => return Ok(t.to_string()),
            Some(Ok(Message::Close(Some(f)))) => return Err((f.code.into(), f.reason.to_string())),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[tokio::test]
async fn each_refusal_reaches_an_in_band_client_as_its_close_code_and_reason() {
    let (url, key) = trusting_relay().await;
    let later = unix_now() + 600;
    let invite = format!("&deployment=acme&client_key={}", "ab".repeat(32));
    let with = |t: &str| format!("{url}{}", client_path(&format!("&token={t}{invite}")));
    let cases = [
        // No token.
        (format!("{url}{}", client_path(&invite)), 4401, "requires a token"),
        // Tokens that do not verify: expired, signed by another key.
        (with(&token(&key, Some(S), 3, unix_now() - 10)), 4401, "expired"),
        (with(&token(&DeploymentKey::generate().unwrap(), Some(S), 3, later)), 4401, "signature"),
        // Valid tokens for another session, or another party.
        (with(&token(&key, Some(SessionId([7; 16])), 3, later)), 4403, "another session"),
        (with(&token(&key, Some(S), 2, later)), 4403, "not P3"),
        // A valid token bound to another client's key than the invited one.
        (
            with(
                &Token {
                    deployment: "acme".into(),
                    session: Some(S),
                    party: PartyId(3),
                    client_key: Some(PublicKey([0xcd; 32])),
                    expires: later,
                }
                .sign(&key),
            ),
            4403,
            "bound to another client key",
        ),
        // An invitation of a deployment this relay does not know.
        (
            format!(
                "{url}{}",
                client_path(&format!(
                    "&token={}&deployment=acne&client_key={}",
                    token(&key, Some(S), 3, later),
                    "ab".repeat(32)
                ))
            ),
            4404,
            "no deployment \"acne\"",
        ),
    ];
    for (u, code, why) in cases {
        let (got, reason) = in_band(&u).await.expect_err(why);
        assert_eq!(got, code, "{why}: {reason}");
        assert!(reason.contains(why), "{code}: {reason}");
    }
    // A valid token on a path the relay parses is admitted (the lobby is empty: the refusal is
    // the deployment's missing parties, 503, still in-band).
    let (got, reason) = in_band(&with(&token(&key, Some(S), 3, later))).await.unwrap_err();
    assert_eq!((got, reason.contains("no party connected")), (4503, true), "{reason}");
}

#[tokio::test]
async fn an_admitted_in_band_client_hears_so_first_and_others_keep_http_refusals() {
    let (url, key) = trusting_relay().await;
    let t = token(&key, Some(S), 3, unix_now() + 600);
    assert_eq!(
        in_band(&format!("{url}{}", client_path(&format!("&token={t}")))).await,
        Ok(ADMITTED.into())
    );
    // Without the subprotocol: the HTTP status, as before (command-line tools, native clients).
    let e = connect(&format!("{url}{}", client_path(""))).await.unwrap_err();
    assert!(e.starts_with("HTTP 401") && e.contains("requires a token"), "{e}");
}

/// A lobby of 255 server parties (the most a path can name) has no room for a client: the
/// invitation is refused with the reason, where counting the client overflowed a `u8` before.
#[tokio::test]
async fn a_lobby_of_255_servers_refuses_an_invitation_instead_of_overflowing() {
    let (url, key) = trusting_relay().await;
    let server = token(&key, None, 0, unix_now() + 600);
    let lobby = format!("{url}/v1/lobby/acme/0?parties=255&mode=noise-aesgcm&token={server}");
    let _p0 = connect(&lobby).await.expect("the lobby admits P0 of 255");
    let t = token(&key, Some(S), 3, unix_now() + 600);
    let invite = format!("&token={t}&deployment=acme&client_key={}", "ab".repeat(32));
    let (code, reason) = in_band(&format!("{url}{}", client_path(&invite))).await.unwrap_err();
    assert_eq!(code, 4400, "{reason}");
    assert!(
        reason.contains("has 255 server parties") && reason.contains("P255 of 256"),
        "{reason}"
    );
}
