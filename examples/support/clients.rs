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
