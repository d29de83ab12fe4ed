//! The request loop every adapter shares: admit, send, learn, decide.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use super::{Core, body, classify};
use crate::engine::{
    Admit, Attempt, GiveUpMode, GiveUpReason, ResponseClass, ScopeHandle, Verdict,
};
use crate::error::{BoxError, Error};
use crate::hooks::{RetryEvent, WaitCause};
use crate::options::RequestOptions;
use crate::report::RetryReport;
use crate::signal::Signal;

/// Sends one attempt: the inner service, or the rest of a middleware chain.
pub(crate) trait Transport: Send {
    /// The inner error.
    type Error: Into<BoxError> + Send;

    /// Puts one request on the wire.
    fn send(
        &mut self,
        req: reqwest::Request,
    ) -> impl Future<Output = Result<reqwest::Response, Self::Error>> + Send;
}

pub(crate) fn now() -> std::time::Instant {
    Instant::now().into_std()
}

struct Progress {
    attempts: u32,
    waited: Duration,
    throttled: u32,
}

/// Where a request came from, which decides how it is copied for a retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Built by reqwest's `RequestBuilder`: its only extension is the
    /// timeout, so a body-less request is copied field by field.
    Builder,
    /// From anywhere (possibly an `http::Request` with extensions we cannot
    /// see): copied with `Request::try_clone`.
    Any,
}

