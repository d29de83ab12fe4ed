//! The request loop every adapter shares: admit, send, learn, decide.

use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::task::Poll;
use std::time::Duration;

use tokio::time::{Instant, Sleep};

use super::{Core, body, classify};
use crate::engine::{
    Admit, Attempt, GiveUpMode, GiveUpReason, ResponseClass, ScopeHandle, Verdict, WaitReason,
};
use crate::error::{BoxError, Detail, Error, NotRetryable, Waiter};
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
        let method = req.method().clone();
        let chosen = options.as_deref().and_then(RequestOptions::get_scope);
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
        let fail = |err: Error, url: Option<reqwest::Url>| {
            err.with_target(method.clone(), url)
                .with_elapsed(now().saturating_duration_since(started))
        };
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
                            tracing::debug!(%scope, reason = ?why, ?wait, "courteous: giving up before sending");
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
                    let (resp, signal, prefix) = if may_retry {
                        // Boxed: the slow path's state stays out of every request's future.
                        let mut read = Box::pin(body::read_signal(resp, &core.settings.parser));
                        match within(deadline_at, &mut timer, read.as_mut()).await {
                            Some(read) => read,
                            None => {
                                let url = target(&backup);
                                return Err(cut(core, &handle, deadline, &progress, fail, url));
                            }
                        }
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
                                let detail = detail(reason, &attempt, config, replay, waiter);
                                let outcome = Outcome::new(scope, &progress, signal);
                                return give_up(config, resp, (reason, hint, detail), outcome)
                                    .map_err(|err| fail(err, None));
                            }
                        },
                        Verdict::GiveUp(reason) => {
                            let detail = detail(reason, &attempt, config, replay, waiter);
                            let outcome = Outcome::new(scope, &progress, signal);
                            return give_up(config, resp, (reason, hint, detail), outcome)
                                .map_err(|err| fail(err, None));
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
                        (verdict, backup) => {
                            tracing::debug!(%scope, attempt = progress.attempts, ?verdict, error = %err, "courteous: returning the error");
                            let reason = match verdict {
                                Verdict::GiveUp(reason) => reason,
                                _ => GiveUpReason::NotRetryable,
                            };
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
/// idempotency key refused with 429 included), so `?` never takes a refusal
/// for a success; in [`GiveUpMode::Response`] the response itself.
fn give_up(
    config: &crate::engine::Config,
    mut resp: reqwest::Response,
    (reason, hint, detail): (GiveUpReason, Option<Duration>, Detail),
    Outcome {
        scope,
        progress,
        signal,
    }: Outcome<'_>,
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
            .with_detail(detail)
            .with_response(resp)),
    }
}

/// What a request ends with besides its response: its scope, what it
/// took, the last signal.
struct Outcome<'a> {
    scope: &'a crate::engine::Scope,
    progress: &'a Progress,
    signal: Signal,
}

impl<'a> Outcome<'a> {
    fn new(scope: &'a crate::engine::Scope, progress: &'a Progress, signal: Signal) -> Self {
        Self {
            scope,
            progress,
            signal,
        }
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

/// Runs `fut` until it completes or `deadline` passes (`None`: it is
/// dropped, cancelling it). `timer` is made the first time `fut` has to
/// wait, and kept for the request's later attempts.
fn within<'a, F: Future>(
    deadline: Option<Instant>,
    timer: &'a mut Option<Pin<Box<Sleep>>>,
    mut fut: Pin<&'a mut F>,
) -> impl Future<Output = Option<F::Output>> + 'a {
    poll_fn(move |cx| {
        if let Poll::Ready(out) = fut.as_mut().poll(cx) {
            return Poll::Ready(Some(out));
        }
        let Some(deadline) = deadline else {
            return Poll::Pending;
        };
        let timer = timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        timer.as_mut().poll(cx).map(|()| None)
    })
}

/// The error of a request whose deadline passed during an attempt (which
/// its caller dropped, cancelling it), counted as a give-up of its scope.
fn cut(
    core: &Core,
    handle: &ScopeHandle,
    deadline: Option<Duration>,
    progress: &Progress,
    fail: impl FnOnce(Error, Option<reqwest::Url>) -> Error,
    url: Option<reqwest::Url>,
) -> Error {
    core.engine.record_give_up_after_send_in(handle);
    let err = fail(
        Error::deadline(deadline.unwrap_or(Duration::MAX), progress.attempts),
        url,
    );
    tracing::debug!(scope = %handle.scope(), error = %err, "courteous: deadline passed");
    err
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
