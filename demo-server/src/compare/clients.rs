//! The example clients as child processes: `demo-server client NAME …` (this
//! same executable, see [`crate::example_clients`]), run with the
//! comparison's arguments; the JSON report it prints as its last line is read.
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

    /// The example it runs (`examples/<name>.rs`).
    pub fn example(self) -> &'static str {
        match self {
            ClientKind::Naive => "naive",
            ClientKind::FixedDelay => "fixed_delay",
            ClientKind::RetryAfterSeconds => "retry_after_seconds",
            ClientKind::RetryAfterOnly | ClientKind::Courteous => "polite",
        }
    }

    /// Its name for `demo-server client`.
    pub fn subcommand(self) -> &'static str {
        match self {
            ClientKind::Naive => "naive",
            ClientKind::FixedDelay => "fixed-delay",
            ClientKind::RetryAfterSeconds => "retry-after-seconds",
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

/// The executable that runs the clients (`PROGRAM client NAME …`), and
/// where the comparison writes its timeline by default.
#[derive(Debug, Clone)]
pub struct ClientProgram {
    program: PathBuf,
    target_dir: PathBuf,
}

impl ClientProgram {
    /// This executable (`target/release/demo-server`): no build step. The
    /// target directory is `CARGO_TARGET_DIR`, else the one holding this
    /// executable, else `<workspace>/target`.
    pub fn this_executable() -> Result<Self, CompareError> {
        let program = std::env::current_exe()
            .map_err(|e| CompareError::setup(format!("cannot locate this executable: {e}")))?;
        Ok(Self::at(program))
    }

    /// The `demo-server` executable at `program` (tests pass
    /// `env!("CARGO_BIN_EXE_demo-server")`).
    pub fn at(program: PathBuf) -> Self {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let target_dir = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .or_else(|| {
                let mut dir = program.parent()?;
                if dir.file_name().is_some_and(|n| n == "deps") {
                    dir = dir.parent()?;
                }
                Some(dir.parent()?.to_path_buf())
            })
            .unwrap_or_else(|| workspace.join("target"));
        Self {
            program,
            target_dir,
        }
    }

    /// The target directory the timeline goes to by default.
    pub fn target_dir(&self) -> &Path {
        &self.target_dir
    }

    /// The executable.
    pub fn program(&self) -> &Path {
        &self.program
    }
}

/// [`run`], as a row keeps it: the report, or why there is none.
pub async fn try_run(
    program: &ClientProgram,
    kind: ClientKind,
    run_args: &ClientRun,
) -> (Option<ClientReport>, Option<String>) {
    match run(program, kind, run_args).await {
        Ok(report) => (Some(report), None),
        Err(e) => (None, Some(e.to_string())),
    }
}

/// Run one client to completion (killed after [`CLIENT_TIMEOUT`]).
pub async fn run(
    program: &ClientProgram,
    kind: ClientKind,
    run: &ClientRun,
) -> Result<ClientReport, CompareError> {
    let mut command = Command::new(program.program());
    command
        .arg("client")
        .arg(kind.subcommand())
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
    let child = command.spawn().map_err(|e| {
        CompareError::client(format!("cannot start {}: {e}", program.program().display()))
    })?;
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
