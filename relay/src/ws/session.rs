//! The relay's sessions: who is connected, the bounded queues toward each party, and closing.
//!
//! Every party index of a session has one bounded queue, created with the session, so a party
//! can be sent to before it connects (its peers may finish connecting first). All queued
//! bytes of a session also hold permits of one byte budget.
//!
//! When a party leaves (cleanly or not), each other party gets an end-of-link marker `[from]`
//! (a message with no payload) after everything the departed party sent: their link to it
//! ends like a TCP connection reaching end of stream, and their other links carry on, so a
//! session can finish in any order. A whole session closes, once, when it idles or a queue
//! stays full; closing wakes every connection, which drains what is already queued toward its
//! party and then closes with the reason.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ringfence_core::net::{PartyId, SessionId};
use tokio::sync::{mpsc, watch, OwnedSemaphorePermit, Semaphore};

use super::path::{LobbyPath, RelayPath};
use super::server::RelayLimits;
use crate::token::{unix_now, Token, Trusted};

/// A message on its way to a party: `[from] ‖ payload`, holding its share of the byte budget
/// until it is written to the socket.
pub(crate) struct Queued {
    pub(crate) data: Vec<u8>,
    _permit: OwnedSemaphorePermit,
}

/// Why a join was refused: an HTTP status and a reason for the client.
///
/// Admission refusals keep distinct statuses so that a client can say what to do about them
/// without parsing the reason: 401 no token, or one that does not verify (malformed, forged,
/// expired); 403 a valid token for another session, party or deployment; 404 an invited
/// deployment this relay does not know.
pub(crate) type Refusal = (u16, String);

/// Counters of a relay since it started (exported by [`super::metrics`]).
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) connections: AtomicU64,
    pub(crate) refused: AtomicU64,
    pub(crate) sessions_opened: AtomicU64,
    pub(crate) sessions_closed_early: AtomicU64,
    pub(crate) invitations: AtomicU64,
    pub(crate) messages: AtomicU64,
    pub(crate) bytes: AtomicU64,
}

/// All sessions and lobbies of a relay.
pub(crate) struct Registry {
    pub(crate) counters: Counters,
    limits: RelayLimits,
    trusted: Trusted,
    sessions: Mutex<HashMap<SessionId, Arc<Session>>>,
    lobbies: Mutex<HashMap<String, Lobby>>,
    epoch: Instant,
    next_waiter: AtomicU64,
    /// `max_connections` for all front ends together (WebSocket and WebTransport).
    connections: Arc<Semaphore>,
}

/// Invitations queued toward one waiting server party.
const LOBBY_QUEUE: usize = 64;

/// The server parties of one deployment waiting for invitations.
struct Lobby {
    parties: u8,
    mode: String,
    /// Per party index: the waiting connection's id and its invitation queue.
    waiting: Vec<Option<(u64, mpsc::Sender<String>)>>,
}

/// A server party waiting in a lobby; dropping it leaves the lobby.
pub(crate) struct Waiter {
    pub(crate) deployment: String,
    pub(crate) party: PartyId,
    id: u64,
    registry: Arc<Registry>,
}

/// One session.
pub(crate) struct Session {
    pub(crate) id: SessionId,
    pub(crate) parties: u8,
    mode: String,
    /// The deployment whose tokens admit parties (`None` on an open relay).
    deployment: Option<String>,
    queues: Vec<mpsc::Sender<Queued>>,
    state: Mutex<State>,
    budget: Arc<Semaphore>,
    closing: watch::Sender<Option<String>>,
    /// Milliseconds since the registry's epoch at the last forwarded message or join.
    last_active: AtomicU64,
}

struct State {
    /// Each party's queue receiver until its connection takes it: `None` = taken.
    inboxes: Vec<Option<mpsc::Receiver<Queued>>>,
    connected: usize,
}

/// A connected party; leaving the session (dropping this) closes it for everyone.
pub(crate) struct Member {
    pub(crate) session: Arc<Session>,
    pub(crate) party: PartyId,
    registry: Arc<Registry>,
}

