//! The tower service under paused tokio time, over a scripted
//! `tower::service_fn` (no sockets): waits, shared pauses, jitter, backoff,
//! budget, deadline and the wait cap, measured on the virtual clock.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use courteous::engine::WaitReason;
use courteous::hooks::{WaitCause, WaitEvent};
use courteous::{
    Backoff, Config, CourteousLayer, GiveUpMode, GiveUpReason, RetryBudget, RetryReport, ScopeStats,
};
use http::{Method, StatusCode};
use tokio::time::Instant;
use tower::{Layer, Service, ServiceExt};

/// What the scripted server answers, in order (the last one repeats).
#[derive(Clone)]
enum Reply {
    Status(u16, &'static [(&'static str, &'static str)], &'static str),
    Refused,
}

#[derive(Clone)]
struct Script {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    calls: Arc<Mutex<Vec<(Instant, Method)>>>,
}

impl Script {
    fn new(replies: impl IntoIterator<Item = Reply>) -> Self {
        Self {
            replies: Arc::new(Mutex::new(replies.into_iter().collect())),
            calls: Arc::default(),
        }
    }

    fn calls(&self) -> Vec<(Instant, Method)> {
        self.calls.lock().unwrap().clone()
    }

    fn service(
        &self,
    ) -> impl Service<
        reqwest::Request,
        Response = reqwest::Response,
        Error = std::io::Error,
        Future = impl Send,
    > + Clone
    + Send
    + 'static {
        let script = self.clone();
        tower::service_fn(move |req: reqwest::Request| {
            let script = script.clone();
            async move {
                script
                    .calls
                    .lock()
                    .unwrap()
                    .push((Instant::now(), req.method().clone()));
                let reply = {
                    let mut replies = script.replies.lock().unwrap();
                    if replies.len() > 1 {
                        replies.pop_front().unwrap()
                    } else {
                        replies.front().cloned().unwrap()
                    }
                };
                match reply {
                    Reply::Refused => {
                        Err(std::io::Error::from(std::io::ErrorKind::ConnectionRefused))
                    }
                    Reply::Status(status, headers, body) => {
                        let mut builder = http::Response::builder().status(status);
                        for (k, v) in headers {
                            builder = builder.header(*k, *v);
                        }
                        Ok(reqwest::Response::from(
                            builder.body(body.to_owned()).unwrap(),
                        ))
                    }
                }
            }
        })
    }
}

const OK: Reply = Reply::Status(200, &[], "ok");

fn too_many(retry_after: &'static str) -> Reply {
    let headers: &'static [(&'static str, &'static str)] = match retry_after {
        "1" => &[("retry-after", "1")],
        "2" => &[("retry-after", "2")],
        "3600" => &[("retry-after", "3600")],
        _ => &[],
    };
    Reply::Status(429, headers, "slow down")
}

fn get() -> reqwest::Request {
    reqwest::Request::new(Method::GET, "http://127.0.0.1:9/r".parse().unwrap())
}

fn no_jitter() -> Config {
    Config::default().hint_jitter(0.0, Duration::ZERO)
}

fn gaps(calls: &[(Instant, Method)]) -> Vec<Duration> {
    calls.windows(2).map(|w| w[1].0 - w[0].0).collect()
}

fn svc_stats(layer: &CourteousLayer) -> ScopeStats {
    let stats = layer.stats();
    assert_eq!(stats.len(), 1);
    stats[0].1
}

