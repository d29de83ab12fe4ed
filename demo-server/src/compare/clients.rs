//! The example clients as child processes: build them once, run one with the
//! comparison's arguments, read the JSON report it prints as its last line.
//!
//! Interface (issue 3): `--url URL --successes N [--concurrency C]
//! [--client-id ID]`, `polite` also `--no-pacing`; last stdout line
//! `{"client":…,"sent":…,"ok":…,"throttled":…,"errors":…,"elapsed_ms":…}`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::process::Command;

use super::CompareError;

/// Longest a single client run may take before it is killed. The naive
/// client bounds itself at 60 s; the others need about 4 s.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(45);

/// The four clients of the original experiment's wasted-requests experiment (and ours).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClientKind {
    /// Ignores 429 and resends at once.
    Naive,
    /// Waits a fixed 50 ms after each 429.
    FixedDelay,
    /// The seed's reference: plain reqwest sleeping the whole seconds
    /// `Retry-After` says (1 s without one).
    RetryAfterSeconds,
    /// courteous with pacing off: waits what the most precise hint says
    /// (`retry_after_ms` when there is one), nothing more.
    RetryAfterOnly,
    /// courteous with its default settings.
    Courteous,
}

impl ClientKind {
    /// In the order of the table.
    pub const ALL: [ClientKind; 5] = [
        ClientKind::Naive,
        ClientKind::FixedDelay,
        ClientKind::RetryAfterSeconds,
        ClientKind::RetryAfterOnly,
        ClientKind::Courteous,
    ];

    /// The example binary.
    pub fn example(self) -> &'static str {
        match self {
            ClientKind::Naive => "naive",
            ClientKind::FixedDelay => "fixed_delay",
            ClientKind::RetryAfterSeconds => "retry_after_seconds",
            ClientKind::RetryAfterOnly | ClientKind::Courteous => "polite",
        }
    }

    /// Arguments beyond the common ones.
    pub fn extra_args(self) -> &'static [&'static str] {
        match self {
            ClientKind::RetryAfterOnly => &["--no-pacing"],
            _ => &[],
        }
    }

    /// What the table calls it.
    pub fn label(self) -> &'static str {
        match self {
            ClientKind::Naive => "naive: resend at once",
            ClientKind::FixedDelay => "fixed 50 ms after 429",
            ClientKind::RetryAfterSeconds => "Retry-After seconds",
            ClientKind::RetryAfterOnly => "Retry-After ms",
            ClientKind::Courteous => "courteous defaults",
        }
    }

    /// Short name for client ids.
    pub fn slug(self) -> &'static str {
        match self {
            ClientKind::Naive => "naive",
            ClientKind::FixedDelay => "fixed-delay",
            ClientKind::RetryAfterSeconds => "retry-after-seconds",
            ClientKind::RetryAfterOnly => "retry-after-only",
            ClientKind::Courteous => "courteous",
        }
    }
}

/// What a client printed about its run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientReport {
    /// Example name.
    pub client: String,
    /// Requests put on the wire, retries included.
    pub sent: u64,
    /// 2xx responses.
    pub ok: u64,
    /// 429 and 503 responses.
    pub throttled: u64,
    /// Transport errors and other statuses.
    pub errors: u64,
    /// Wall time of the run.
    pub elapsed_ms: u64,
    /// The fleet store's calls (`polite --fleet-redis` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<FleetCalls>,
}

/// What one process's fleet store calls came to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FleetCalls {
    /// Calls made.
    pub calls: u64,
    /// Calls that missed their deadline (20 ms by default).
    pub missed_deadline: u64,
    /// Calls Redis refused or dropped.
    pub errors: u64,
}

impl ClientReport {
    /// Requests that did not succeed: `sent - ok`.
    pub fn wasted(&self) -> u64 {
        self.sent.saturating_sub(self.ok)
    }
}

/// The report in a client's stdout: its last non-empty line, as JSON.
pub fn parse_report(stdout: &str) -> Option<ClientReport> {
    let last = stdout.lines().rev().find(|l| !l.trim().is_empty())?;
    serde_json::from_str(last.trim()).ok()
}

/// One run of one client.
#[derive(Debug, Clone)]
pub struct ClientRun {
    /// URL to GET.
    pub url: String,
    /// Successes needed.
    pub successes: u64,
    /// Concurrent workers.
    pub concurrency: u64,
    /// `X-Client-Id`.
    pub client_id: String,
    /// More arguments (the herd's `--fleet-redis URL`).
    pub extra_args: Vec<String>,
}

