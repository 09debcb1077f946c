//! `ringfence token`: a deployment's signing key and the join tokens it signs
//! ([`ringfence_relay::token`]).
//!
//! ```text
//! ringfence token key --out deploy.key                      # prints the public key for the relay
//! ringfence token issue --key deploy.key --deployment acme --party 0 --any-session --ttl-secs 31536000
//! ringfence token issue --key deploy.key --deployment acme --party 3 --session HEX \
//!     --client-key CLIENT_PUBLIC_KEY_HEX                    # a client's, bound to its key (rf2)
//! ```
//!
//! A client inviting a deployment's server parties needs a token bound to its Noise public
//! key: the servers check that the key the relay hands them is the one in the token.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use ringfence_core::net::PartyId;
use ringfence_relay::token::{unix_now, valid_name, DeploymentKey, Token};
use ringfence_relay::ws::parse_session_hex;
use ringfence_relay::PublicKey;

use crate::keygen::write_secret;

/// `ringfence token` subcommands.
#[derive(Subcommand, Clone)]
pub(crate) enum TokenCmd {
    /// Make a deployment signing key (Ed25519); prints the public key to give the relay.
    Key {
        /// Where to write the key (64 hex digits; created with mode 0600).
        #[arg(long)]
        out: PathBuf,
        /// Replace an existing file (tokens signed with the old key stop working).
        #[arg(long)]
        force: bool,
    },
    /// Sign a join token and print it.
    Issue(IssueArgs),
}

/// Options of `ringfence token issue`.
#[derive(Args, Clone)]
pub(crate) struct IssueArgs {
    /// The deployment's signing key file.
    #[arg(long)]
    key: PathBuf,
    /// The deployment's name.
    #[arg(long)]
    deployment: String,
    /// The party index the token admits (a client of 3 server parties is 3).
    #[arg(long)]
    party: u8,
    /// The one session it is good for (32 hex digits).
    #[arg(long, conflicts_with = "any_session", required_unless_present = "any_session")]
    session: Option<String>,
    /// Good for every session of the deployment (server parties).
    #[arg(long)]
    any_session: bool,
    /// Bind the token to this client's Noise static public key (64 hex digits): an `rf2`
    /// token, which a client inviting the deployment's server parties needs.
    #[arg(long, requires = "session")]
    client_key: Option<String>,
    /// Lifetime in seconds.
    #[arg(long, default_value_t = 600)]
    ttl_secs: u64,
}

/// Runs a `token` subcommand.
pub(crate) fn run(c: &TokenCmd) -> Result<(), String> {
    match c {
        TokenCmd::Key { out, force } => {
            let key = DeploymentKey::generate().map_err(|e| e.to_string())?;
            write_secret(out, &key.to_hex(), *force)?;
            println!("public key {}", key.public());
            println!("signing key written to {} (keep it secret; mode 0600)", out.display());
            Ok(())
        }
        TokenCmd::Issue(a) => {
            println!("{}", issue(a)?);
            Ok(())
        }
    }
}

fn issue(a: &IssueArgs) -> Result<String, String> {
    if !valid_name(&a.deployment) {
        return Err("--deployment must be [a-z0-9-]{1,32}".into());
    }
    let text = std::fs::read_to_string(&a.key).map_err(|e| format!("{}: {e}", a.key.display()))?;
    let key = DeploymentKey::from_hex(&text).map_err(|e| format!("{}: {e}", a.key.display()))?;
    let session = a.session.as_deref().map(parse_session_hex).transpose()?;
    let client_key = a
        .client_key
        .as_deref()
        .map(|k| PublicKey::from_hex(k).map_err(|e| format!("--client-key: {e}")))
        .transpose()?;
    let token = Token {
        deployment: a.deployment.clone(),
        session,
        party: PartyId(a.party),
        client_key,
        expires: unix_now().saturating_add(a.ttl_secs),
    };
    Ok(token.sign(&key))
}