/// Why forwarding a message failed; the session is closed with this reason.
pub(crate) enum ForwardError {
    /// Malformed or misaddressed message from the sender.
    Bad(String),
    /// The session budget or the recipient's queue stayed full.
    Full(String),
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding these locks cannot leave them inconsistent (plain field updates).
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

static LOG_JSON: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes the relay log one JSON object per line (`{"ts_ms", "component": "relay", "msg"}`)
/// instead of text lines; for log collectors.
pub fn set_log_json(json: bool) {
    LOG_JSON.store(json, Ordering::Relaxed);
}

/// Logs a relay event on stderr, as text or JSON ([`set_log_json`]). The relay logs
/// connections, refusals and closes with their reasons, never payloads, tokens or keys.
pub fn log(msg: std::fmt::Arguments<'_>) {
    if LOG_JSON.load(Ordering::Relaxed) {
        let ts = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let line = serde_json::json!({ "ts_ms": ts, "component": "relay", "msg": msg.to_string() });
        eprintln!("{line}");
    } else {
        eprintln!("ringfence relay: {msg}");
    }
}

/// The first 8 hex digits of a session id, for logs.
pub(crate) fn short(id: &SessionId) -> String {
    id.0[..4].iter().map(|b| format!("{b:02x}")).collect()
}

impl Registry {
    pub(crate) fn new(limits: RelayLimits, trusted: Trusted) -> Self {
        Self {
            counters: Counters::default(),
            trusted,
            sessions: Mutex::new(HashMap::new()),
            lobbies: Mutex::new(HashMap::new()),
            epoch: Instant::now(),
            next_waiter: AtomicU64::new(0),
            connections: Arc::new(Semaphore::new(limits.max_connections)),
            limits,
        }
    }

    /// A connection slot, if fewer than `max_connections` are open over every front end;
    /// held while the connection lives.
    pub(crate) fn connection_slot(&self) -> Option<OwnedSemaphorePermit> {
        self.connections.clone().try_acquire_owned().ok()
    }

    /// Checks `token` for `party` of `session` (`None`: a lobby), by a client inviting with
    /// `client_key` if any, when this relay requires tokens; returns the deployment it admits
    /// to (`None` on an open relay).
    fn admit(
        &self,
        token: Option<&str>,
        party: PartyId,
        session: Option<SessionId>,
        client_key: Option<&str>,
    ) -> Result<Option<String>, Refusal> {
        if !self.trusted.required() {
            return Ok(None);
        }
        let token = token.ok_or((401, "this relay requires a token".to_string()))?;
        let t: Token = self.trusted.verify(token, unix_now()).map_err(|e| (401, e))?;
        if t.party != party {
            return Err((403, format!("the token is for {}, not {party}", t.party)));
        }
        match (t.session, session) {
            (None, _) => {}
            (Some(_), None) => return Err((403, "a session token cannot wait in a lobby".into())),
            (Some(a), Some(b)) if a != b => {
                return Err((403, "the token is for another session".into()));
            }
            _ => {}
        }
        // The server parties check the binding too; checking it here tells the client sooner.
        if let Some(invited) = client_key {
            match t.client_key {
                None => {
                    return Err((
                        403,
                        "an inviting client's token must be bound to its key (rf2)".into(),
                    ))
                }
                Some(k) if k.to_hex() != invited => {
                    return Err((403, "the token is bound to another client key".into()))
                }
                Some(_) => {}
            }
        }
        Ok(Some(t.deployment))
    }

    /// Admits a server party into its deployment's lobby, replacing an earlier connection of
    /// the same party (a restarted server must not wait for the relay to notice the old one).
    pub(crate) fn wait(
        self: &Arc<Self>,
        p: &LobbyPath,
    ) -> Result<(Waiter, mpsc::Receiver<String>), Refusal> {
        if let Some(d) = self.admit(p.token.as_deref(), p.party, None, None)? {
            if d != p.deployment {
                return Err((403, format!("the token is for deployment {d:?}")));
            }
        }
        let mut lobbies = lock(&self.lobbies);
        let lobby = lobbies.entry(p.deployment.clone()).or_insert_with(|| Lobby {
            parties: p.parties,
            mode: p.mode.clone(),
            waiting: vec![None; usize::from(p.parties)],
        });
        if lobby.parties != p.parties || lobby.mode != p.mode {
            let waiting = lobby.waiting.iter().any(Option::is_some);
            if waiting {
                return Err((
                    409,
                    format!(
                        "deployment {} has {} parties in mode {}; this one says {} in mode {}",
                        p.deployment, lobby.parties, lobby.mode, p.parties, p.mode
                    ),
                ));
            }
            lobby.parties = p.parties;
            lobby.mode = p.mode.clone();
            lobby.waiting = vec![None; usize::from(p.parties)];
        }
        let id = self.next_waiter.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel(LOBBY_QUEUE);
        lobby.waiting[p.party.index()] = Some((id, tx));
        let w =
            Waiter { deployment: p.deployment.clone(), party: p.party, id, registry: self.clone() };
        Ok((w, rx))
    }

