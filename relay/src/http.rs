//! A minimal HTTP/1.1 responder for the small side endpoints of the relay and the `ringfence`
//! tools (health and metrics, the development session tokens of `ringfence local-deployment
//! --dev`): one request per connection, its head only (no request body is read), each
//! connection on its own task for at most 5 s. Not a web server: serve it on loopback or a
//! private interface.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The answer to one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The status line's code and phrase, e.g. `200 OK`.
    pub status: &'static str,
    /// More header lines (`content-length` and `connection: close` are always sent).
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: String,
}

impl Reply {
    /// A reply of `content_type`.
    pub fn new(status: &'static str, content_type: &str, body: impl Into<String>) -> Self {
        let headers = vec![("content-type", content_type.to_string())];
        Self { status, headers, body: body.into() }
    }

    /// A reply without a body (e.g. `204 No Content`).
    pub fn empty(status: &'static str) -> Self {
        Self { status, headers: Vec::new(), body: String::new() }
    }

    /// A `text/plain` reply.
    pub fn text(status: &'static str, body: impl Into<String>) -> Self {
        Self::new(status, "text/plain; charset=utf-8", body)
    }

    /// The reply with one more header line.
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }
}

/// A request handler: `(method, target)` to the reply.
type Handler = dyn Fn(&str, &str) -> Reply + Send + Sync;

/// Answers every request on `listener` with `handle(method, target)` (the target with its
/// query) until the future is dropped; `what` names the listener in logs.
pub async fn serve(
    listener: TcpListener,
    what: &'static str,
    handle: impl Fn(&str, &str) -> Reply + Send + Sync + 'static,
) {
    let handle: Arc<Handler> = Arc::new(handle);
    loop {
        let (tcp, _) = crate::listen::accept(&listener, what).await;
        let handle = handle.clone();
        tokio::spawn(async move {
            let _ = tokio::time::timeout(Duration::from_secs(5), answer(tcp, &*handle)).await;
        });
    }
}

async fn answer(mut tcp: TcpStream, handle: &Handler) -> std::io::Result<()> {
    let mut buf = vec![0u8; 4096];
    let mut n = 0;
    while !buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
        if n == buf.len() {
            return reply(&mut tcp, Reply::text("431 Request Header Fields Too Large", "")).await;
        }
        let got = tcp.read(&mut buf[n..]).await?;
        if got == 0 {
            return Ok(());
        }
        n += got;
    }
    let head = String::from_utf8_lossy(&buf[..n]);
    let mut request_line = head.lines().next().unwrap_or("").split(' ');
    let (method, target) = (request_line.next().unwrap_or(""), request_line.next().unwrap_or(""));
    reply(&mut tcp, handle(method, target)).await
}

async fn reply(tcp: &mut TcpStream, r: Reply) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {}\r\n", r.status);
    for (name, value) in &r.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("content-length: {}\r\nconnection: close\r\n\r\n", r.body.len()));
    tcp.write_all(head.as_bytes()).await?;
    tcp.write_all(r.body.as_bytes()).await?;
    tcp.shutdown().await
}
