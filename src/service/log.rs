//! What the request loop logs, under which target; the crate docs'
//! "Logging" section lists them. Field names are OpenTelemetry's HTTP
//! client conventions where one exists (`http.request.method`, `url.full`
//! with credentials redacted, `http.response.status_code`,
//! `http.request.resend_count`, `error.type`), else `courteous.*`.

use std::time::Duration;

use http::{Method, StatusCode};
use reqwest::Url;

use crate::engine::{GiveUpReason, Scope};
use crate::error::{Error, Redacted, innermost};
use crate::hooks::WaitEvent;

/// The engine's decisions: waits before a send (pacing, a paused scope).
pub(crate) const ENGINE: &str = "courteous::engine";
/// The request loop: resends, give-ups.
pub(crate) const SERVICE: &str = "courteous::service";

/// Whole milliseconds, for a field.
fn ms(wait: Duration) -> u64 {
    u64::try_from(wait.as_millis()).unwrap_or(u64::MAX)
}

/// A wait: before a send (DEBUG, [`ENGINE`]), or before a resend (DEBUG,
/// [`SERVICE`]), with the error of the attempt that failed, if any.
pub(super) fn waiting(
    event: &WaitEvent<'_>,
    method: &Method,
    url: &Url,
    error: Option<&(dyn std::error::Error + 'static)>,
) {
    if event.is_retry() {
        tracing::debug!(
            target: SERVICE,
            {
                courteous.scope = %event.scope(),
                http.request.method = %method,
                url.full = %Redacted(url),
                http.request.resend_count = event.attempt(),
                http.response.status_code = event.status().map(|s| s.as_u16()),
                courteous.cause = ?event.cause(),
                courteous.wait_ms = ms(event.wait()),
                error.message = error.map(|e| tracing::field::display(innermost(e))),
            },
            "courteous: retrying"
        );
    } else {
        tracing::debug!(
            target: ENGINE,
            {
                courteous.scope = %event.scope(),
                http.request.method = %method,
                url.full = %Redacted(url),
                courteous.attempts = event.attempt(),
                courteous.cause = ?event.cause(),
                courteous.wait_ms = ms(event.wait()),
            },
            "courteous: waiting before send"
        );
    }
}

/// A request that ends in an error after the engine stopped (WARN).
pub(super) fn gave_up(scope: &Scope, err: &Error) {
    tracing::warn!(
        target: SERVICE,
        {
            courteous.scope = %scope,
            http.request.method = err.method().map(tracing::field::display),
            url.full = err.url().map(|url| tracing::field::display(Redacted(url))),
            http.response.status_code = err.status().map(|s| s.as_u16()),
            courteous.attempts = err.attempts(),
            error.type = error_type(err),
            error.message = %err,
        },
        "courteous: gave up"
    );
}

/// A request that ends with a response the engine gave up on, in
/// [`GiveUpMode::Response`](crate::GiveUpMode::Response) (WARN).
pub(super) fn gave_up_with_response(
    scope: &Scope,
    method: &Method,
    url: &Url,
    status: StatusCode,
    attempts: u32,
    reason: GiveUpReason,
) {
    tracing::warn!(
        target: SERVICE,
        {
            courteous.scope = %scope,
            http.request.method = %method,
            url.full = %Redacted(url),
            http.response.status_code = status.as_u16(),
            courteous.attempts = attempts,
            error.type = reason_type(reason),
        },
        "courteous: gave up; the response is returned"
    );
}

/// A low-cardinality name of what ended the request (`error.type`).
fn error_type(err: &Error) -> &'static str {
    if err.is_deadline() && !err.is_rate_limited() && !err.is_request() {
        "deadline"
    } else if let Some(reason) = err.reason() {
        reason_type(reason)
    } else if err.is_connect() {
        "connect"
    } else if err.is_timeout() {
        "timeout"
    } else {
        "request"
    }
}

fn reason_type(reason: GiveUpReason) -> &'static str {
    match reason {
        GiveUpReason::NotRetryable => "not_retryable",
        GiveUpReason::AttemptsExhausted => "attempts_exhausted",
        GiveUpReason::BudgetExhausted => "budget_exhausted",
        GiveUpReason::WaitTooLong { .. } => "wait_too_long",
        GiveUpReason::Deadline { .. } => "deadline",
        GiveUpReason::Refused => "refused",
    }
}