/// Runs `req` through the engine until a response is returned or the engine
/// gives up.
///
/// `options` are the request's own, when the caller already has them (the
/// ready client's builder, the middleware's extensions); otherwise a request
/// from anywhere ([`Origin::Any`]) is looked at for them in its extensions.
///
/// The future is kept small, since callers move it and nest it in their own:
/// `req` is used where it was captured (an `async fn` would hold a second
/// copy of it), and the waits, which are rare, are boxed.
#[expect(
    clippy::manual_async_fn,
    reason = "an async fn would store `req` twice in its future"
)]
pub(crate) fn execute<'a, T: Transport>(
    core: &'a Core,
    transport: &'a mut T,
    mut req: reqwest::Request,
    origin: Origin,
    options: Option<Box<RequestOptions>>,
) -> impl Future<Output = Result<reqwest::Response, Error>> + Send + 'a {
    async move {
        let options = match (options, origin) {
            (Some(given), _) => Some(given),
            (None, Origin::Any) => RequestOptions::of(&mut req).map(Box::new),
            (None, Origin::Builder) => None,
        };
        let limit = |attempt: Attempt| match &options {
            Some(options) => options.limit(attempt),
            None => attempt,
        };
        let engine = &core.engine;
        let config = engine.config();
        let started = now();
        let chosen = options.as_deref().and_then(RequestOptions::get_scope);
        let handle = core.scope_of(&req, chosen, started);
        let scope = handle.scope();
        let retryable = classify::prepare(&mut req, core.settings.idempotency_keys);
        let mut at = started;
        #[cfg(feature = "redis")]
        let mut turn = crate::fleet::Turn::default();
        let mut progress = Progress {
            attempts: 0,
            waited: Duration::ZERO,
            throttled: 0,
        };
        loop {
            let ticket = loop {
                #[cfg(feature = "redis")]
                let admitted = match &core.settings.fleet {
                    Some(fleet) => {
                        // The longest wait this send accepts: a slot further
                        // away is not reserved (see `Reservation::TooFar`).
                        let attempt =
                            limit(Attempt::new(progress.attempts + 1, retryable, started));
                        let longest = attempt
                            .deadline(config)
                            .and_then(|deadline| started.checked_add(deadline))
                            .map_or(Duration::MAX, |end| end.saturating_duration_since(at))
                            .min(attempt.max_wait(config));
                        Box::pin(fleet.admit(engine, &handle, at, longest, &mut turn)).await
                    }
                    None => engine.admit_in(&handle, at),
                };
                #[cfg(not(feature = "redis"))]
                let admitted = engine.admit_in(&handle, at);
                match admitted {
                    Admit::Now(ticket) => break ticket,
                    Admit::After { wait, reason } => {
                        let attempt =
                            limit(Attempt::new(progress.attempts + 1, retryable, started));
                        let refused = if wait > attempt.max_wait(config) {
                            Some(GiveUpReason::WaitTooLong { wait })
                        } else if attempt.would_pass_deadline(config, at, wait) {
                            Some(GiveUpReason::Deadline { wait })
                        } else {
                            None
                        };
                        if let Some(reason) = refused {
                            tracing::debug!(%scope, ?reason, ?wait, "courteous: giving up before sending");
                            engine.record_give_up_in(&handle);
                            return Err(Error::gave_up(reason, progress.attempts));
                        }
                        tracing::debug!(%scope, ?reason, ?wait, "courteous: waiting before send");
                        notify(
                            core,
                            scope,
                            progress.attempts,
                            WaitCause::Admission(reason),
                            wait,
                            None,
                        );
                        Box::pin(wait_for_unit(core, &handle, wait, &mut progress)).await;
                        at = now();
                    }
                }
            };
            progress.attempts += 1;
            let attempt = limit(Attempt::new(progress.attempts, retryable, started));
            let backup = if retryable && progress.attempts < attempt.max_attempts(config) {
                match origin {
                    Origin::Builder => classify::replay_copy(&req),
                    Origin::Any => req.try_clone(),
                }
            } else {
                None
            };
            let result = transport.send(req).await;
            let received = now();
            // Decided in the match, slept after it: nothing of the answer
            // (response, signal, error) is held while waiting.
            let after = match result {
                Ok(resp) => {
                    let status = resp.status();
                    let classifier = core.settings.classifier.as_deref();
                    let may_retry = config.is_retry_status(status)
                        || classifier.is_some_and(|classifier| classifier.may_retry(status));
                    let (resp, signal, prefix) = if may_retry {
                        // Boxed: the slow path's state stays out of every request's future.
                        Box::pin(body::read_signal(resp, &core.settings.parser)).await
                    } else {
                        let signal = core.settings.parser.parse(status, resp.headers(), None);
                        (resp, signal, None)
                    };
                    let view = crate::classify::Response::new(
                        status,
                        resp.headers(),
                        &signal,
                        prefix.as_deref(),
                        config,
                    );
                    let class = match classifier {
                        Some(classifier) => classifier.classify(&view),
                        None => view.by_status(),
                    };
                    let hint = match class {
                        ResponseClass::Throttled { wait: Some(wait) } => Some(wait),
                        _ => signal.retry_after().map(|h| h.delay()),
                    };
                    if matches!(class, ResponseClass::Throttled { .. }) {
                        progress.throttled += 1;
                    }
                    let verdict =
                        engine.on_classified(ticket, received, status, class, &signal, &attempt);
                    #[cfg(feature = "redis")]
                    if let Some(fleet) = &core.settings.fleet {
                        let refused = matches!(class, ResponseClass::Throttled { .. });
                        let pause = match &verdict {
                            Verdict::Retry { after, .. } if refused => Some(*after),
                            _ => hint,
                        };
                        Box::pin(fleet.learn(&handle, &mut turn, refused, &signal, pause)).await;
                    }
                    match verdict {
                        Verdict::Return => return Ok(finish(resp, scope, &progress, signal, None)),
                        Verdict::Retry { after, reason } => match backup {
                            Some(next) => {
                                tracing::debug!(
                                    %scope,
                                    http.request.resend_count = progress.attempts,
                                    http.response.status_code = status.as_u16(),
                                    ?reason,
                                    ?after,
                                    ?signal,
                                    "courteous: retrying"
                                );
                                notify(
                                    core,
                                    scope,
                                    progress.attempts,
                                    WaitCause::Retry(reason),
                                    after,
                                    Some((status, &signal)),
                                );
                                req = next;
                                after
                            }
                            None => {
                                let reason = GiveUpReason::NotRetryable;
                                return give_up(
                                    config,
                                    resp,
                                    (reason, hint),
                                    scope,
                                    &progress,
                                    signal,
                                );
                            }
                        },
                        Verdict::GiveUp(reason) => {
                            return give_up(config, resp, (reason, hint), scope, &progress, signal);
                        }
                    }
                }
                Err(err) => {
                    let err: BoxError = err.into();
                    let transient = classify::is_transient(&*err);
                    let verdict = engine.on_transport_error(ticket, received, transient, &attempt);
                    #[cfg(feature = "redis")]
                    if let Some(fleet) = &core.settings.fleet {
                        Box::pin(fleet.abandon(&handle, &mut turn)).await;
                    }
                    match (verdict, backup) {
                        (Verdict::Retry { after, reason }, Some(next)) => {
                            tracing::debug!(
                                %scope,
                                http.request.resend_count = progress.attempts,
                                ?reason,
                                ?after,
                                error = %err,
                                "courteous: retrying"
                            );
                            notify(
                                core,
                                scope,
                                progress.attempts,
                                WaitCause::Retry(reason),
                                after,
                                None,
                            );
                            req = next;
                            after
                        }
                        (verdict, _) => {
                            tracing::debug!(%scope, attempt = progress.attempts, ?verdict, error = %err, "courteous: returning the error");
                            return Err(Error::request(err, progress.attempts));
                        }
                    }
                }
            };
            Box::pin(sleep(core, &handle, after, &mut progress)).await;
            at = now();
        }
    }
}

