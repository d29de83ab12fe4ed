//! A throw-away Redis Cluster: three `redis-server` masters on loopback
//! ports, joined with `redis-cli --cluster create … --cluster-replicas 0`,
//! ready once every node reports `cluster_state:ok`. For tests and the
//! comparison; dropping it kills the three children (by their own PIDs).

use std::fmt;
use std::net::{Ipv4Addr, TcpListener};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::redis_process::{RedisProcessError, RedisServer};

/// How long the cluster may take to agree on its slots.
const READY_TIMEOUT: Duration = Duration::from_secs(20);

/// A running three-master cluster.
pub struct RedisCluster {
    nodes: Vec<RedisServer>,
    dir: PathBuf,
}

impl fmt::Debug for RedisCluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisCluster")
            .field("nodes", &self.nodes)
            .finish()
    }
}

/// Why the cluster could not be started.
#[derive(Debug)]
pub struct ClusterError(String);

impl fmt::Display for ClusterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ClusterError {}

impl From<RedisProcessError> for ClusterError {
    fn from(e: RedisProcessError) -> Self {
        Self(e.to_string())
    }
}

impl RedisCluster {
    /// `redis-cli` on `PATH`, if any (Debian's `redis-tools`, which the
    /// `redis-server` package depends on).
    pub fn cli() -> Option<PathBuf> {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join("redis-cli"))
            .find(|candidate| candidate.is_file())
    }

    /// Start three masters and join them.
    pub fn start() -> Result<Self, ClusterError> {
        let cli = Self::cli().ok_or_else(|| ClusterError("redis-cli not found on PATH".into()))?;
        let dir =
            std::env::temp_dir().join(format!("courteous-cluster-{:016x}", rand::random::<u64>()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| ClusterError(format!("{}: {e}", dir.display())))?;
        let mut cluster = Self {
            nodes: Vec::new(),
            dir,
        };
        for _ in 0..3 {
            let port = cluster_port()?;
            let config = cluster.dir.join(format!("nodes-{port}.conf"));
            let config = config.display().to_string();
            let node = RedisServer::start_with(
                port,
                &[
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    &config,
                    "--cluster-node-timeout",
                    "5000",
                ],
            )?;
            cluster.nodes.push(node);
        }
        let mut create = Command::new(&cli);
        create.arg("--cluster").arg("create");
        for node in &cluster.nodes {
            create.arg(format!("127.0.0.1:{}", node.port()));
        }
        let output = create
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| ClusterError(format!("cannot run redis-cli: {e}")))?;
        if !output.status.success() {
            return Err(ClusterError(format!(
                "redis-cli --cluster create failed: {}",
                String::from_utf8_lossy(&output.stdout)
            )));
        }
        let deadline = Instant::now() + READY_TIMEOUT;
        while !cluster.nodes.iter().all(|n| cluster_ok(&cli, n.port())) {
            if Instant::now() > deadline {
                return Err(ClusterError("cluster_state never became ok".into()));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(cluster)
    }

    /// The nodes' ports.
    pub fn ports(&self) -> Vec<u16> {
        self.nodes.iter().map(RedisServer::port).collect()
    }

    /// `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3`.
    pub fn url(&self) -> String {
        let nodes: Vec<String> = self
            .ports()
            .iter()
            .map(|p| format!("127.0.0.1:{p}"))
            .collect();
        format!("redis+cluster://{}", nodes.join(","))
    }

    /// Every key matching `pattern`, with the port of the node holding it
    /// (`KEYS` asked of each master).
    pub fn keys(&self, pattern: &str) -> Vec<(u16, String)> {
        let Some(cli) = Self::cli() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for port in self.ports() {
            if let Ok(o) = Command::new(&cli)
                .args(["-p", &port.to_string(), "--raw", "KEYS", pattern])
                .output()
            {
                for key in String::from_utf8_lossy(&o.stdout).lines() {
                    if !key.is_empty() {
                        out.push((port, key.to_owned()));
                    }
                }
            }
        }
        out
    }

    /// The port of the master serving `slot` (from `CLUSTER SHARDS`-free
    /// `CLUSTER SLOTS`, as `redis-cli --raw` prints it).
    pub fn owner(&self, slot: u16) -> Option<u16> {
        let cli = Self::cli()?;
        let out = Command::new(cli)
            .args([
                "-p",
                &self.nodes[0].port().to_string(),
                "--raw",
                "CLUSTER",
                "SLOTS",
            ])
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        // Each range prints as: start, end, ip, port, node id (then replicas).
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i + 3 < lines.len() {
            if let (Ok(start), Ok(end), Ok(port)) = (
                lines[i].parse::<u16>(),
                lines[i + 1].parse::<u16>(),
                lines[i + 3].parse::<u16>(),
            ) && lines[i + 2].contains('.')
                && (start..=end).contains(&slot)
            {
                return Some(port);
            }
            i += 1;
        }
        None
    }

    /// `CLUSTER KEYSLOT key`, asked of the first node.
    pub fn keyslot(&self, key: &str) -> Option<u16> {
        let cli = Self::cli()?;
        let out = Command::new(cli)
            .args([
                "-p",
                &self.nodes[0].port().to_string(),
                "CLUSTER",
                "KEYSLOT",
                key,
            ])
            .output()
            .ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            node.kill();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A port whose cluster bus port (port + 10000) is free too.
fn cluster_port() -> Result<u16, ClusterError> {
    for _ in 0..200 {
        let port = 20_000 + rand::random::<u16>() % 20_000;
        let free = |p: u16| TcpListener::bind((Ipv4Addr::LOCALHOST, p)).is_ok();
        if free(port) && free(port + 10_000) {
            return Ok(port);
        }
    }
    Err(ClusterError("no free port pair for a cluster node".into()))
}

fn cluster_ok(cli: &PathBuf, port: u16) -> bool {
    Command::new(cli)
        .args(["-p", &port.to_string(), "CLUSTER", "INFO"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("cluster_state:ok"))
        .unwrap_or(false)
}
