//! Fixed windows of 20 per second with IETF policy fields, simulated
//! (`sim::Dialect::PolicyWindow`): the pacer recognises the window from its
//! one refusal, then sends each window's first request when the readings
//! say the previous one is over, without cutting its share as if others
//! spent the quota.

use std::time::Duration;

use super::sim::{Dialect, run};
use crate::engine::Config;

/// A window opened by the client's first request: one refusal tells a
/// window from a bucket, then 100 successes in about the floor (4 windows
/// after the first). The refusal's `Retry-After: 1` is rounded up, but the
/// window's readings guarantee its end sooner: the scope resumes then, and
/// only the refused request waits its hint (before: the whole scope waited
/// it, 4.24 s median and 4.37 s at most over 32 seeds at c=4; now 4.01 s).
/// At c=4 a window's last units can be raced for by sends in flight: at
/// most one refused per worker, the issue's `N + C`.
#[test]
fn simulated_window_opened_by_the_first_request_is_met_at_its_boundaries() {
    for concurrency in [1, 4] {
        for seed in 0..8 {
            let dialect = Dialect::PolicyWindow {
                first_request: true,
                phase_ms: 0,
            };
            let out = run(dialect, Config::default().rng_seed(seed), concurrency, 100);
            let case = format!("c={concurrency} seed {seed}: {out:?}");
            assert!(out.sent <= 100 + concurrency as u64, "{case}");
            assert_eq!(out.errors, 0, "{case}");
            assert!(out.elapsed <= Duration::from_millis(4100), "{case}");
        }
    }
}

/// A clock-aligned window whose whole-second reset says nothing of its
/// phase: one refusal per worker at most, and the windows met at the ends
/// their readings guarantee (before: up to 5.31 s over 32 seeds at c=4,
/// 4.24 s median; now 4.06 s at most).
#[test]
fn simulated_aligned_window_costs_one_refusal() {
    for phase_ms in [0, 300, 700, 990] {
        for concurrency in [1, 4] {
            for seed in 0..8 {
                let dialect = Dialect::PolicyWindow {
                    first_request: false,
                    phase_ms,
                };
                let out = run(dialect, Config::default().rng_seed(seed), concurrency, 100);
                let case = format!("phase {phase_ms} ms, c={concurrency} seed {seed}: {out:?}");
                assert!(out.sent <= 100 + concurrency as u64, "{case}");
                assert_eq!(out.errors, 0, "{case}");
                assert!(out.elapsed <= Duration::from_millis(4100), "{case}");
            }
        }
    }
}

/// Every dialect in `dialects`, at c=1 and 4, over 4 seeds: no error, at
/// most one wasted request per worker, 100 successes within `max_ms`.
fn learned_within(dialects: impl IntoIterator<Item = Dialect>, max_ms: u64) {
    for dialect in dialects {
        for concurrency in [1, 4] {
            for seed in 0..4 {
                let out = run(dialect, Config::default().rng_seed(seed), concurrency, 100);
                let case = format!("{dialect:?} c={concurrency} seed {seed}: {out:?}");
                assert_eq!(out.errors, 0, "{case}");
                assert!(out.sent <= 100 + concurrency as u64, "{case}");
                assert!(out.elapsed <= Duration::from_millis(max_ms), "{case}");
            }
        }
    }
}

fn hint_windows(hint: bool) -> impl Iterator<Item = Dialect> {
    [true, false]
        .map(|first_request| Dialect::HintWindow {
            first_request,
            hint,
            phase_ms: 300,
        })
        .into_iter()
}

/// Windows with `Retry-After` only (whole seconds): the first refusal
/// ends a burst, the success after its hint confirms a window of about the
/// hint's length; from then on the client spends the burst and waits for
/// the window's end: one refusal at c=1, at most C at c=4, and each window
/// met a round trip after its boundary (4 whole windows after the first,
/// plus the hint's rounding and jitter).
#[test]
fn simulated_windows_with_retry_after_only_are_learned() {
    learned_within(hint_windows(true), 4300);
}

/// Bare 429s on a window: the first refusal waits the unhinted second
/// (exactly), the success after it bounds the window's length, and the
/// windows after it are met at their boundary without a refusal.
#[test]
fn simulated_windows_with_bare_refusals_are_learned() {
    learned_within(hint_windows(false), 4300);
}

/// A sliding log (each unit back one second after the send that spent it)
/// with whole-second hints or bare 429s: the learned cycle paces each burst
/// in the spacing of the one before, so no send runs into a unit not yet
/// back.
#[test]
fn simulated_sliding_log_without_quota_fields_is_learned() {
    learned_within([true, false].map(|hint| Dialect::SlidingLog { hint }), 4300);
}
