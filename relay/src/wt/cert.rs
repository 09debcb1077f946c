//! The TLS certificate of the WebTransport front end.
//!
//! HTTP/3 always runs over TLS. A relay without a certificate that browsers trust generates a
//! self-signed one at start-up, which a page accepts by its SHA-256 hash (`new
//! WebTransport(url, { serverCertificateHashes: [{ algorithm: 'sha-256', value }] })`). Browsers
//! accept such a certificate only if it is ECDSA P-256 and valid for at most 14 days, so it
//! expires: restart the relay within two weeks (pages then need the new hash), or configure a
//! certificate from a CA for a long-running deployment ([`WtCertificate::Pem`]).

use std::net::SocketAddr;
use std::path::PathBuf;

use wtransport::tls::self_signed::time::{Duration, OffsetDateTime};
use wtransport::Identity;

use crate::error::RelayError;

/// How long a self-signed certificate is valid: the most browsers accept by hash.
const SELF_SIGNED_DAYS: i64 = 14;

/// How far before now a self-signed certificate's validity starts (clock skew between the relay
/// and the browsers).
const BACKDATE: Duration = Duration::hours(1);

/// Which certificate the WebTransport front end presents.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum WtCertificate {
    /// A certificate generated at start-up: ECDSA P-256, valid 14 days from an hour ago, for
    /// these names (host names or IP addresses). Browsers accept it only by its hash.
    SelfSigned {
        /// The subject alternative names.
        names: Vec<String>,
    },
    /// A certificate chain and its private key, from PEM files (e.g. from a CA browsers trust,
    /// for which pages need no hash).
    Pem {
        /// The certificate chain, leaf first.
        cert: PathBuf,
        /// The leaf's private key (PKCS#8, PKCS#1 or SEC1).
        key: PathBuf,
    },
}

impl WtCertificate {
    /// A self-signed certificate for `localhost` and `addr`'s IP address (unless unspecified).
    ///
    /// ```
    /// use ringfence_relay::wt::WtCertificate;
    /// let c = WtCertificate::self_signed_for("127.0.0.1:0".parse().unwrap());
    /// let WtCertificate::SelfSigned { names } = c else { unreachable!() };
    /// assert_eq!(names, ["localhost", "127.0.0.1"]);
    /// ```
    pub fn self_signed_for(addr: SocketAddr) -> Self {
        let mut names = vec!["localhost".to_string()];
        if !addr.ip().is_unspecified() {
            names.push(addr.ip().to_string());
        }
        Self::SelfSigned { names }
    }

    /// Generates or loads the identity; returns it with the self-signed certificate's expiry.
    pub(crate) async fn identity(&self) -> Result<(Identity, Option<OffsetDateTime>), RelayError> {
        match self {
            Self::SelfSigned { names } => {
                let not_before = OffsetDateTime::now_utc() - BACKDATE;
                let not_after = not_before + Duration::days(SELF_SIGNED_DAYS);
                let identity = Identity::self_signed_builder()
                    .subject_alt_names(names)
                    .validity_period(not_before, not_after)
                    .build()
                    .map_err(|e| RelayError::Config(format!("self-signed certificate: {e}")))?;
                Ok((identity, Some(not_after)))
            }
            Self::Pem { cert, key } => {
                let identity = Identity::load_pemfiles(cert, key).await.map_err(|e| {
                    RelayError::Config(format!(
                        "WebTransport certificate {} / key {}: {e}",
                        cert.display(),
                        key.display()
                    ))
                })?;
                Ok((identity, None))
            }
        }
    }
}
