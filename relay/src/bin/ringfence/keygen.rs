//! `ringfence keygen`: a party's static Noise identity. The private key goes to a file only
//! this user can read (never to stdout, so it does not end up in a terminal log); the public
//! key, which the other parties and clients configure, is printed.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use ringfence_relay::StaticKeypair;

/// Options of `ringfence keygen`.
#[derive(Args, Clone)]
pub(crate) struct KeygenArgs {
    /// Where to write the private key (64 hex digits and a newline; created with mode 0600).
    #[arg(long)]
    out: PathBuf,
    /// Replace an existing file (the old identity is lost).
    #[arg(long)]
    force: bool,
}

/// Writes a fresh keypair's private key to `--out` and prints its public key.
pub(crate) fn run(a: &KeygenArgs) -> Result<(), String> {
    let k = StaticKeypair::generate().map_err(|e| e.to_string())?;
    write_secret(&a.out, &k.private.to_hex(), a.force)?;
    println!("public key {}", k.public.to_hex());
    println!("private key written to {} (keep it secret; mode 0600)", a.out.display());
    Ok(())
}

/// Writes `secret` and a newline to a new file only this user can read (mode 0600); refuses to
/// replace an existing file unless `force`.
pub(crate) fn write_secret(out: &std::path::Path, secret: &str, force: bool) -> Result<(), String> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true);
    if force {
        opts.create(true).truncate(true);
    } else {
        opts.create_new(true);
    }
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut f = opts.open(out).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => {
            format!("{} exists; pass --force to replace it", out.display())
        }
        _ => format!("{}: {e}", out.display()),
    })?;
    writeln!(f, "{secret}")
        .and_then(|()| f.sync_all())
        .map_err(|e| format!("{}: {e}", out.display()))
}
