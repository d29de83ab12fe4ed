//! The rate-limit scenarios: one token bucket per dialect, and the verdicts.

use std::num::NonZeroU32;
use std::time::{Duration, Instant};

use courteous::testing::{Dialect, RetryAfterStyle, TokenBucket};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer};

use crate::cli::ClientKind;
use crate::support::{self, CommonArgs, Report};
use crate::{
    BARE_MAX_SENT, HINT_MAX_ELAPSED, HINT_MAX_SENT, RUN_MAX_REQUESTS, RUN_MAX_SECS, SUCCESSES,
};

/// A scenario's bucket configuration, boxed so custom ones can capture.
pub(crate) type BoxedShape = Box<dyn Fn(TokenBucket) -> TokenBucket>;

/// What a scenario must achieve.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target {
    /// At most 101 sent, within 4.2 s.
    Hint,
    /// No 429, and the hint target too.
    NoThrottle,
    /// At most 105 sent at concurrency 1, 108 at 4.
    Bare,
}

pub(crate) struct Scenario {
    pub(crate) name: &'static str,
    pub(crate) target: Target,
    pub(crate) shape: fn(TokenBucket) -> TokenBucket,
}

pub(crate) const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "Retry-After seconds",
        target: Target::Hint,
        shape: |b| b.retry_after(RetryAfterStyle::Seconds),
    },
    Scenario {
        name: "Retry-After date",
        target: Target::Hint,
        shape: |b| b.retry_after(RetryAfterStyle::HttpDate),
    },
    Scenario {
        name: "retry-after-ms",
        target: Target::Hint,
        shape: |b| b.retry_after(RetryAfterStyle::Millis),
    },
    Scenario {
        name: "problem+json ms",
        target: Target::Hint,
        shape: |b| b.retry_after(RetryAfterStyle::ProblemJsonMillis),
    },
    Scenario {
        name: "IETF -00..-04 fields",
        target: Target::Hint,
        shape: |b| b.dialect(Dialect::IetfSeparate),
    },
    Scenario {
        name: "IETF -00..-04 + policy in Limit",
        target: Target::NoThrottle,
        shape: |b| b.dialect(Dialect::IetfSeparateLimitPolicy),
    },
    Scenario {
        name: "IETF -05/-06 + policy",
        target: Target::NoThrottle,
        shape: |b| b.dialect(Dialect::IetfSeparateWithPolicy),
    },
    Scenario {
        name: "IETF -07 dictionary",
        target: Target::NoThrottle,
        shape: |b| b.dialect(Dialect::IetfDictionary),
    },
    Scenario {
        name: "IETF -08..-11 lists",
        target: Target::NoThrottle,
        shape: |b| b.dialect(Dialect::IetfList),
    },
    Scenario {
        name: "X-RateLimit epoch",
        target: Target::Hint,
        shape: |b| b.dialect(Dialect::XRateLimit),
    },
    Scenario {
        name: "X-RateLimit-Reset-After",
        target: Target::Hint,
        shape: |b| b.dialect(Dialect::XRateLimitResetAfter),
    },
    Scenario {
        name: "seed server (Limit/Remaining, RA, problem)",
        target: Target::Hint,
        shape: |b| {
            b.dialect(Dialect::IetfSeparate)
                .retry_after(RetryAfterStyle::Seconds)
                .retry_after(RetryAfterStyle::ProblemJsonMillis)
        },
    },
    Scenario {
        name: "demo-server --headers all",
        target: Target::NoThrottle,
        shape: |b| {
            b.dialect(Dialect::IetfSeparate)
                .dialect(Dialect::IetfList)
                .dialect(Dialect::XRateLimit)
                .retry_after(RetryAfterStyle::Seconds)
                .retry_after(RetryAfterStyle::ProblemJsonMillis)
        },
    },
    Scenario {
        name: "bare 429",
        target: Target::Bare,
        shape: |b| b.bare(),
    },
];

pub(crate) struct Row {
    /// Requests the server received.
    pub(crate) sent: u64,
    /// Requests the server rejected.
    pub(crate) throttled: u64,
    pub(crate) elapsed: Duration,
    /// What the client itself reported.
    pub(crate) report: Report,
}

pub(crate) async fn run(
    shape: &dyn Fn(TokenBucket) -> TokenBucket,
    concurrency: u64,
    kind: ClientKind,
) -> Result<Row, String> {
    let server = MockServer::builder()
        .disable_request_recording()
        .start()
        .await;
    let per_second = NonZeroU32::new(20).expect("non-zero");
    let bucket = shape(TokenBucket::per_second(per_second).burst(per_second));
    Mock::given(any())
        .respond_with(bucket.clone())
        .mount(&server)
        .await;
    let args = CommonArgs {
        url: server.uri(),
        successes: SUCCESSES,
        concurrency,
        client_id: None,
        max_requests: RUN_MAX_REQUESTS,
        max_secs: RUN_MAX_SECS,
        max_errors_in_a_row: crate::support::DEFAULT_MAX_ERRORS_IN_A_ROW,
    };
    let started = Instant::now();
    let report = run_client(kind, &args).await?;
    Ok(Row {
        sent: bucket.received(),
        throttled: bucket.rejected(),
        elapsed: started.elapsed(),
        report,
    })
}

pub(crate) async fn run_client(kind: ClientKind, args: &CommonArgs) -> Result<Report, String> {
    match kind {
        ClientKind::Polite => support::polite::run(args, true).await,
        ClientKind::RetryAfterOnly => support::polite::run(args, false).await,
        ClientKind::RetryAfterSeconds => support::clients::retry_after_seconds(args).await,
        ClientKind::FixedDelay => support::clients::fixed_delay(args).await,
        ClientKind::Naive => support::clients::naive(args).await,
    }
}

pub(crate) fn judge(target: Target, row: &Row, concurrency: u64) -> String {
    let mut misses = Vec::new();
    if row.report.ok < SUCCESSES {
        misses.push(format!("only {} ok", row.report.ok));
    }
    match target {
        Target::Hint | Target::NoThrottle => {
            if row.sent > HINT_MAX_SENT {
                misses.push(format!("sent {} > {HINT_MAX_SENT}", row.sent));
            }
            if row.elapsed > HINT_MAX_ELAPSED {
                misses.push(format!("{:.2} s > 4.2 s", row.elapsed.as_secs_f64()));
            }
            if matches!(target, Target::NoThrottle) && row.throttled > 0 {
                misses.push(format!("{} 429s > 0", row.throttled));
            }
        }
        Target::Bare => {
            let most = BARE_MAX_SENT
                .iter()
                .find(|(c, _)| *c >= concurrency)
                .map_or(SUCCESSES + concurrency * 2, |(_, most)| *most);
            if row.sent > most {
                misses.push(format!("sent {} > {most}", row.sent));
            }
        }
    }
    if misses.is_empty() {
        "ok".to_owned()
    } else {
        format!("MISS: {}", misses.join(", "))
    }
}
