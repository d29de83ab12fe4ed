//! A throw-away `redis-server` child on a free loopback port, for tests, the
//! bench and the comparison. It saves nothing to disk, and dropping the guard
//! kills this child (by its own PID) and reaps it. [`RedisServer::pause`]
//! freezes it (`SIGSTOP`) for fault tests and resumes it when the guard drops.

use std::fmt;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long to wait for a fresh server to answer `PING`.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a `redis-server` could not be started.
#[derive(Debug)]
pub struct RedisProcessError {
    message: String,
    not_installed: bool,
}

impl RedisProcessError {
    /// `redis-server` is not on `PATH`.
    pub fn is_not_installed(&self) -> bool {
        self.not_installed
    }
}

impl fmt::Display for RedisProcessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RedisProcessError {}

fn error(message: impl Into<String>) -> RedisProcessError {
    RedisProcessError {
        message: message.into(),
        not_installed: false,
    }
}

/// A running `redis-server` child process.
pub struct RedisServer {
    child: Child,
    port: u16,
}

impl fmt::Debug for RedisServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisServer")
            .field("pid", &self.child.id())
            .field("port", &self.port)
            .finish()
    }
}

impl RedisServer {
    /// The `redis-server` binary on `PATH`, if any.
    pub fn binary() -> Option<PathBuf> {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join("redis-server"))
            .find(|candidate| candidate.is_file())
    }

    /// Start on a free loopback port (a few attempts, in case another process
    /// takes the port between the probe and the start).
    pub fn start() -> Result<Self, RedisProcessError> {
        let mut last = None;
        for _ in 0..3 {
            let port = free_port().map_err(|e| error(format!("no free port: {e}")))?;
            match Self::start_on_port(port) {
                Ok(server) => return Ok(server),
                Err(e) if e.is_not_installed() => return Err(e),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| error("redis-server did not start")))
    }

    /// Start on this port (e.g. to restart an empty server where a stopped one was).
    pub fn start_on_port(port: u16) -> Result<Self, RedisProcessError> {
        Self::start_with(port, &[])
    }

    /// Start on this port with extra `redis-server` arguments (e.g. a
    /// cluster node's `--cluster-enabled yes`).
    pub fn start_with(port: u16, extra: &[&str]) -> Result<Self, RedisProcessError> {
        let binary = Self::binary().ok_or(RedisProcessError {
            message: "redis-server not found on PATH".to_owned(),
            not_installed: true,
        })?;
        let child = Command::new(binary)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(["--loglevel", "warning"])
            .args(extra)
            .arg("--dir")
            .arg(std::env::temp_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| error(format!("cannot run redis-server: {e}")))?;
        let mut server = Self { child, port };
        let deadline = Instant::now() + START_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(error(format!("redis-server exited at start: {status}")));
            }
            if ping(port) {
                return Ok(server);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        server.kill();
        Err(error("redis-server did not answer PING in time"))
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The child's PID.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Freeze this child with `SIGSTOP` (`kill -STOP <its pid>`): its sockets
    /// stay open and accept bytes, but nothing is answered, like a stalled
    /// host. The guard sends `SIGCONT` when dropped (also when a test panics),
    /// and borrows the server so it cannot be killed while frozen.
    pub fn pause(&self) -> Result<Paused<'_>, RedisProcessError> {
        signal(self.pid(), "-STOP")?;
        Ok(Paused {
            server: self,
            resumed: false,
        })
    }

    /// Whether this child is stopped by a signal now (`T` in `/proc/<pid>/stat`,
    /// so Linux only; `false` where that file cannot be read).
    pub fn is_stopped(&self) -> bool {
        std::fs::read_to_string(format!("/proc/{}/stat", self.pid()))
            .ok()
            .and_then(|stat| {
                // `pid (comm) state …`: the state follows the last ')'.
                let rest = &stat[stat.rfind(')')? + 1..];
                rest.split_whitespace().next().map(|state| state == "T")
            })
            .unwrap_or(false)
    }

    /// Kill this child (SIGKILL) and reap it. Idempotent.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A [`RedisServer`] frozen by [`RedisServer::pause`]; `SIGCONT` on drop.
#[derive(Debug)]
pub struct Paused<'a> {
    server: &'a RedisServer,
    resumed: bool,
}

impl Paused<'_> {
    /// Send `SIGCONT` now and say whether it was delivered.
    pub fn resume(mut self) -> Result<(), RedisProcessError> {
        self.resumed = true;
        signal(self.server.pid(), "-CONT")
    }
}

impl Drop for Paused<'_> {
    fn drop(&mut self) {
        if !self.resumed {
            let _ = signal(self.server.pid(), "-CONT");
        }
    }
}

/// `kill <signal> <pid>` for a PID this process started (no `unsafe`, no new dependency).
fn signal(pid: u32, signal: &str) -> Result<(), RedisProcessError> {
    let status = Command::new("kill")
        .args([signal, &pid.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| error(format!("cannot run kill {signal} {pid}: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(error(format!("kill {signal} {pid}: {status}")))
    }
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

/// A raw RESP `PING` with short timeouts.
fn ping(port: u16) -> bool {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let mut reply = [0u8; 7];
    stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut reply).is_ok()
        && &reply == b"+PONG\r\n"
}
