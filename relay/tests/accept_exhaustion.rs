//! A listener that runs out of descriptors pauses instead of spinning, and serves again once
//! descriptors are free (the security review found the metrics listener busy-looping on
//! `accept()` errors). Its own test binary: it lowers the process's descriptor limit.
#![cfg(target_os = "linux")]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// CPU time (user + system) this process has used.
#[allow(unsafe_code)]
fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) }, 0);
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// Lowers this process's soft limit on open descriptors (the hard limit stays, so it can be
/// raised back).
#[allow(unsafe_code)]
fn limit_descriptors(n: u64) {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit only read or write the struct they are given.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
    lim.rlim_cur = n;
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) }, 0);
}

fn open_descriptors() -> u64 {
    std::fs::read_dir("/proc/self/fd").unwrap().count() as u64
}

#[test]
fn metrics_listener_out_of_descriptors_pauses_then_serves_again() {
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(ringfence_relay::metrics::serve(listener, || "up 1\n".to_string()));

    // Room for 40 more descriptors: connections from this process use two each (both ends), so
    // the client side soon fails too, leaving accepted-but-unaccepted connections in the backlog.
    limit_descriptors(open_descriptors() + 40);
    let mut held = Vec::new();
    while let Ok(c) = TcpStream::connect(addr) {
        held.push(c);
        assert!(held.len() < 1000, "the descriptor limit did not take effect");
    }
    // Let the listener reach its failing accept, then measure.
    std::thread::sleep(Duration::from_millis(300));
    let (t0, cpu0) = (Instant::now(), cpu_time());
    std::thread::sleep(Duration::from_secs(1));
    let used = cpu_time() - cpu0;
    let wall = t0.elapsed();
    assert!(
        used < wall / 4,
        "with descriptors exhausted the process used {used:?} of CPU in {wall:?}: a spinning accept loop"
    );

    // Free the descriptors: the listener accepts and answers again.
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(10);
    let body = loop {
        let answer = TcpStream::connect(addr).and_then(|mut c| {
            c.set_read_timeout(Some(Duration::from_secs(2)))?;
            c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")?;
            let mut s = String::new();
            c.read_to_string(&mut s)?;
            Ok(s)
        });
        match answer {
            Ok(s) if s.contains("up 1") => break s,
            _ if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
            other => panic!("the metrics listener did not serve again: {other:?}"),
        }
    };
    assert!(body.starts_with("HTTP/1.1 200"), "{body}");
}
