//! One established link: the party seals each frame into records as it sends it, a writer task
//! writes them, and a reader task opens records into frames, both tasks on the tokio runtime,
//! talking to the party through channels.
//!
//! Sealing in the party's `send` reads the frame's payload straight from the caller's slice, so
//! it is copied once (into its record) rather than concatenated behind its header first and then
//! copied into a record by the writer. The writer coalesces the records of frames queued while
//! it was busy into one write, so a large frame costs one encryption pass and a few syscalls.
//! The reader pushes whole frames into a bounded channel (backpressure onto TCP; the party's
//! `send` never waits, so this cannot deadlock) and ends with `Closed` on a clean end of stream
//! or `Io` on anything malformed.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use ringfence_core::net::{PartyId, RecvLimit, TransportError};
use ringfence_core::prg::Seed;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, watch, Notify};
use tokio::task::JoinHandle;

use ringfence_link::Established;

use crate::handshake::{Duplex, Handshaken};
use crate::record::{FrameDecoder, FrameEncoder, RecordError};

/// Bytes of queued records the writer coalesces into one socket write.
pub(crate) const FLUSH_BYTES: usize = 256 << 10;
/// Spare buffer the reader offers to each socket read.
const READ_BYTES: usize = 256 << 10;
/// Frames the reader may queue ahead of the party.
pub(crate) const RECV_QUEUE: usize = 64;

/// Wire counters of one link (bytes on the socket: records, tags, length prefixes, handshake).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) sent: AtomicU64,
    pub(crate) received: AtomicU64,
    pub(crate) handshake_sent: AtomicU64,
    /// Frames entirely written to the socket.
    pub(crate) frames_written: AtomicU64,
    /// Signalled by the writer after each socket write and when it stops.
    pub(crate) progress: Notify,
}

/// Why a transport's session was cut short by a peer that sent more than it may: set once, by
/// the first link that cuts its peer off, and seen by every link of the transport, so that the
/// whole session ends at once with that reason (its other links may be waiting on a server
/// that waits on the same client).
#[derive(Debug, Clone)]
pub(crate) struct Cut(Arc<watch::Sender<Option<String>>>);

impl Cut {
    pub(crate) fn new() -> Self {
        Self(Arc::new(watch::Sender::new(None)))
    }

    /// Records `why` (unless a reason is recorded already); returns the error links end with.
    fn set(&self, why: String) -> TransportError {
        self.0.send_if_modified(|slot| slot.is_none() && slot.replace(why.clone()).is_none());
        TransportError::Io(why)
    }

    /// The reason, once the session was cut.
    fn reason(&self) -> Option<TransportError> {
        self.0.borrow().clone().map(TransportError::Io)
    }

    /// Resolves with the reason when the session is cut.
    async fn wait(&self) -> TransportError {
        let mut rx = self.0.subscribe();
        let why = match rx.wait_for(Option::is_some).await {
            Ok(why) => why.clone().unwrap_or_default(),
            // The sender lives in this `Cut`: unreachable while it is borrowed.
            Err(_) => return TransportError::Closed,
        };
        TransportError::Io(why)
    }
}

/// What one peer may have sent that the party has not read yet ([`RecvLimit`]), and what it
/// has: shared by the link's reader (which cuts the peer off beyond it), the party's end (which
/// takes frames off it) and, over a relay, the peer's inbox (which bounds the bytes the reader
/// has not decoded yet).
#[derive(Debug)]
pub(crate) struct Allowance {
    max_frame: AtomicUsize,
    max_unread: AtomicUsize,
    /// Frame bytes queued for the party and not taken yet.
    unread: AtomicUsize,
    /// The transport's: set when any of its peers is cut off.
    cut: Cut,
}

impl Allowance {
    /// A peer's allowance, starting at `limit`, in the session that `cut` ends.
    pub(crate) fn new(limit: RecvLimit, cut: &Cut) -> Arc<Self> {
        Arc::new(Self {
            max_frame: AtomicUsize::new(limit.max_frame),
            max_unread: AtomicUsize::new(limit.max_unread),
            unread: AtomicUsize::new(0),
            cut: cut.clone(),
        })
    }

    /// An allowance with no limit beyond the transport's own.
    pub(crate) fn unlimited(cut: &Cut) -> Arc<Self> {
        Self::new(RecvLimit::NONE, cut)
    }

