//! The WebSocket relay on its own, with raw clients: forwarding, admission, limits, and how
//! departures and violations reach the other parties.

use crate::relay_common;

use std::time::Duration;

use crate::relay_common::{assert_metrics, connect, http_get, join, next, path, relay, send, Got};
use ringfence_core::net::SessionId;
use ringfence_relay::ws::RelayLimits;

const S: SessionId = SessionId(*b"relay-server-tst");

fn limits() -> RelayLimits {
    RelayLimits::default()
}

#[tokio::test]
async fn forwards_between_parties_in_order_even_before_the_recipient_joins() {
    let url = relay(limits()).await;
    let mut p0 = join(&url, &S, 0).await.unwrap();
    send(&mut p0, 2, b"early").await; // P2 is not connected yet: queued for it
    let mut p1 = join(&url, &S, 1).await.unwrap();
    let mut p2 = join(&url, &S, 2).await.unwrap();
    assert_eq!(next(&mut p2).await, Got::Msg(0, b"early".to_vec()));
    for i in 0..20u8 {
        send(&mut p1, 0, &[i; 3]).await;
    }
    send(&mut p2, 1, b"x").await;
    for i in 0..20u8 {
        assert_eq!(next(&mut p0).await, Got::Msg(1, vec![i; 3]));
    }
    assert_eq!(next(&mut p1).await, Got::Msg(2, b"x".to_vec()));
}

#[tokio::test]
async fn refuses_duplicates_mismatches_and_malformed_paths() {
    let url = relay(limits()).await;
    let _p0 = join(&url, &S, 0).await.unwrap();
    let dup = join(&url, &S, 0).await.unwrap_err();
    assert!(dup.starts_with("HTTP 409") && dup.contains("already connected"), "{dup}");
    let other_mode = connect(&format!("{url}{}", path(&S, 1, "noise-aesgcm"))).await.unwrap_err();
    assert!(other_mode.starts_with("HTTP 409") && other_mode.contains("mode"), "{other_mode}");
    for bad in ["/", "/v1/nothex/0?parties=3&mode=plain", "/v1/00/0?parties=3&mode=plain"] {
        let e = connect(&format!("{url}{bad}")).await.unwrap_err();
        assert!(e.starts_with("HTTP 400"), "{bad}: {e}");
    }
    let e = connect(&format!("{url}{}", path(&S, 3, "plain"))).await.unwrap_err();
    assert!(e.starts_with("HTTP 400") && e.contains("not among"), "{e}");
}

#[tokio::test]
async fn limits_connections() {
    let mut l = limits();
    l.max_connections = 2;
    let url = relay(l).await;
    let _a = join(&url, &S, 0).await.unwrap();
    let _b = join(&url, &S, 1).await.unwrap();
    assert!(join(&url, &S, 2).await.is_err(), "a third connection is closed at once");
}

#[tokio::test]
async fn limits_sessions_and_parties() {
    let mut l = limits();
    l.max_sessions = 1;
    l.max_parties = 3;
    let url = relay(l).await;
    let _a = join(&url, &S, 0).await.unwrap();
    let e = join(&url, &SessionId([9; 16]), 0).await.unwrap_err();
    assert!(e.starts_with("HTTP 503"), "{e}");
    let big = format!("{url}/v1/{}/0?parties=4&mode=plain", "01".repeat(16));
    let e = connect(&big).await.unwrap_err();
    assert!(e.starts_with("HTTP 503") || e.starts_with("HTTP 400"), "{e}");
}

#[tokio::test]
async fn a_departure_ends_that_link_at_the_others_after_its_last_message() {
    let url = relay(limits()).await;
    let mut p0 = join(&url, &S, 0).await.unwrap();
    let mut p1 = join(&url, &S, 1).await.unwrap();
    let mut p2 = join(&url, &S, 2).await.unwrap();
    send(&mut p2, 0, b"last words").await;
    p2.close(None).await.unwrap();
    assert_eq!(next(&mut p0).await, Got::Msg(2, b"last words".to_vec()));
    assert_eq!(next(&mut p0).await, Got::Msg(2, vec![]), "end-of-link marker");
    assert_eq!(next(&mut p1).await, Got::Msg(2, vec![]));
    // The others carry on.
    send(&mut p1, 0, b"still here").await;
    assert_eq!(next(&mut p0).await, Got::Msg(1, b"still here".to_vec()));
    // A party that vanishes without a close is a departure too.
    drop(p1);
    assert_eq!(next(&mut p0).await, Got::Msg(1, vec![]));
}

