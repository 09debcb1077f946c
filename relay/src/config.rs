//! Configuration of a party's transport: who it is, where its peers listen, which keys they hold.

use std::net::SocketAddr;
use std::time::Duration;

use ringfence_core::net::{PartyId, SessionId};
pub use ringfence_link::Security;

use crate::error::RelayError;

pub mod party;

/// Default time `recv` waits for a peer's frame before failing with `Timeout`.
pub const DEFAULT_RECV_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time to establish and authenticate all links.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Everything a party needs to connect to its peers.
///
/// Party `i` dials every party `j > i` at `addrs[j]` and accepts connections from every party
/// `j < i` on its own listener, so `addrs[j]` is only read for `j > me`.
#[derive(Clone, Debug)]
pub struct TransportConfig {
    /// This party's id.
    pub me: PartyId,
    /// Listening address of every party, indexed by party id; its length is the party count.
    pub addrs: Vec<SocketAddr>,
    /// Link protection.
    pub security: Security,
    /// The session all links belong to; bound into every handshake.
    pub session: SessionId,
    /// How long `recv` waits for a frame before failing with `Timeout`.
    pub recv_timeout: Duration,
    /// How long establishing all links may take.
    pub connect_timeout: Duration,
}

impl TransportConfig {
    /// A configuration with the default timeouts.
    pub fn new(
        me: PartyId,
        addrs: Vec<SocketAddr>,
        security: Security,
        session: SessionId,
    ) -> Self {
        Self {
            me,
            addrs,
            security,
            session,
            recv_timeout: DEFAULT_RECV_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
        }
    }

    /// The number of parties.
    pub fn parties(&self) -> usize {
        self.addrs.len()
    }

    /// Checks ids, key counts and that this party's public key matches its private key's.
    pub fn validate(&self) -> Result<(), RelayError> {
        let n = self.parties();
        if n < 2 || n > usize::from(u8::MAX) {
            return Err(RelayError::Config(format!("{n} parties; need 2 to 255")));
        }
        if self.me.index() >= n {
            return Err(RelayError::Config(format!("{} is not among {n} parties", self.me)));
        }
        if let Security::DangerInsecureTestSeeds { .. } = self.security {
            return Err(RelayError::Config(
                "DangerInsecureTestSeeds is for relay links only (TcpTransport::connect_via_relay)"
                    .into(),
            ));
        }
        if let Security::Noise { keypair, public_keys } = &self.security {
            if public_keys.len() != n {
                return Err(RelayError::Config(format!(
                    "{} public keys for {n} parties",
                    public_keys.len()
                )));
            }
            if public_keys[self.me.index()] != keypair.public {
                return Err(RelayError::Config(format!(
                    "the public key listed for {} is not this party's own",
                    self.me
                )));
            }
        }
        Ok(())
    }
}