#[tokio::test(start_paused = true)]
async fn retry_after_seconds_is_waited_before_the_retry() {
    let script = Script::new([too_many("2"), OK]);
    let mut svc = CourteousLayer::with_config(no_jitter()).layer(script.service());
    let response = svc.ready().await.unwrap().call(get()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let report = response.extensions().get::<RetryReport>().unwrap();
    assert_eq!(report.attempts(), 2);
    assert_eq!(report.throttled(), 1);
    assert!(report.waited() >= Duration::from_secs(2));
    assert!(gaps(&script.calls())[0] >= Duration::from_secs(2));
    assert_eq!(report.gave_up(), None);
}

#[tokio::test(start_paused = true)]
async fn a_throttled_request_pauses_every_other_request_to_the_scope() {
    let script = Script::new([too_many("1"), OK]);
    let layer = CourteousLayer::with_config(no_jitter());
    let first = layer.layer(script.service());
    let second = layer.layer(script.service());
    let start = Instant::now();
    let a = tokio::spawn(first.oneshot(get()));
    tokio::time::sleep(Duration::from_millis(10)).await;
    let b = tokio::spawn(second.oneshot(get()));
    assert_eq!(a.await.unwrap().unwrap().status(), StatusCode::OK);
    assert_eq!(b.await.unwrap().unwrap().status(), StatusCode::OK);
    let calls = script.calls();
    assert_eq!(calls.len(), 3, "the 429 and one send each after the pause");
    for (at, _) in &calls[1..] {
        assert!(
            *at - start >= Duration::from_secs(1),
            "sent during the pause"
        );
    }
    let stats = layer.stats();
    assert_eq!(stats.len(), 1);
    assert_eq!((stats[0].1.sent(), stats[0].1.throttled()), (3, 1));
}

#[tokio::test(start_paused = true)]
async fn hint_jitter_is_bounded() {
    for _ in 0..20 {
        let script = Script::new([too_many("1"), OK]);
        let svc = CourteousLayer::with_config(
            Config::default().hint_jitter(0.1, Duration::from_millis(50)),
        )
        .layer(script.service());
        svc.oneshot(get()).await.unwrap();
        let gap = gaps(&script.calls())[0];
        assert!(gap >= Duration::from_secs(1), "{gap:?}");
        assert!(gap <= Duration::from_millis(1051), "{gap:?}");
    }
}

/// The gaps between the calls of a request refused bare five times, then
/// served, through a layer with `config` (pacing off, retries unbounded).
async fn gaps_after_five_bare_refusals(config: Config) -> Vec<Duration> {
    let script = Script::new([
        too_many(""),
        too_many(""),
        too_many(""),
        too_many(""),
        too_many(""),
        OK,
    ]);
    let config = config.max_attempts(10).retry_budget(None).pacing(false);
    let svc = CourteousLayer::with_config(config).layer(script.service());
    let response = svc.oneshot(get()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    gaps(&script.calls())
}

/// Nothing said and nothing learned: exactly 1 s, then doubling, plus up
/// to 10 %.
#[tokio::test(start_paused = true)]
async fn bare_throttles_back_off_exponentially_from_one_second() {
    let gaps = gaps_after_five_bare_refusals(Config::default()).await;
    assert_eq!(gaps.len(), 5);
    assert_eq!(gaps[0], Duration::from_secs(1));
    for (n, gap) in gaps.into_iter().enumerate() {
        let floor = Duration::from_secs(1 << n);
        assert!(
            gap >= floor && gap <= floor + floor / 10,
            "retry {n}: {gap:?}"
        );
    }
}

/// `unhinted_wait(0)` leaves bare refusals to the full-jitter backoff.
#[tokio::test(start_paused = true)]
async fn bare_throttles_can_be_left_to_the_backoff() {
    let backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(20));
    let config = Config::default()
        .backoff(backoff)
        .unhinted_wait(Duration::ZERO);
    let gaps = gaps_after_five_bare_refusals(config).await;
    assert_eq!(gaps.len(), 5);
    for (n, gap) in gaps.into_iter().enumerate() {
        assert!(gap <= backoff.ceiling(n as u32), "retry {n}: {gap:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_spent_budget_stops_retrying() {
    let script = Script::new([too_many("")]);
    let config = Config::default()
        .max_attempts(100)
        .retry_budget(RetryBudget::new(Duration::from_secs(10), 0, 0.0))
        .backoff(Backoff::new(
            Duration::from_millis(10),
            Duration::from_millis(10),
        ));
    let svc = CourteousLayer::with_config(config).layer(script.service());
    let err = svc.oneshot(get()).await.unwrap_err();
    assert!(
        err.is_budget_exhausted() && err.is_rate_limited(),
        "{err:?}"
    );
    assert_eq!(script.calls().len(), 1);
    let response = err.into_response().unwrap();
    assert_eq!(response.text().await.unwrap(), "slow down");
}

#[tokio::test(start_paused = true)]
async fn the_deadline_is_not_slept_past() {
    let script = Script::new([too_many("2"), OK]);
    let config = no_jitter().deadline(Duration::from_secs(1));
    let svc = CourteousLayer::with_config(config).layer(script.service());
    let start = Instant::now();
    let err = svc.oneshot(get()).await.unwrap_err();
    assert!(err.is_deadline(), "{err:?}");
    assert_eq!(err.retry_after(), Some(Duration::from_secs(2)));
    assert!(start.elapsed() < Duration::from_secs(1));
    assert_eq!(script.calls().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_hint_beyond_max_wait_is_an_error_or_the_response() {
    let script = Script::new([too_many("3600")]);
    let layer = CourteousLayer::with_config(Config::default());
    let svc = layer.layer(script.service());
    let start = Instant::now();
    let err = svc.clone().oneshot(get()).await.unwrap_err();
    assert!(err.is_wait_too_long() && err.is_rate_limited(), "{err:?}");
    assert_eq!(err.retry_after(), Some(Duration::from_secs(3600)));
    assert_eq!(err.status(), Some(StatusCode::TOO_MANY_REQUESTS));
    assert!(start.elapsed() < Duration::from_secs(1));
    // The scope stays paused: the next request is refused without sending.
    let err = svc.oneshot(get()).await.unwrap_err();
    assert!(
        err.is_wait_too_long() && err.response().is_none(),
        "{err:?}"
    );
    assert_eq!(script.calls().len(), 1);
    // Both give-ups count; the second one sent nothing.
    let stats = svc_stats(&layer);
    assert_eq!((stats.gave_up(), stats.gave_up_before_send()), (2, 1));

    let script = Script::new([too_many("3600")]);
    let config = Config::default().give_up(GiveUpMode::Response);
    let svc = CourteousLayer::with_config(config).layer(script.service());
    let response = svc.oneshot(get()).await.unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let report = response.extensions().get::<RetryReport>().unwrap();
    assert_eq!(
        report.gave_up(),
        Some(GiveUpReason::WaitTooLong {
            wait: Duration::from_secs(3600)
        })
    );
    assert_eq!(response.text().await.unwrap(), "slow down");
}

#[tokio::test(start_paused = true)]
async fn connection_errors_are_retried_for_idempotent_requests_only() {
    let script = Script::new([Reply::Refused, OK]);
    let svc = CourteousLayer::new().layer(script.service());
    assert_eq!(svc.oneshot(get()).await.unwrap().status(), StatusCode::OK);
    assert_eq!(script.calls().len(), 2);

    let script = Script::new([Reply::Refused, OK]);
    let svc = CourteousLayer::new().layer(script.service());
    let post = reqwest::Request::new(Method::POST, "http://127.0.0.1:9/r".parse().unwrap());
    let err = svc.oneshot(post).await.unwrap_err();
    assert!(err.is_request() && err.is_connect(), "{err:?}");
    assert_eq!(script.calls().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn attempts_are_bounded() {
    let script = Script::new([too_many("1")]);
    let svc = CourteousLayer::with_config(no_jitter().max_attempts(3)).layer(script.service());
    let err = svc.oneshot(get()).await.unwrap_err();
    assert!(err.is_attempts_exhausted(), "{err:?}");
    assert_eq!(err.attempts(), 3);
    assert_eq!(script.calls().len(), 3);
}

#[tokio::test(start_paused = true)]
async fn pacing_from_quota_headers_spaces_sends_at_the_policy_rate() {
    // 10 per second, 0 left: each send waits one refill (100 ms).
    let script = Script::new([Reply::Status(
        200,
        &[
            ("ratelimit-policy", "\"p\";q=10;w=1"),
            ("ratelimit", "\"p\";r=0;t=1"),
        ],
        "ok",
    )]);
    let svc = CourteousLayer::new().layer(script.service());
    for _ in 0..4 {
        svc.clone().oneshot(get()).await.unwrap();
    }
    for gap in gaps(&script.calls()) {
        assert!(gap >= Duration::from_millis(100), "{gap:?}");
    }
}

/// 10 per second with none left: every send after the first waits for a
/// unit (pacing).
const SPENT: &[(&str, &str)] = &[
    ("ratelimit-policy", "\"p\";q=10;w=1"),
    ("ratelimit", "\"p\";r=0;t=1"),
];

#[tokio::test(start_paused = true)]
async fn on_retry_sees_each_resend_once_and_on_wait_every_wait() {
    let paced = Reply::Status(200, SPENT, "ok");
    let script = Script::new([paced.clone(), paced.clone(), too_many("1"), paced]);
    let retries = Arc::new(Mutex::new(Vec::new()));
    let waits = Arc::new(Mutex::new(Vec::new()));
    let (seen_retries, seen_waits) = (Arc::clone(&retries), Arc::clone(&waits));
    let layer = CourteousLayer::with_config(no_jitter())
        .on_retry(move |event: &WaitEvent<'_>| {
            let mut retries = seen_retries.lock().unwrap();
            retries.push((event.attempt(), event.status(), event.cause().server_hint()));
        })
        .on_wait(move |event: &WaitEvent<'_>| seen_waits.lock().unwrap().push(event.cause()));
    for _ in 0..3 {
        let response = layer.layer(script.service()).oneshot(get()).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    assert_eq!(script.calls().len(), 4);
    let retries = retries.lock().unwrap().clone();
    assert_eq!(
        retries,
        [(
            1,
            Some(StatusCode::TOO_MANY_REQUESTS),
            Some(Duration::from_secs(1))
        )],
        "one resend, one call"
    );
    let waits = waits.lock().unwrap().clone();
    let count = |wanted: fn(&WaitCause) -> bool| waits.iter().filter(|c| wanted(c)).count();
    assert_eq!(count(|c| matches!(c, WaitCause::Retry(_))), 1, "{waits:?}");
    assert!(
        count(|c| matches!(c, WaitCause::Admission(WaitReason::Pacing))) >= 2,
        "each paced send waits: {waits:?}"
    );
}
