//! Health and metrics endpoints shared by the relay and the server parties: the Prometheus
//! text exposition format ([`TextFormat`]) and a minimal HTTP/1.1 responder ([`serve`]) that
//! answers `GET /healthz` with `ok` and `GET /metrics` with a freshly rendered text, one
//! request per connection. Serve it on a listener of its own, off the public interface.
//!
//! ```
//! use ringfence_relay::metrics::{Kind, TextFormat};
//!
//! let mut t = TextFormat::new();
//! t.family("jobs_total", Kind::Counter, "Jobs done.");
//! t.sample(&[("model", "a\"b")], 3);
//! assert_eq!(
//!     t.finish(),
//!     "# HELP jobs_total Jobs done.\n# TYPE jobs_total counter\njobs_total{model=\"a\\\"b\"} 3\n"
//! );
//! ```

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A metric family's type (`# TYPE` line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// Only goes up (restarts at 0 with the process).
    Counter,
    /// Goes up and down.
    Gauge,
}

/// A metrics page in the Prometheus text exposition format (version 0.0.4), written family by
/// family: [`TextFormat::family`] (its `# HELP` and `# TYPE` lines), then its samples.
#[derive(Debug, Default)]
pub struct TextFormat {
    out: String,
    family: String,
}

impl TextFormat {
    /// An empty page.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts the family `name` (`[a-zA-Z_:][a-zA-Z0-9_:]*`, the caller's constant); `help` is
    /// escaped as the format requires.
    pub fn family(&mut self, name: &str, kind: Kind, help: &str) -> &mut Self {
        let kind = match kind {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        };
        let help = help.replace('\\', "\\\\").replace('\n', "\\n");
        self.out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
        self.family = name.to_string();
        self
    }

    /// A sample of the current family with `labels` (names are the caller's constants; values
    /// are escaped, so any text may be one).
    pub fn sample(&mut self, labels: &[(&str, &str)], value: u64) -> &mut Self {
        self.out.push_str(&self.family);
        if !labels.is_empty() {
            let l: Vec<String> =
                labels.iter().map(|(k, v)| format!("{k}=\"{}\"", escape_label(v))).collect();
            self.out.push_str(&format!("{{{}}}", l.join(",")));
        }
        self.out.push_str(&format!(" {value}\n"));
        self
    }

    /// A family with one unlabelled sample.
    pub fn single(&mut self, name: &str, kind: Kind, help: &str, value: u64) -> &mut Self {
        self.family(name, kind, help).sample(&[], value)
    }

    /// The page.
    pub fn finish(self) -> String {
        self.out
    }
}

/// A label value as the text format writes it: `\`, `"` and line feeds escaped.
pub fn escape_label(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Serves `/healthz` and `/metrics` (the text `render` returns at each request) on `listener`
/// until the future is dropped. Each connection runs on its own task, for at most 5 s.
pub async fn serve(listener: TcpListener, render: impl Fn() -> String + Send + Sync + 'static) {
    let render: Arc<dyn Fn() -> String + Send + Sync> = Arc::new(render);
    loop {
        let (tcp, _) = crate::listen::accept(&listener, "metrics listener").await;
        let render = render.clone();
        tokio::spawn(async move {
            let _ = tokio::time::timeout(Duration::from_secs(5), answer(tcp, &*render)).await;
        });
    }
}

async fn answer(
    mut tcp: TcpStream,
    render: &(dyn Fn() -> String + Send + Sync),
) -> std::io::Result<()> {
    let mut buf = vec![0u8; 4096];
    let mut n = 0;
    while !buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
        if n == buf.len() {
            return reply(&mut tcp, "431 Request Header Fields Too Large", "").await;
        }
        let got = tcp.read(&mut buf[n..]).await?;
        if got == 0 {
            return Ok(());
        }
        n += got;
    }
    let head = String::from_utf8_lossy(&buf[..n]);
    let target = head.lines().next().unwrap_or("").split(' ').take(2).collect::<Vec<_>>();
    match target[..] {
        ["GET", "/healthz"] => reply(&mut tcp, "200 OK", "ok\n").await,
        ["GET", "/metrics"] => reply(&mut tcp, "200 OK", &render()).await,
        _ => reply(&mut tcp, "404 Not Found", "GET /healthz or /metrics\n").await,
    }
}

async fn reply(tcp: &mut TcpStream, status: &str, body: &str) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain; version=0.0.4\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n",
        body.len()
    );
    tcp.write_all(head.as_bytes()).await?;
    tcp.write_all(body.as_bytes()).await?;
    tcp.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_and_help_are_escaped() {
        let mut t = TextFormat::new();
        t.family("m", Kind::Gauge, "a \\ b\nc").sample(&[("k", "x\\y\"z\nw"), ("l", "")], 7);
        t.single("n_total", Kind::Counter, "N.", 0);
        assert_eq!(
            t.finish(),
            "# HELP m a \\\\ b\\nc\n# TYPE m gauge\nm{k=\"x\\\\y\\\"z\\nw\",l=\"\"} 7\n\
             # HELP n_total N.\n# TYPE n_total counter\nn_total 0\n"
        );
    }
}