    /// Applies to frames the reader completes from now on.
    pub(crate) fn set(&self, limit: RecvLimit) {
        self.max_frame.store(limit.max_frame, Ordering::Release);
        self.max_unread.store(limit.max_unread, Ordering::Release);
    }

    /// The largest frame the peer may send now.
    pub(crate) fn max_frame(&self) -> usize {
        self.max_frame.load(Ordering::Acquire)
    }

    /// Stream bytes (records, with their prefixes and tags) of the peer that may wait before
    /// the reader decodes them: `default` for a peer without a limit, else room for its
    /// allowance in the smallest records (a 28-byte frame costs 50 on the wire) plus slack.
    pub(crate) fn stream_cap(&self, default: usize) -> usize {
        match self.max_unread.load(Ordering::Acquire) {
            usize::MAX => default,
            m => default.min(m.saturating_mul(2).saturating_add(STREAM_SLACK)),
        }
    }

    /// Checks a whole frame of `len` bytes from `peer` against the largest allowed.
    pub(crate) fn check_frame(&self, peer: PartyId, len: usize) -> Result<(), TransportError> {
        let max = self.max_frame();
        if len > max {
            return Err(self.cut_off(format!(
                "{peer} sent a frame of {len} bytes, over its limit of {max} bytes: cut off"
            )));
        }
        Ok(())
    }

    /// Counts a frame of `len` bytes the reader queues for the party; beyond the allowance the
    /// peer is cut off, with the reason.
    pub(crate) fn admit(&self, peer: PartyId, len: usize) -> Result<(), TransportError> {
        let max = self.max_unread.load(Ordering::Acquire);
        let unread = self.unread.fetch_add(len, Ordering::AcqRel).saturating_add(len);
        if unread > max {
            return Err(self.cut_off(format!(
                "{peer} sent {unread} bytes that this party has not read yet, over its limit \
                 of {max} bytes: cut off"
            )));
        }
        Ok(())
    }

    /// Cuts the peer off, and so its session, for `why`; returns the error the link ends with.
    pub(crate) fn cut_off(&self, why: String) -> TransportError {
        self.cut.set(why)
    }

    /// The party took a frame of `len` bytes.
    fn taken(&self, len: usize) {
        let _ = self
            .unread
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| Some(u.saturating_sub(len)));
    }
}

/// Stream bytes a limited peer's inbox holds beyond twice its allowance: the handshake, and
/// room for the reader to fall a few relay messages behind (so that a frame too large is
/// usually refused by its announced length, the clearer reason, before its bytes fill this).
const STREAM_SLACK: usize = 1 << 20;

/// Why [`Link::recv_until`] has no frame.
pub(crate) enum Missed {
    /// The link ended (with its error, if not cleanly).
    Ended(Option<TransportError>),
    /// The deadline passed.
    Late,
}

impl std::fmt::Display for Missed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Ended(Some(e)) => write!(f, "the link ended: {e}"),
            Self::Ended(None) => write!(f, "the link ended"),
            Self::Late => write!(f, "no answer in time"),
        }
    }
}

/// The party's end of a running link.
pub(crate) struct Link {
    pub(crate) peer: PartyId,
    /// Seals frames into records before they are queued (links over a byte stream); `None`
    /// when the writer takes whole frames (relay messages, WebRTC).
    pub(crate) sealer: Option<FrameEncoder>,
    /// Frames (or, with a sealer, their records) for the writer.
    pub(crate) tx: Option<mpsc::UnboundedSender<Vec<u8>>>,
    /// Frames handed to the writer so far.
    pub(crate) queued: u64,
    pub(crate) rx: mpsc::Receiver<Result<Vec<u8>, TransportError>>,
    pub(crate) seed: Seed,
    pub(crate) counters: Arc<Counters>,
    pub(crate) writer: Option<JoinHandle<()>>,
    /// None when the writer task reads too (a WebRTC link's driver).
    pub(crate) reader: Option<JoinHandle<()>>,
    pub(crate) writer_error: Arc<Mutex<Option<String>>>,
    /// The first failure seen by `recv`; later calls repeat it.
    pub(crate) failed: Option<TransportError>,
    /// What the peer may send unread; the reader cuts it off beyond.
    pub(crate) allowance: Arc<Allowance>,
}

