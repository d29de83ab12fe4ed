//! The request loop every adapter shares: admit, send, learn, decide.

use std::error::Error as StdError;
use std::future::Future;
use std::pin::pin;
use std::time::Duration;

use http::Method;
use reqwest::Url;
use tokio::time::Instant;

use super::within::within;
use super::{Core, body, classify, log};
use crate::engine::{
    Admit, Attempt, GiveUpMode, GiveUpReason, ResponseClass, ScopeHandle, Verdict, WaitReason,
};
use crate::error::{BoxError, Detail, Error, NotRetryable, Refused, Waiter};
use crate::hooks::{WaitCause, WaitEvent};
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
    /// The last attempt was answered by a 503 without any hint
    /// ([`classify::bare_503`]).
    bare_503: bool,
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
        let method = req.method().clone();
        let chosen = options.as_deref().and_then(RequestOptions::get_scope);
        let costs = options
            .as_deref()
            .map_or(&[][..], RequestOptions::get_costs);
        let handle = core.scope_of(&req, chosen, started);
        let scope = handle.scope();
        let replay = classify::prepare(&mut req, core.settings.idempotency_keys);
        let retryable = replay.is_ok();
        // The deadline bounds everything from here: waits are refused when
        // they would pass it, and an attempt still out when it passes is
        // cancelled (its timer is made only if an attempt has to wait).
        let deadline = limit(Attempt::new(1, retryable, started)).deadline(config);
        let deadline_at = deadline.and_then(|d| Instant::from_std(started).checked_add(d));
        let mut timer = None;
        // Every error the request ends with goes through here.
        let fail = |err: Error, url: Option<Url>| {
            let err = err
                .with_target(method.clone(), url)
                .with_elapsed(now().saturating_duration_since(started));
            log::gave_up(scope, &err);
            err
        };
        let mut at = started;
        #[cfg(feature = "redis")]
        let mut turn = crate::fleet::Turn::default();
        let mut progress = Progress {
            attempts: 0,
            waited: Duration::ZERO,
            throttled: 0,
            bare_503: false,
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
                        Box::pin(fleet.admit(engine, &handle, at, longest, &mut turn, costs)).await
                    }
                    None => engine.admit_in(&handle, at, costs),
                };
                #[cfg(not(feature = "redis"))]
                let admitted = engine.admit_in(&handle, at, costs);
                match admitted {
                    Admit::Now(ticket) => break ticket,
                    Admit::After { wait, reason } => {
                        let attempt =
                            limit(Attempt::new(progress.attempts + 1, retryable, started));
                        let refused = if wait > attempt.max_wait(config) {
                            Some((
                                GiveUpReason::WaitTooLong { wait },
                                Some(attempt.max_wait(config)),
                            ))
                        } else if attempt.would_pass_deadline(config, at, wait) {
                            Some((GiveUpReason::Deadline { wait }, attempt.deadline(config)))
                        } else {
                            None
                        };
                        if let Some((why, limit)) = refused {
                            engine.record_give_up_in(&handle);
                            let waiter = match reason {
                                WaitReason::Pacing => Waiter::Quota,
                                _ => Waiter::Pause,
                            };
                            let detail = Detail {
                                waiter: Some(waiter),
                                limit,
                                not_retryable: None,
                            };
                            let err = Error::gave_up(why, progress.attempts).with_detail(detail);
                            return Err(fail(err, Some(req.url().clone())));
                        }
                        let event = WaitEvent {
                            scope,
                            attempt: progress.attempts,
                            cause: WaitCause::Admission(reason),
                            wait,
                            status: None,
                            signal: None,
                        };
                        announce(core, &event, &method, req.url(), None);
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
            // Kept for the error's message when no copy is.
            let url = backup.is_none().then(|| req.url().clone());
            let target = |backup: &Option<reqwest::Request>| {
                backup
                    .as_ref()
                    .map(|next| next.url().clone())
                    .or(url.clone())
            };
            let Some(result) = within(deadline_at, &mut timer, pin!(transport.send(req))).await
            else {
                return Err(cut(
                    core,
                    &handle,
                    deadline,
                    &progress,
                    fail,
                    target(&backup),
                ));
            };
            let received = now();
            // Decided in the match, slept after it: nothing of the answer
            // (response, signal, error) is held while waiting.
            let after = match result {
                Ok(resp) => {
                    let status = resp.status();
                    let classifier = core.settings.classifier.as_deref();
                    let may_retry = config.is_retry_status(status)
                        || classifier.is_some_and(|classifier| classifier.may_retry(status));
                    let parser = &core.settings.parser;
                    // A success is read only for its `usage`, when the
                    // parser is told to (`SignalParser::read_usage`).
                    let usage = !may_retry && parser.wants_body(status, resp.headers());
                    let (resp, signal, prefix) = if may_retry || usage {
                        // Boxed: the slow path's state stays out of every request's future.
                        let mut read = Box::pin(body::read_signal(resp, parser));
                        match within(deadline_at, &mut timer, read.as_mut()).await {
                            // A success body is no hint: the classifier
                            // sees none.
                            Some((resp, signal, prefix)) => {
                                (resp, signal, prefix.filter(|_| may_retry))
                            }
                            None => {
                                let url = target(&backup);
                                return Err(cut(core, &handle, deadline, &progress, fail, url));
                            }
                        }
                    } else {
                        let signal = parser.parse(status, resp.headers(), None);
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
                        None => {
                            let previous = progress.bare_503;
                            classify::bare_503(view.by_status(), status, &signal, previous)
                        }
                    };
                    progress.bare_503 =
                        status == http::StatusCode::SERVICE_UNAVAILABLE && signal.is_empty();
                    let hint = match class {
                        ResponseClass::Throttled { wait: Some(wait) } => Some(wait),
                        _ => signal.retry_after().map(|h| h.delay()),
                    };
                    if matches!(class, ResponseClass::Throttled { .. }) {
                        progress.throttled += 1;
                    }
                    // Who set a wait the engine may refuse: the server's
                    // hint, the scope's pause after a refusal, the backoff.
                    let waiter = |wait: Duration| match class {
                        _ if hint == Some(wait) => Waiter::ServerHint,
                        ResponseClass::Throttled { .. } => Waiter::Pause,
                        _ => Waiter::Backoff,
                    };
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
                    match (verdict, backup) {
                        (Verdict::Return, _) => {
                            return Ok(finish(resp, scope, &progress, signal, None));
                        }
                        (Verdict::Retry { after, reason }, Some(next)) => {
                            let event = WaitEvent {
                                scope,
                                attempt: progress.attempts,
                                cause: WaitCause::Retry(reason),
                                wait: after,
                                status: Some(status),
                                signal: Some(&signal),
                            };
                            announce(core, &event, &method, resp.url(), None);
                            req = next;
                            after
                        }
                        // A retry without a copy to send: not repeatable.
                        (verdict, _) => {
                            let reason = stop_reason(verdict);
                            let detail = detail(reason, &attempt, config, replay, waiter);
                            let refused = (reason == GiveUpReason::Refused)
                                .then(|| Refused::read(&signal, prefix.as_deref()));
                            let outcome = Outcome {
                                scope,
                                method: &method,
                                progress: &progress,
                                signal,
                                refused,
                            };
                            return give_up(config, resp, (reason, hint, detail), outcome)
                                .map_err(|err| fail(err, None));
                        }
                    }
                }
                Err(err) => {
                    progress.bare_503 = false;
                    let err: BoxError = err.into();
                    let transient = classify::is_transient(&*err);
                    let verdict = engine.on_transport_error(ticket, received, transient, &attempt);
                    #[cfg(feature = "redis")]
                    if let Some(fleet) = &core.settings.fleet {
                        Box::pin(fleet.abandon(&handle, &mut turn)).await;
                    }
                    match (verdict, backup) {
                        (Verdict::Retry { after, reason }, Some(next)) => {
                            let event = WaitEvent {
                                scope,
                                attempt: progress.attempts,
                                cause: WaitCause::Retry(reason),
                                wait: after,
                                status: None,
                                signal: None,
                            };
                            announce(core, &event, &method, next.url(), Some(&*err));
                            req = next;
                            after
                        }
                        (verdict, backup) => {
                            let reason = stop_reason(verdict);
                            let replay = if transient {
                                replay
                            } else {
                                Err(NotRetryable::Error)
                            };
                            let detail =
                                detail(reason, &attempt, config, replay, |_| Waiter::Backoff);
                            let err = Error::request(err, progress.attempts)
                                .with_reason(Some(reason))
                                .with_detail(detail);
                            return Err(fail(err, target(&backup)));
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
/// idempotency key refused with 429 included, a refusal for good), so `?`
/// never takes a refusal for a success; in [`GiveUpMode::Response`] the
/// response itself.
fn give_up(
    config: &crate::engine::Config,
    mut resp: reqwest::Response,
    (reason, hint, detail): (GiveUpReason, Option<Duration>, Detail),
    Outcome {
        scope,
        method,
        progress,
        signal,
        refused,
    }: Outcome<'_>,
) -> Result<reqwest::Response, Error> {
    resp.extensions_mut()
        .insert(report(scope, progress, signal, Some(reason)));
    match config.give_up {
        GiveUpMode::Response => {
            let (status, attempts) = (resp.status(), progress.attempts);
            log::gave_up_with_response(scope, method, resp.url(), status, attempts, reason);
            Ok(resp)
        }
        _ => Err(Error::gave_up(reason, progress.attempts)
            .with_retry_after(hint)
            .with_detail(detail)
            .with_refused(refused)
            .with_response(resp)),
    }
}

/// What a request ends with besides its response: its scope, what it
/// took, the last signal.
struct Outcome<'a> {
    scope: &'a crate::engine::Scope,
    method: &'a Method,
    progress: &'a Progress,
    signal: Signal,
    /// What the server said, when it refused for good.
    refused: Option<Refused>,
}

/// Why a request stops on `verdict`: the engine's reason, or, for a retry
/// without a copy to send, that it may not be repeated.
fn stop_reason(verdict: Verdict) -> GiveUpReason {
    match verdict {
        Verdict::GiveUp(reason) => reason,
        _ => GiveUpReason::NotRetryable,
    }
}

/// What the message of a give-up for `reason` says besides it: who set
/// the refused wait (`waiter`), the limit it passed, why the request may
/// not be repeated (`replay`).
fn detail(
    reason: GiveUpReason,
    attempt: &Attempt,
    config: &crate::engine::Config,
    replay: Result<(), NotRetryable>,
    waiter: impl Fn(Duration) -> Waiter,
) -> Detail {
    match reason {
        GiveUpReason::WaitTooLong { wait } => Detail {
            waiter: Some(waiter(wait)),
            limit: Some(attempt.max_wait(config)),
            not_retryable: None,
        },
        GiveUpReason::Deadline { wait } => Detail {
            waiter: Some(waiter(wait)),
            limit: attempt.deadline(config),
            not_retryable: None,
        },
        GiveUpReason::NotRetryable => Detail {
            // A request that may be repeated but had no copy left: its body
            // could not be copied.
            not_retryable: Some(replay.err().unwrap_or(NotRetryable::Body)),
            ..Detail::default()
        },
        _ => Detail::default(),
    }
}

/// The error of a request whose deadline passed during an attempt (which
/// its caller dropped, cancelling it), counted as a give-up of its scope.
fn cut(
    core: &Core,
    handle: &ScopeHandle,
    deadline: Option<Duration>,
    progress: &Progress,
    fail: impl FnOnce(Error, Option<Url>) -> Error,
    url: Option<Url>,
) -> Error {
    core.engine.record_give_up_after_send_in(handle);
    let limit = deadline.unwrap_or(Duration::MAX);
    fail(Error::deadline(limit, progress.attempts), url)
}

/// Tells the log and the hooks of a wait before attempt `event.attempt + 1`:
/// `on_wait` of every wait, `on_retry` of those before a resend. `url`: the
/// request's; `error`: the failed attempt's, if it failed without a response.
fn announce(
    core: &Core,
    event: &WaitEvent<'_>,
    method: &Method,
    url: &Url,
    error: Option<&(dyn StdError + 'static)>,
) {
    log::waiting(event, method, url, error);
    if let Some(hook) = &core.settings.on_wait {
        hook(event);
    }
    if event.is_retry()
        && let Some(hook) = &core.settings.on_retry
    {
        hook(event);
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
