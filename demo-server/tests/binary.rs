//! The `demo-server` binary: says which store it uses at start-up and serves.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use common::{client, get_as};
use demo_server::redis_process::RedisServer;

/// The child, killed (by its own PID) and reaped on drop.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start `demo-server serve` on an ephemeral port; return it and its first stdout line.
fn start(extra: &[&str]) -> (Server, String) {
    let child = Command::new(env!("CARGO_BIN_EXE_demo-server"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--capacity",
            "1",
            "--rate",
            "0.01",
        ])
        .args(extra)
        .env_remove("REDIS_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run demo-server");
    let mut server = Server(child);
    let mut line = String::new();
    BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (server, line)
}

fn url_of(line: &str) -> String {
    let start = line.find("http://").expect("address in the start-up line");
    line[start..].split([',', ' ']).next().unwrap().to_owned()
}

async fn limited_once(url: &str) {
    let client = client();
    assert_eq!(get_as(&client, url, b"binary").await.status, 200);
    assert_eq!(get_as(&client, url, b"binary").await.status, 429);
}

#[tokio::test]
async fn without_redis_it_says_embedded_store_and_limits() {
    let (_server, line) = start(&[]);
    assert!(line.contains("embedded in-process store"), "{line}");
    limited_once(&url_of(&line)).await;
}

#[tokio::test]
async fn with_redis_it_says_redis_and_limits() {
    let redis = RedisServer::start().unwrap();
    let namespace = format!("binary-{:08x}", rand::random::<u32>());
    let (_server, line) = start(&["--redis", &redis.url(), "--namespace", &namespace]);
    assert!(line.contains("store: redis at"), "{line}");
    limited_once(&url_of(&line)).await;
}