impl Link {
    /// Starts the writer and reader tasks of `h` on the current tokio runtime; the reader
    /// holds the peer to `allowance`.
    pub(crate) fn spawn<S: Duplex>(h: Handshaken<S>, allowance: Arc<Allowance>) -> Self {
        let Handshaken { stream, link } = h;
        let Established { peer, send, recv, seed, bytes_sent, .. } = link;
        let counters = Arc::new(Counters::default());
        counters.sent.store(bytes_sent, Ordering::Relaxed);
        counters.handshake_sent.store(bytes_sent, Ordering::Relaxed);
        let (rd, wr) = stream.into_halves();
        let (tx, frames) = mpsc::unbounded_channel();
        let (frame_tx, rx) = mpsc::channel(RECV_QUEUE);
        let writer_error = Arc::new(Mutex::new(None));
        let writer = tokio::spawn(write_loop(wr, frames, counters.clone(), writer_error.clone()));
        let reader = tokio::spawn(read_loop(
            peer,
            rd,
            FrameDecoder::new(recv, allowance.max_frame()),
            frame_tx,
            counters.clone(),
            allowance.clone(),
        ));
        Self {
            peer,
            sealer: Some(FrameEncoder::new(send)),
            tx: Some(tx),
            queued: 0,
            rx,
            seed,
            counters,
            writer: Some(writer),
            reader: Some(reader),
            writer_error,
            failed: None,
            allowance,
        }
    }

    /// Queues a frame for the writer.
    pub(crate) fn send(&mut self, frame: Vec<u8>) -> Result<(), TransportError> {
        if self.sealer.is_some() {
            self.send_parts(&[], &frame)
        } else {
            self.queue(frame)
        }
    }

    /// Queues the frame `header ‖ payload` for the writer, without concatenating the two when
    /// the link seals records.
    pub(crate) fn send_parts(
        &mut self,
        header: &[u8],
        payload: &[u8],
    ) -> Result<(), TransportError> {
        let Some(sealer) = self.sealer.as_mut() else {
            return self.queue([header, payload].concat());
        };
        // The whole frame at once: queueing a large one in pieces, for the writer to write the
        // first while this thread seals the next, cost 1.5 M more instructions per party and run
        // (wakeups, writes) and no measurable time.
        let mut records = Vec::with_capacity(sealer.wire_len(header.len() + payload.len()));
        sealer
            .encode_parts(header, payload, &mut None, &mut records, usize::MAX)
            .map_err(|e| TransportError::Io(format!("sealing a frame for {}: {e}", self.peer)))?;
        self.queue(records)
    }

    fn queue(&mut self, bytes: Vec<u8>) -> Result<(), TransportError> {
        // A session cut short by a peer that sent too much sends nothing more.
        if let Some(e) = self.allowance.cut.reason() {
            return Err(e);
        }
        let sent = self.tx.as_ref().map(|tx| tx.send(bytes));
        match sent {
            Some(Ok(())) => {
                self.queued += 1;
                Ok(())
            }
            _ => Err(self.writer_failure()),
        }
    }

    /// The next frame from the peer, waiting until `deadline`.
    pub(crate) async fn recv_until(
        &mut self,
        deadline: tokio::time::Instant,
    ) -> Result<Vec<u8>, Missed> {
        match tokio::time::timeout_at(deadline, self.next()).await {
            Ok(Some(Ok(bytes))) => Ok(bytes),
            Ok(Some(Err(e))) => Err(Missed::Ended(Some(e))),
            Ok(None) => Err(Missed::Ended(None)),
            Err(_) => Err(Missed::Late),
        }
    }

    /// The next frame or failure from the reader (`None`: the reader is gone). Once a peer of
    /// the transport was cut off, that is the failure, ahead of any frame still queued.
    pub(crate) async fn next(&mut self) -> Option<Result<Vec<u8>, TransportError>> {
        let cut = self.allowance.cut.clone();
        let item = tokio::select! {
            biased;
            e = cut.wait() => Some(Err(e)),
            item = self.rx.recv() => item,
        };
        if let Some(Ok(frame)) = &item {
            self.allowance.taken(frame.len());
        }
        item
    }

    /// Waits until every queued frame has been written to the socket.
    pub(crate) async fn flushed(&self) -> Result<(), TransportError> {
        loop {
            if self.counters.frames_written.load(Ordering::Acquire) >= self.queued {
                return Ok(());
            }
            if self.writer.as_ref().is_none_or(JoinHandle::is_finished) {
                return Err(self.writer_failure());
            }
            self.counters.progress.notified().await;
        }
    }