/// Where the example binaries are and how to build them.
#[derive(Debug, Clone)]
pub struct Examples {
    workspace: PathBuf,
    target_dir: PathBuf,
}

impl Examples {
    /// The workspace this binary was built from, and its target directory:
    /// `CARGO_TARGET_DIR`, else the one holding this executable
    /// (`target/release/demo-server`), else `<workspace>/target`.
    pub fn locate() -> Self {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let target_dir = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .or_else(|| {
                let exe = std::env::current_exe().ok()?;
                let mut dir = exe.parent()?;
                if dir.file_name().is_some_and(|n| n == "deps") {
                    dir = dir.parent()?;
                }
                Some(dir.parent()?.to_path_buf())
            })
            .unwrap_or_else(|| workspace.join("target"));
        Self {
            workspace,
            target_dir,
        }
    }

    /// The target directory the examples are built into.
    pub fn target_dir(&self) -> &Path {
        &self.target_dir
    }

    /// Examples whose source exists in the workspace.
    pub fn sources(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = ClientKind::ALL.iter().map(|k| k.example()).collect();
        names.dedup();
        names
            .into_iter()
            .filter(|n| {
                self.workspace
                    .join("examples")
                    .join(format!("{n}.rs"))
                    .is_file()
            })
            .collect()
    }

    /// The release binary of `example`, if built.
    pub fn binary(&self, example: &str) -> Option<PathBuf> {
        let path = self
            .target_dir
            .join("release")
            .join("examples")
            .join(format!("{example}{}", std::env::consts::EXE_SUFFIX));
        path.is_file().then_some(path)
    }

    /// The build command line, for the progress message.
    pub fn build_command(&self, examples: &[&str]) -> (PathBuf, Vec<String>) {
        let cargo = std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from);
        let mut args = vec![
            "build".to_owned(),
            "--release".to_owned(),
            "--manifest-path".to_owned(),
            self.workspace.join("Cargo.toml").display().to_string(),
            "-p".to_owned(),
            "courteous".to_owned(),
            "--target-dir".to_owned(),
            self.target_dir.display().to_string(),
            // The herd's fleet rows run `polite --fleet-redis`.
            "--features".to_owned(),
            "redis".to_owned(),
        ];
        for example in examples {
            args.push("--example".to_owned());
            args.push((*example).to_owned());
        }
        (cargo, args)
    }

    /// Build `examples` in release mode (cargo's own output goes to stderr).
    pub async fn build(&self, examples: &[&str]) -> Result<(), CompareError> {
        let (cargo, args) = self.build_command(examples);
        let status = Command::new(&cargo)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit())
            .status()
            .await
            .map_err(|e| CompareError::build(format!("cannot run {}: {e}", cargo.display())))?;
        if !status.success() {
            return Err(CompareError::build(format!(
                "building the example clients failed ({status})"
            )));
        }
        Ok(())
    }
}

/// Run one client to completion (killed after [`CLIENT_TIMEOUT`]).
pub async fn run(
    binary: &Path,
    kind: ClientKind,
    run: &ClientRun,
) -> Result<ClientReport, CompareError> {
    let mut command = Command::new(binary);
    command
        .arg("--url")
        .arg(&run.url)
        .arg("--successes")
        .arg(run.successes.to_string())
        .arg("--concurrency")
        .arg(run.concurrency.to_string())
        .arg("--client-id")
        .arg(&run.client_id)
        .args(kind.extra_args())
        .args(&run.extra_args)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = command
        .spawn()
        .map_err(|e| CompareError::client(format!("cannot start {}: {e}", binary.display())))?;
    let output = tokio::time::timeout(CLIENT_TIMEOUT, child.wait_with_output())
        .await
        .map_err(|_| {
            CompareError::client(format!(
                "{} ({}) did not finish within {CLIENT_TIMEOUT:?}; killed",
                kind.example(),
                kind.label()
            ))
        })?
        .map_err(|e| CompareError::client(format!("{}: {e}", kind.example())))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    match parse_report(&stdout) {
        Some(report) if output.status.success() => Ok(report),
        _ => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
            Err(CompareError::client(format!(
                "{} ({}) exited with {} and no report; stderr ends: {}",
                kind.example(),
                kind.label(),
                output.status,
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            )))
        }
    }
}
