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
/// replace an existing file unless `force`. A replacement is written to a new file beside the old
/// one and renamed over it: the old file's mode (perhaps readable by others) and any hard link or
/// symlink at `out` do not carry over to the new secret, and a crash leaves the old key whole.
pub(crate) fn write_secret(out: &std::path::Path, secret: &str, force: bool) -> Result<(), String> {
    let shown = |e: std::io::Error| format!("{}: {e}", out.display());
    if !force {
        return write_new_secret(out, secret).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => {
                format!("{} exists; pass --force to replace it", out.display())
            }
            _ => shown(e),
        });
    }
    let name = out.file_name().ok_or_else(|| format!("{}: not a file name", out.display()))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".new-{}", std::process::id()));
    let tmp = out.with_file_name(tmp_name);
    let _ = std::fs::remove_file(&tmp); // left over by a crashed run of this same process id
    write_new_secret(&tmp, secret).and_then(|()| std::fs::rename(&tmp, out)).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        shown(e)
    })
}

/// Creates `path` (which must not exist) with mode 0600 and writes `secret` and a newline.
fn write_new_secret(path: &std::path::Path, secret: &str) -> std::io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut f = opts.open(path)?;
    writeln!(f, "{secret}")?;
    f.sync_all()
}
