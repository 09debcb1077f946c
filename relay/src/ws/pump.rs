//! The loops of an admitted party's connection, whichever front end it came through: a reader
//! forwarding the party's messages into the session, and a writer task delivering the party's
//! queue. The WebSocket ([`super::server`]) and WebTransport ([`crate::wt`]) front ends differ
//! only in how one message is read, written, and how the connection is closed with a reason.

use std::future::Future;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};

use super::session::{ForwardError, Member, Queued};

/// How long the relay waits for a connection's writer to deliver what is queued and close.
const WRITER_GRACE: Duration = Duration::from_secs(5);

/// The party's side of a connection, as the relay reads it.
pub(crate) trait PartyReader: Send {
    /// The next message `[to] ‖ payload` from the party; the error says why the connection
    /// ended.
    fn read(&mut self) -> impl Future<Output = Result<Vec<u8>, String>> + Send;
}

/// The relay's side of a connection, as it writes to the party.
pub(crate) trait PartyWriter: Send + 'static {
    /// Writes one message `[from] ‖ payload`; an error means the connection is gone.
    fn write(&mut self, msg: Vec<u8>) -> impl Future<Output = Result<(), ()>> + Send;
    /// Tells the party why the relay ends the connection, then ends it.
    fn close(self, reason: String) -> impl Future<Output = ()> + Send;
}

/// Pumps one admitted connection until it ends; returns why.
pub(crate) async fn run_member(
    member: &Member,
    mut reader: impl PartyReader,
    writer: impl PartyWriter,
) -> String {
    let Some(inbox) = member.take_inbox() else {
        return "no queue (already taken)".into();
    };
    let (stop, stopped) = oneshot::channel();
    let writer = tokio::spawn(write_loop(writer, inbox, member.session.closing(), stopped));
    let mut closing = member.session.closing();
    let reason = loop {
        let data = tokio::select! {
            m = reader.read() => m,
            // The writer sees the close too: it drains this party's queue and gives the reason.
            r = closed(&mut closing) => {
                let _ = tokio::time::timeout(WRITER_GRACE, writer).await;
                return r;
            }
        };
        let data = match data {
            Ok(data) => data,
            Err(r) => break r,
        };
        match member.forward(data).await {
            Ok(()) => {}
            Err(ForwardError::Bad(r)) => break r,
            Err(ForwardError::Full(r)) => {
                member.close_session(r.clone());
                break r;
            }
        }
    };
    member.leave().await;
    let _ = stop.send(reason.clone());
    let _ = tokio::time::timeout(WRITER_GRACE, writer).await;
    reason
}

/// Writes the party's queue until the session closes (drain, then close with the session's
/// reason) or the party itself is done (close with the reason it ended).
async fn write_loop(
    mut writer: impl PartyWriter,
    mut inbox: mpsc::Receiver<Queued>,
    mut closing: watch::Receiver<Option<String>>,
    mut stopped: oneshot::Receiver<String>,
) {
    let (reason, drain) = loop {
        tokio::select! {
            biased;
            r = &mut stopped => break (r.unwrap_or_default(), false),
            q = inbox.recv() => match q {
                Some(q) => {
                    // The rest of `q` (its share of the session's byte budget) is dropped at the
                    // end of this arm: the budget is released once the bytes are written.
                    if writer.write(q.data).await.is_err() {
                        return;
                    }
                }
                None => break ("session ended".to_string(), false),
            },
            r = closed(&mut closing) => break (r, true),
        }
    };
    // The session closed: deliver what is already queued before saying why.
    while let (true, Ok(q)) = (drain, inbox.try_recv()) {
        if writer.write(q.data).await.is_err() {
            return;
        }
    }
    writer.close(reason).await;
}

/// Resolves with the session's closing reason (a `String`: the watch guard is not `Send`).
async fn closed(closing: &mut watch::Receiver<Option<String>>) -> String {
    match closing.wait_for(Option::is_some).await {
        Ok(r) => r.clone().unwrap_or_default(),
        Err(_) => "relay shutting down".into(),
    }
}

/// At most `max` bytes of `s`, cut at a character boundary (close reasons fit a WebSocket
/// control frame or a WebTransport control message).
pub(crate) fn truncate(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}