    /// Why the writer stopped (`Closed` if it stopped without an error).
    pub(crate) fn writer_failure(&self) -> TransportError {
        let msg = self.writer_error.lock().ok().and_then(|e| e.clone());
        match msg {
            Some(m) => TransportError::Io(format!("sending to {}: {m}", self.peer)),
            None => TransportError::Closed,
        }
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        // The writer keeps running until it has flushed every queued frame, then shuts the
        // socket's write side; the reader has no one left to deliver to.
        self.reader.as_ref().inspect(|r| r.abort());
    }
}

/// Writes the sealed records of each queued frame.
async fn write_loop(
    mut wr: impl AsyncWrite + Unpin,
    mut frames: mpsc::UnboundedReceiver<Vec<u8>>,
    counters: Arc<Counters>,
    error: Arc<Mutex<Option<String>>>,
) {
    let mut batch = Batch { buf: Vec::new(), frames: 0 };
    let result: Result<(), String> = async {
        while let Some(first) = frames.recv().await {
            let mut next = Some(first);
            while let Some(records) = next.take() {
                if batch.buf.is_empty() {
                    // Taken as is: a lone (typically large) frame is written without a copy.
                    batch.buf = records;
                } else {
                    batch.buf.extend_from_slice(&records);
                }
                batch.frames += 1;
                if batch.buf.len() >= FLUSH_BYTES {
                    batch.flush(&mut wr, &counters).await?;
                }
                next = frames.try_recv().ok();
            }
            batch.flush(&mut wr, &counters).await?;
        }
        wr.shutdown().await.map_err(s)
    }
    .await;
    if let (Err(e), Ok(mut slot)) = (result, error.lock()) {
        *slot = Some(e);
    }
    counters.progress.notify_one();
}

/// Records waiting for a socket write, and how many frames they complete.
struct Batch {
    buf: Vec<u8>,
    frames: u64,
}

impl Batch {
    async fn flush(
        &mut self,
        wr: &mut (impl AsyncWrite + Unpin),
        counters: &Counters,
    ) -> Result<(), String> {
        if !self.buf.is_empty() {
            wr.write_all(&self.buf).await.map_err(s)?;
            counters.sent.fetch_add(self.buf.len() as u64, Ordering::Relaxed);
            self.buf.clear();
        }
        if self.frames > 0 {
            counters.frames_written.fetch_add(self.frames, Ordering::Release);
            self.frames = 0;
            counters.progress.notify_one();
        }
        Ok(())
    }
}

async fn read_loop(
    peer: PartyId,
    mut rd: impl AsyncRead + Unpin,
    mut dec: FrameDecoder,
    tx: mpsc::Sender<Result<Vec<u8>, TransportError>>,
    counters: Arc<Counters>,
    allowance: Arc<Allowance>,
) {
    let end = loop {
        match rd.read_buf(dec.input(READ_BYTES)).await {
            Ok(0) if dec.mid_frame() => {
                break TransportError::Io(format!(
                    "{peer} closed the link in the middle of a frame"
                ))
            }
            Ok(0) => break TransportError::Closed,
            Ok(n) => {
                counters.received.fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(e) => break TransportError::Io(format!("reading from {peer}: {e}")),
        }
        let failed = loop {
            let max_frame = allowance.max_frame();
            dec.set_max_frame(max_frame);
            match dec.poll_frame() {
                Ok(Some(frame)) => {
                    if let Err(e) = allowance.admit(peer, frame.len()) {
                        break Some(e);
                    }
                    if tx.send(Ok(frame)).await.is_err() {
                        return; // the party dropped the link
                    }
                }
                Ok(None) => break None,
                Err(RecordError::Oversized { len, .. }) => {
                    break Some(allowance.cut_off(format!(
                        "{peer} announced a frame of {len} bytes, over its limit of \
                         {max_frame} bytes: cut off"
                    )))
                }
                Err(e) => break Some(TransportError::Io(format!("from {peer}: {e}"))),
            }
        };
        if let Some(e) = failed {
            break e;
        }
    };
    let _ = tx.send(Err(end)).await;
}

fn s(e: impl ToString) -> String {
    e.to_string()
}
