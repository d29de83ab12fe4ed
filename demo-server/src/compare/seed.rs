//! What the original experiment measured (docs/background.md), shown next to our
//! figures. Go 1.23, go-redis v9, Redis 7 over a container network.

use crate::Algorithm;

use super::clients::ClientKind;

/// Experiment 1: admitted of 50 over three runs.
pub fn race(algorithm: Algorithm) -> Option<&'static str> {
    match algorithm {
        Algorithm::RacyBucket => Some("20/50, 50/50, 50/50"),
        Algorithm::TokenBucket => Some("20/50, 20/50, 20/50"),
        _ => None,
    }
}

/// Experiment 2 (100 per 10 s, bursts at 9.5 s and 10.1 s): admitted.
pub fn edge(algorithm: Algorithm) -> Option<&'static str> {
    match algorithm {
        Algorithm::FixedWindow => Some("200 in 0.6 s"),
        Algorithm::SlidingLog => Some("100"),
        _ => None,
    }
}

/// Experiment 3 at concurrency 1: (sent, elapsed in seconds).
pub fn waste(kind: ClientKind) -> Option<(u64, f64)> {
    match kind {
        ClientKind::Naive => Some((52_853, 4.00)),
        ClientKind::FixedDelay => Some((175, 4.05)),
        ClientKind::RetryAfterSeconds => Some((104, 4.04)),
        ClientKind::RetryAfterOnly => None,
        ClientKind::Courteous => None,
    }
}

/// Experiment 5: (p50 µs, p99 µs) of one check.
pub fn cost(algorithm: Algorithm) -> Option<(f64, f64)> {
    match algorithm {
        Algorithm::TokenBucket => Some((43.0, 92.0)),
        Algorithm::FixedWindow => Some((77.0, 97.0)),
        Algorithm::SlidingLog => Some((41.0, 50.0)),
        _ => None,
    }
}