    /// Sends the invitation to join `p.session` to every server party of the deployment `p`
    /// invites, with the client's token (the parties check it themselves); refuses if one is
    /// missing or busy.
    fn invite(&self, p: &RelayPath, deployment: &str, client_key: &str) -> Result<(), Refusal> {
        let lobbies = lock(&self.lobbies);
        let Some(lobby) = lobbies.get(deployment) else {
            return Err((503, format!("deployment {deployment:?} has no party connected")));
        };
        // The client is the participant after the servers: in u16, since a lobby of 255 servers
        // would overflow the count.
        let with_client = u16::from(lobby.parties) + 1;
        if with_client != u16::from(p.parties) || p.party.0 != lobby.parties || lobby.mode != p.mode
        {
            return Err((
                400,
                format!(
                    "deployment {deployment:?} has {} server parties in mode {}: its client is \
                     P{} of {} in that mode",
                    lobby.parties, lobby.mode, lobby.parties, with_client
                ),
            ));
        }
        if let Some(i) = lobby.waiting.iter().position(Option::is_none) {
            return Err((503, format!("deployment {deployment:?}: P{i} is not connected")));
        }
        let mut sid = String::new();
        for b in p.session.0 {
            sid.push_str(&format!("{b:02x}"));
        }
        let msg = serde_json::json!({
            "session": sid,
            "parties": p.parties,
            "client": p.party.0,
            "client_key": client_key,
            "token": p.token,
        })
        .to_string();
        let mut permits = Vec::new();
        for (i, (_, tx)) in lobby.waiting.iter().flatten().enumerate() {
            match tx.try_reserve() {
                Ok(permit) => permits.push(permit),
                Err(_) => {
                    return Err((503, format!("deployment {deployment:?}: P{i} is busy")));
                }
            }
        }
        for permit in permits {
            permit.send(msg.clone());
        }
        self.counters.invitations.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// A server party of `deployment` refused the invitation to `session`: closes that session
    /// (if it is one of the deployment's) with the party's reason, which its client reads.
    pub(crate) fn refused_invitation(
        &self,
        deployment: &str,
        party: PartyId,
        session: SessionId,
        reason: &str,
    ) {
        let s = lock(&self.sessions).get(&session).cloned();
        let Some(s) = s.filter(|s| s.deployment.as_deref() == Some(deployment)) else {
            return log(format_args!(
                "lobby {deployment}: {party} refused an invitation to session {} (not open): {reason}",
                short(&session)
            ));
        };
        // Short: a WebSocket close reason holds 123 bytes.
        let reason = format!("{party} refused the invitation: {reason}");
        if s.close(reason) {
            self.counters.sessions_closed_early.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts a connection admitted into a session or a lobby, by either front end.
    pub(crate) fn count_admitted(&self) {
        self.counters.connections.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a connection refused at admission, by either front end, and logs why; `via`
    /// names the front end in the log line (empty for WebSocket).
    pub(crate) fn count_refused(&self, addr: std::net::SocketAddr, via: &str, refusal: &Refusal) {
        self.counters.refused.fetch_add(1, Ordering::Relaxed);
        let (code, reason) = refusal;
        log(format_args!("{addr}: refused{via} ({code}): {reason}"));
    }

    pub(crate) fn limits(&self) -> &RelayLimits {
        &self.limits
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Number of open sessions.
    pub(crate) fn sessions(&self) -> usize {
        lock(&self.sessions).len()
    }

    /// Admits a connection for `p`: creates the session if needed, refuses duplicates,
    /// mismatches and anything over the limits.
    pub(crate) fn join(self: &Arc<Self>, p: &RelayPath) -> Result<Member, Refusal> {
        let trusts = |d: &str| !self.trusted.required() || self.trusted.knows(d);
        if let Some(i) = p.invite.as_ref().filter(|i| !trusts(&i.deployment)) {
            return Err((404, format!("this relay has no deployment {:?}", i.deployment)));
        }
        let invited_key = p.invite.as_ref().map(|i| i.client_key.as_str());
        let admitted = self.admit(p.token.as_deref(), p.party, Some(p.session), invited_key)?;
        if let (Some(d), Some(i)) = (&admitted, &p.invite) {
            if *d != i.deployment {
                return Err((403, format!("the token is for deployment {d:?}")));
            }
        }
        let deployment = admitted.or_else(|| p.invite.as_ref().map(|i| i.deployment.clone()));
        let mut sessions = lock(&self.sessions);
        let session = match sessions.get(&p.session) {
            Some(_) if p.invite.is_some() => {
                return Err((409, "an inviting client must open a new session".into()));
            }
            Some(s) => s.clone(),
            None => {
                if sessions.len() >= self.limits.max_sessions {
                    let n = self.limits.max_sessions;
                    return Err((503, format!("relay is full ({n} sessions)")));
                }
                if p.parties > self.limits.max_parties {
                    let max = self.limits.max_parties;
                    return Err((400, format!("{} parties; this relay allows {max}", p.parties)));
                }
                if let Some(i) = &p.invite {
                    self.invite(p, &i.deployment, &i.client_key)?;
                }
                let s = Arc::new(Session::new(p, deployment.clone(), &self.limits, self.now_ms()));
                sessions.insert(p.session, s.clone());
                self.counters.sessions_opened.fetch_add(1, Ordering::Relaxed);
                s
            }
        };
        if self.trusted.required() && session.deployment != deployment {
            return Err((403, "the session belongs to another deployment".into()));
        }
        if let Some(reason) = session.closing.borrow().clone() {
            return Err((410, format!("session is closing: {reason}")));
        }
        if session.parties != p.parties || session.mode != p.mode {
            return Err((
                409,
                format!(
                    "session has {} parties in mode {}; this connection asks for {} in mode {}",
                    session.parties, session.mode, p.parties, p.mode
                ),
            ));
        }
        let mut st = lock(&session.state);
        if st.inboxes[p.party.index()].is_none() {
            // Taken by a live connection, or by one that left: a party joins a session once.
            return Err((409, format!("{} is already connected to this session", p.party)));
        }
        st.connected += 1;
        drop(st);
        session.touch(self.now_ms());
        Ok(Member { session, party: p.party, registry: self.clone() })
    }

    /// Closes every open session with `reason` and ends every lobby wait; returns how many
    /// sessions it closed.
    pub(crate) fn close_all(&self, reason: &str) -> usize {
        let sessions: Vec<Arc<Session>> = lock(&self.sessions).values().cloned().collect();
        lock(&self.lobbies).clear();
        sessions.iter().filter(|s| s.close(reason.to_string())).count()
    }

    /// Server parties waiting in lobbies, and lobbies with every party present.
    pub(crate) fn lobby_gauges(&self) -> (usize, usize) {
        let lobbies = lock(&self.lobbies);
        let waiting = lobbies.values().map(|l| l.waiting.iter().flatten().count()).sum();
        let complete = lobbies.values().filter(|l| l.waiting.iter().all(Option::is_some)).count();
        (waiting, complete)
    }

    /// Closes every session idle for longer than the idle limit; returns how many.
    pub(crate) fn expire_idle(&self) -> usize {
        let now = self.now_ms();
        let idle = self.limits.idle_timeout.as_millis() as u64;
        let sessions: Vec<Arc<Session>> = lock(&self.sessions).values().cloned().collect();
        let mut n = 0;
        for s in sessions {
            if now.saturating_sub(s.last_active.load(Ordering::Relaxed)) > idle {
                n += usize::from(s.close(format!("idle for {} s", idle / 1000)));
            }
        }
        self.counters.sessions_closed_early.fetch_add(n as u64, Ordering::Relaxed);
        n
    }
}

impl Session {
    fn new(p: &RelayPath, deployment: Option<String>, limits: &RelayLimits, now: u64) -> Self {
        let (queues, inboxes) = (0..p.parties)
            .map(|_| mpsc::channel(limits.conn_queue))
            .map(|(t, r)| (t, Some(r)))
            .unzip();
        Self {
            id: p.session,
            parties: p.parties,
            mode: p.mode.clone(),
            deployment,
            queues,
            state: Mutex::new(State { inboxes, connected: 0 }),
            budget: Arc::new(Semaphore::new(limits.session_queue_bytes)),
            closing: watch::Sender::new(None),
            last_active: AtomicU64::new(now),
        }
    }

    fn touch(&self, now: u64) {
        self.last_active.store(now, Ordering::Relaxed);
    }

    /// Closes the session with `reason`; returns whether this call closed it.
    pub(crate) fn close(&self, reason: String) -> bool {
        let closed = self.closing.send_if_modified(|r| {
            if r.is_some() {
                return false;
            }
            *r = Some(reason);
            true
        });
        if closed {
            let reason = self.closing.borrow().clone().unwrap_or_default();
            log(format_args!("session {}: closed ({reason})", short(&self.id)));
        }
        closed
    }

    /// A receiver of the closing reason.
    pub(crate) fn closing(&self) -> watch::Receiver<Option<String>> {
        self.closing.subscribe()
    }
}

impl Member {
    /// Closes the whole session with `reason` (a stalled queue), counting it.
    pub(crate) fn close_session(&self, reason: String) {
        if self.session.close(reason) {
            self.registry.counters.sessions_closed_early.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Takes this party's queue (once, by its connection's writer).
    pub(crate) fn take_inbox(&self) -> Option<mpsc::Receiver<Queued>> {
        lock(&self.session.state).inboxes[self.party.index()].take()
    }

    /// Forwards `msg = [to] ‖ payload` from this party: rewrites the first byte to the sender's
    /// id and queues it for `to`, waiting at most the stall limit for room.
    pub(crate) async fn forward(&self, mut msg: Vec<u8>) -> Result<(), ForwardError> {
        let s = &self.session;
        let limits = self.registry.limits();
        let Some(&to) = msg.first() else {
            return Err(ForwardError::Bad(format!("{} sent an empty message", self.party)));
        };
        if to >= s.parties || to == self.party.0 {
            return Err(ForwardError::Bad(format!(
                "{} addressed P{to}, not another party of this {}-party session",
                self.party, s.parties
            )));
        }
        msg[0] = self.party.0;
        s.touch(self.registry.now_ms());
        let c = &self.registry.counters;
        c.messages.fetch_add(1, Ordering::Relaxed);
        c.bytes.fetch_add(msg.len() as u64, Ordering::Relaxed);
        let stall = limits.stall_timeout;
        // The message length is at most max_message, which `RelayLimits::check` keeps below
        // both the budget and u32::MAX.
        let permit = tokio::time::timeout(
            stall,
            s.budget.clone().acquire_many_owned(msg.len().min(u32::MAX as usize) as u32),
        )
        .await;
        let Ok(Ok(permit)) = permit else {
            return Err(ForwardError::Full(format!(
                "session queue full ({} bytes) for {} ms",
                limits.session_queue_bytes,
                stall.as_millis()
            )));
        };
        let q = Queued { data: msg, _permit: permit };
        match s.queues[usize::from(to)].send_timeout(q, stall).await {
            Ok(()) => Ok(()),
            Err(mpsc::error::SendTimeoutError::Timeout(_)) => Err(ForwardError::Full(format!(
                "P{to} did not drain its queue ({} messages) for {} ms",
                limits.conn_queue,
                stall.as_millis()
            ))),
            // P{to} left: the session is closing anyway.
            Err(mpsc::error::SendTimeoutError::Closed(_)) => Ok(()),
        }
    }
}

impl Member {
    /// Tells every other party that this one left: an end-of-link marker `[me]` after its
    /// last message. If a marker cannot be queued in time the session closes instead.
    pub(crate) async fn leave(&self) {
        let s = &self.session;
        let stall = self.registry.limits().stall_timeout;
        for (j, q) in s.queues.iter().enumerate() {
            if j == self.party.index() || s.closing.borrow().is_some() {
                continue;
            }
            let Ok(Ok(permit)) =
                tokio::time::timeout(stall, s.budget.clone().acquire_owned()).await
            else {
                s.close(format!("{} left and the session queue stayed full", self.party));
                return;
            };
            let marker = Queued { data: vec![self.party.0], _permit: permit };
            if let Err(mpsc::error::SendTimeoutError::Timeout(_)) =
                q.send_timeout(marker, stall).await
            {
                s.close(format!("{} left and P{j}'s queue stayed full", self.party));
                return;
            }
        }
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        let s = &self.session;
        let mut st = lock(&s.state);
        st.connected -= 1;
        let empty = st.connected == 0;
        drop(st);
        if empty {
            let mut sessions = lock(&self.registry.sessions);
            if sessions.get(&s.id).is_some_and(|x| Arc::ptr_eq(x, s)) {
                sessions.remove(&s.id);
            }
        }
    }
}

impl Waiter {
    /// This waiting party refused the invitation to `session` for `reason`.
    pub(crate) fn refused(&self, session: SessionId, reason: &str) {
        self.registry.refused_invitation(&self.deployment, self.party, session, reason);
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        let mut lobbies = lock(&self.registry.lobbies);
        if let Some(lobby) = lobbies.get_mut(&self.deployment) {
            let slot = &mut lobby.waiting[self.party.index()];
            if slot.as_ref().is_some_and(|(id, _)| *id == self.id) {
                *slot = None;
            }
            if lobby.waiting.iter().all(Option::is_none) {
                lobbies.remove(&self.deployment);
            }
        }
    }
}

/// How often idle sessions are looked for.
pub(crate) fn reap_interval(idle: Duration) -> Duration {
    (idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(5))
}