#[tokio::test]
async fn oversized_and_misaddressed_messages_close_the_sender_only() {
    let mut l = limits();
    l.max_message = 1025;
    let url = relay(l).await;
    let mut p0 = join(&url, &S, 0).await.unwrap();
    let mut p1 = join(&url, &S, 1).await.unwrap();
    let mut p2 = join(&url, &S, 2).await.unwrap();
    send(&mut p0, 1, &[7; 1024]).await; // exactly at the limit: fine
    assert_eq!(next(&mut p1).await, Got::Msg(0, vec![7; 1024]));
    send(&mut p0, 1, &[7; 1025]).await;
    assert!(matches!(next(&mut p0).await, Got::Closed(_)));
    assert_eq!(next(&mut p1).await, Got::Msg(0, vec![]));
    assert_eq!(next(&mut p2).await, Got::Msg(0, vec![]));
    send(&mut p2, 2, b"to myself").await;
    match next(&mut p2).await {
        Got::Closed(r) => assert!(r.contains("addressed P2"), "{r}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(next(&mut p1).await, Got::Msg(2, vec![]));
    let mut s2 = join(&url, &SessionId([5; 16]), 0).await.unwrap();
    send(&mut s2, 9, b"nobody").await; // no P9 in a 3-party session
    assert!(matches!(next(&mut s2).await, Got::Closed(r) if r.contains("P9")));
}

#[tokio::test]
async fn a_queue_that_stays_full_closes_the_session_with_a_reason() {
    let mut l = limits();
    l.conn_queue = 2;
    l.stall_timeout = Duration::from_millis(200);
    let url = relay(l).await;
    let mut p0 = join(&url, &S, 0).await.unwrap();
    let mut p1 = join(&url, &S, 1).await.unwrap();
    for _ in 0..4 {
        send(&mut p0, 2, b"for nobody yet").await; // P2 never joins: its queue fills
    }
    match next(&mut p1).await {
        Got::Closed(r) => assert!(r.contains("P2 did not drain its queue"), "{r}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(next(&mut p0).await, Got::Closed(_)));
}

#[tokio::test]
async fn idle_sessions_expire() {
    let mut l = limits();
    l.idle_timeout = Duration::from_millis(300);
    let url = relay(l).await;
    let mut p0 = join(&url, &S, 0).await.unwrap();
    match next(&mut p0).await {
        Got::Closed(r) => assert!(r.contains("idle"), "{r}"),
        other => panic!("{other:?}"),
    }
    // Once its connections are gone, the same id can start afresh.
    let start = std::time::Instant::now();
    while let Err(e) = join(&url, &S, 0).await {
        assert!(e.contains("closing") && start.elapsed() < relay_common::WAIT, "{e}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn health_and_metrics_endpoints_count_what_the_relay_does() {
    use ringfence_relay::ws::RelayServer;
    let server = RelayServer::bind("127.0.0.1:0".parse().unwrap(), limits()).await.unwrap();
    let url = format!("ws://{}", server.local_addr());
    let metrics = server.serve_metrics("127.0.0.1:0".parse().unwrap()).await.unwrap();
    tokio::spawn(server.run());
    assert!(http_get(metrics, "/healthz").await.ends_with("\r\n\r\nok\n"));
    let mut p0 = join(&url, &S, 0).await.unwrap();
    let mut p1 = join(&url, &S, 1).await.unwrap();
    let _refused = join(&url, &S, 1).await.unwrap_err();
    send(&mut p0, 1, b"12345").await;
    assert_eq!(next(&mut p1).await, Got::Msg(0, b"12345".to_vec()));
    assert_metrics(
        metrics,
        &[
            "ringfence_relay_connections_total 2",
            "ringfence_relay_refused_total 1",
            "ringfence_relay_sessions_opened_total 1",
            "ringfence_relay_sessions 1",
            "ringfence_relay_messages_total 1",
            "ringfence_relay_bytes_total 6",
            "# TYPE ringfence_relay_bytes_total counter",
        ],
    )
    .await;
    assert!(http_get(metrics, "/other").await.starts_with("HTTP/1.1 404"));
}

#[tokio::test]
async fn shutdown_lets_sessions_finish_then_closes_them_with_a_reason() {
    use ringfence_relay::ws::RelayServer;
    let server = RelayServer::bind("127.0.0.1:0".parse().unwrap(), limits()).await.unwrap();
    let url = format!("ws://{}", server.local_addr());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let grace = Duration::from_millis(600);
    let run = tokio::spawn(server.run_until(async { stopped.await.unwrap_or(()) }, grace));
    let mut p0 = join(&url, &S, 0).await.unwrap();
    let mut p1 = join(&url, &S, 1).await.unwrap();
    stop.send(()).unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // During the grace period the session still forwards, and new connections are refused.
    send(&mut p0, 1, b"still here").await;
    assert_eq!(next(&mut p1).await, Got::Msg(0, b"still here".to_vec()));
    assert!(join(&url, &SessionId(*b"another-session!"), 0).await.is_err());
    // After it, the relay closes the session, saying why, and returns.
    assert_eq!(next(&mut p0).await, Got::Closed("relay shutting down".into()));
    tokio::time::timeout(Duration::from_secs(5), run).await.unwrap().unwrap().unwrap();
}
