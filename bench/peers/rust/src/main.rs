//! Peer benchmark: the Rust `uuid` crate (Debian's librust-uuid-dev) minting
//! UUIDv4 (`Uuid::new_v4`) and UUIDv7 (`Uuid::now_v7`).
//!
//! Built twice by ../run_peers.sh: once with the crate's default OS RNG
//! (getrandom per UUID) and once with `--features fast-rng` (rand's
//! thread-local ChaCha). The impl name printed says which.
//!
//!   idmint-peer-rust bench [--run-ms MS] [--runs R]   RESULT lines on stdout
//!   idmint-peer-rust cli uuidv4|uuidv7 N             N IDs, one per line
//!
//! The crate has no generator object: every call uses the thread's RNG (or
//! the OS), so the two-thread figure is reported as `local2`.
//!
//! Kept buildable by Debian 12's rustc 1.63 (edition 2021, nothing newer):
//! `std::hint::black_box` is stable only from 1.66, hence `keep` below.

use std::io::{self, Write};
use std::time::Instant;
use uuid::Uuid;

#[cfg(feature = "fast-rng")]
const IMPL: &str = "rust:uuid+fast-rng";
#[cfg(not(feature = "fast-rng"))]
const IMPL: &str = "rust:uuid";

struct Cfg {
    run_ms: f64,
    runs: usize,
}

fn fold(u: Uuid) -> u64 {
    let v = u.as_u128();
    (v as u64) ^ ((v >> 64) as u64)
}

fn fold_text(buf: &[u8; 36]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&buf[28..36]);
    u64::from_ne_bytes(w)
}

/// Hands `v` to the optimiser as opaque: a volatile read of it must see the
/// value, so the loop that computed it cannot be dropped. A stand-in for
/// `std::hint::black_box`, which rustc 1.63 lacks (stable from 1.66).
fn keep(v: u64) -> u64 {
    // SAFETY: `&v` is a valid, aligned, initialised u64 on this stack frame.
    unsafe { std::ptr::read_volatile(&v) }
}

/// Runs `f(n)` on `threads` threads (n split evenly) and returns wall ns.
fn timed<F>(threads: usize, n: u64, f: &F) -> f64
where
    F: Fn(u64) -> u64 + Sync,
{
    let t0 = Instant::now();
    if threads == 1 {
        keep(f(n));
    } else {
        std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads)
                .map(|_| s.spawn(|| keep(f(n / threads as u64))))
                .collect();
            for h in hs {
                keep(h.join().unwrap());
            }
        });
    }
    t0.elapsed().as_nanos() as f64
}

/// Calibrates the count to about `run_ms` per run (the calibration doubles
/// as warm-up), then returns the median ns/ID of `runs` runs.
fn measure<F>(cfg: &Cfg, threads: usize, f: F) -> f64
where
    F: Fn(u64) -> u64 + Sync,
{
    let target = cfg.run_ms * 1e6;
    let mut n: u64 = 256;
    loop {
        let ns = timed(threads, n, &f);
        if ns >= target / 4.0 || n >= 1 << 34 {
            n = ((n as f64) * target / ns.max(1.0)).max(threads as f64 * 16.0) as u64;
            break;
        }
        n *= 2;
    }
    let mut v: Vec<f64> = (0..cfg.runs)
        .map(|_| {
            let per = n / threads as u64;
            timed(threads, n, &f) / (per * threads as u64) as f64
        })
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn report(format: &str, mode: &str, threads: usize, ns: f64) {
    println!("RESULT\t{IMPL}\t{format}\t{mode}\t{threads}\t{ns:.2}");
    io::stdout().flush().ok();
}

fn mint(format: &str) -> Uuid {
    if format == "uuidv7" {
        Uuid::now_v7()
    } else {
        Uuid::new_v4()
    }
}

fn bench(cfg: &Cfg) {
    for format in ["uuidv4", "uuidv7"] {
        let bin = |n: u64| {
            let mut acc = 0u64;
            for _ in 0..n {
                acc ^= fold(mint(format));
            }
            acc
        };
        let text = |n: u64| {
            let mut acc = 0u64;
            let mut buf = [0u8; 36];
            for _ in 0..n {
                mint(format).hyphenated().encode_lower(&mut buf);
                acc ^= fold_text(&buf);
            }
            acc
        };
        report(format, "binary", 1, measure(cfg, 1, bin));
        report(format, "text", 1, measure(cfg, 1, text));
        report(format, "local2", 2, measure(cfg, 2, bin));
    }
}

fn cli(format: &str, n: u64) -> io::Result<()> {
    let out = io::stdout();
    let mut w = io::BufWriter::with_capacity(1 << 16, out.lock());
    let mut line = [b'\n'; 37];
    for _ in 0..n {
        let mut buf = [0u8; 36];
        mint(format).hyphenated().encode_lower(&mut buf);
        line[..36].copy_from_slice(&buf);
        w.write_all(&line)?;
    }
    w.flush()
}

fn usage() -> ! {
    eprintln!("usage: idmint-peer-rust bench [--run-ms MS] [--runs R]");
    eprintln!("       idmint-peer-rust cli uuidv4|uuidv7 N");
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("bench") => {
            let mut cfg = Cfg { run_ms: 250.0, runs: 5 };
            let mut i = 1;
            while i + 1 < args.len() {
                match args[i].as_str() {
                    "--run-ms" => cfg.run_ms = args[i + 1].parse().unwrap_or_else(|_| usage()),
                    "--runs" => cfg.runs = args[i + 1].parse().unwrap_or_else(|_| usage()),
                    _ => usage(),
                }
                i += 2;
            }
            if cfg.runs == 0 || i != args.len() {
                usage();
            }
            bench(&cfg);
        }
        Some("cli") if args.len() == 3 => {
            let format = args[1].as_str();
            if format != "uuidv4" && format != "uuidv7" {
                usage();
            }
            let n: u64 = args[2].parse().unwrap_or_else(|_| usage());
            if let Err(e) = cli(format, n) {
                if e.kind() != io::ErrorKind::BrokenPipe {
                    eprintln!("idmint-peer-rust: {e}");
                    std::process::exit(1);
                }
            }
        }
        _ => usage(),
    }
}
