//! The plain-reqwest example clients, as functions the must-show harness
//! can run in-process exactly as the examples run them.

use std::time::Duration;

use super::{CommonArgs, Outcome, Report};

/// The fixed pause after a throttled response (the original experiment's experiment).
pub const PAUSE_AFTER_THROTTLE: Duration = Duration::from_millis(50);

/// Resend at once after every 429 or 503.
pub async fn naive(args: &CommonArgs) -> Result<Report, String> {
    plain(args, "naive", None).await
}

/// Wait [`PAUSE_AFTER_THROTTLE`] after every 429 or 503, read nothing else.
pub async fn fixed_delay(args: &CommonArgs) -> Result<Report, String> {
    plain(args, "fixed_delay", Some(PAUSE_AFTER_THROTTLE)).await
}

/// When a throttled response carries no usable `Retry-After`, the
/// "Retry-After seconds" client waits this long: the smallest wait the
/// header can state other than zero.
pub const PAUSE_WITHOUT_HINT: Duration = Duration::from_secs(1);

/// The seed's "honour Retry-After" client: after a 429 or 503, sleep the
/// whole seconds `Retry-After` says (an integer; `0` resends at once), or
/// [`PAUSE_WITHOUT_HINT`] without one. Reads nothing else (no dates, no
/// milliseconds, no quota fields).
pub async fn retry_after_seconds(args: &CommonArgs) -> Result<Report, String> {
    let client = args.http_client()?;
    let url = args.url.clone();
    let tally = super::drive(args, move || {
        let request = client.get(&url);
        async move {
            let Ok(response) = request.send().await else {
                return Outcome::Error;
            };
            let outcome = super::classify(response.status());
            let pause = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map_or(PAUSE_WITHOUT_HINT, Duration::from_secs);
            let _ = response.bytes().await;
            if outcome == Outcome::Throttled {
                tokio::time::sleep(pause).await;
            }
            outcome
        }
    })
    .await;
    Ok(Report::from_tally("retry_after_seconds", &tally))
}

async fn plain(args: &CommonArgs, name: &str, pause: Option<Duration>) -> Result<Report, String> {
    let client = args.http_client()?;
    let url = args.url.clone();
    let tally = super::drive(args, move || {
        let request = client.get(&url);
        async move {
            let outcome = match request.send().await {
                Ok(response) => {
                    let outcome = super::classify(response.status());
                    // Read the body so the connection goes back to the pool.
                    let _ = response.bytes().await;
                    outcome
                }
                Err(_) => Outcome::Error,
            };
            if let (Outcome::Throttled, Some(pause)) = (outcome, pause) {
                tokio::time::sleep(pause).await;
            }
            outcome
        }
    })
    .await;
    Ok(Report::from_tally(name, &tally))
}
