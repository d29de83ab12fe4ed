//! demo-server: a Redis-backed rate-limited API (work in progress).
fn main() {
    eprintln!("demo-server: not built yet");
    std::process::exit(2);
}
