//! Health and metrics endpoints shared by the relay and the server parties: the Prometheus
//! text exposition format ([`TextFormat`]) and the endpoints ([`serve`], on [`crate::http`]) that
//! answer `GET /healthz` with `ok` and `GET /metrics` with a freshly rendered text, one
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

use tokio::net::TcpListener;

use crate::http::Reply;

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
/// until the future is dropped ([`crate::http::serve`]).
pub async fn serve(listener: TcpListener, render: impl Fn() -> String + Send + Sync + 'static) {
    crate::http::serve(listener, "metrics listener", move |method, target| {
        const TEXT: &str = "text/plain; version=0.0.4";
        match (method, target) {
            ("GET", "/healthz") => Reply::new("200 OK", TEXT, "ok\n"),
            ("GET", "/metrics") => Reply::new("200 OK", TEXT, render()),
            _ => Reply::new("404 Not Found", TEXT, "GET /healthz or /metrics\n"),
        }
    })
    .await
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