/// Stops on a response that was not final: in [`GiveUpMode::Error`] (the
/// default) an error carrying it, whatever the reason (a POST without an
/// idempotency key refused with 429 included), so `?` never takes a refusal
/// for a success; in [`GiveUpMode::Response`] the response itself.
fn give_up(
    config: &crate::engine::Config,
    mut resp: reqwest::Response,
    (reason, hint): (GiveUpReason, Option<Duration>),
    scope: &crate::engine::Scope,
    progress: &Progress,
    signal: Signal,
) -> Result<reqwest::Response, Error> {
    tracing::debug!(
        %scope,
        attempt = progress.attempts,
        http.response.status_code = resp.status().as_u16(),
        ?reason,
        ?signal,
        "courteous: giving up"
    );
    resp.extensions_mut()
        .insert(report(scope, progress, signal, Some(reason)));
    match config.give_up {
        GiveUpMode::Response => Ok(resp),
        _ => Err(Error::gave_up(reason, progress.attempts)
            .with_retry_after(hint)
            .with_response(resp)),
    }
}

/// Tells the `on_retry` hook, if any, of a wait before `attempt + 1`;
/// `answer`: the response that caused it, if one did.
fn notify(
    core: &Core,
    scope: &crate::engine::Scope,
    attempt: u32,
    cause: WaitCause,
    wait: Duration,
    answer: Option<(http::StatusCode, &Signal)>,
) {
    if let Some(hook) = &core.settings.on_retry {
        hook(&RetryEvent {
            scope,
            attempt,
            cause,
            wait,
            status: answer.map(|(status, _)| status),
            signal: answer.map(|(_, signal)| signal),
        });
    }
}

/// Waits before a send: `wait`, or less when a response makes a send
/// possible sooner (the engine's estimate is a bound; a reading that says
/// a window opened early is news). The caller asks the engine again.
async fn wait_for_unit(core: &Core, handle: &ScopeHandle, wait: Duration, progress: &mut Progress) {
    // Woken only by a response after this point (one in between sleeps the
    // whole wait, as without waking): never a busy loop, whatever the
    // engine answers next.
    sleep_until(core, handle, wait, progress, handle.ready()).await;
}

/// Waits `wait` after a refusal or an error: nothing cuts it short.
async fn sleep(core: &Core, handle: &ScopeHandle, wait: Duration, progress: &mut Progress) {
    sleep_until(core, handle, wait, progress, std::future::pending()).await;
}

/// Waits `wait`, or until `early` completes, and records the time waited.
async fn sleep_until(
    core: &Core,
    handle: &ScopeHandle,
    wait: Duration,
    progress: &mut Progress,
    early: impl Future<Output = ()>,
) {
    if wait.is_zero() {
        return;
    }
    let started = Instant::now();
    let _ = tokio::time::timeout(wait, early).await;
    let waited = started.elapsed().min(wait);
    progress.waited = progress.waited.saturating_add(waited);
    core.engine.record_wait_in(handle, waited);
}

fn report(
    scope: &crate::engine::Scope,
    progress: &Progress,
    signal: Signal,
    gave_up: Option<GiveUpReason>,
) -> RetryReport {
    RetryReport {
        scope: scope.clone(),
        attempts: progress.attempts,
        waited: progress.waited,
        throttled: progress.throttled,
        last_signal: signal,
        gave_up,
    }
}

fn finish(
    mut resp: reqwest::Response,
    scope: &crate::engine::Scope,
    progress: &Progress,
    signal: Signal,
    gave_up: Option<GiveUpReason>,
) -> reqwest::Response {
    resp.extensions_mut()
        .insert(report(scope, progress, signal, gave_up));
    resp
}
