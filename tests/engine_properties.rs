//! Property tests of the engine through the service: `CourteousLayer` over
//! a scripted `tower::service_fn` on paused tokio time, with arbitrary
//! statuses, headers (absurd numbers, dates, garbage, zero, past, `NaN`),
//! bodies, latencies, cancellations and clock steps. The engine's RNG is
//! seeded from the case, so a failure reproduces from proptest's seed.
//!
//! Cases: [`CASES`] per property, two properties (1,024 cases in all).
//!
//! Invariants:
//! - nothing panics (a panic fails the case);
//! - no request takes longer than the deadline, and every error is typed
//!   (a give-up or a transport error: never anything else);
//! - in-flight counts return to zero, cancelled requests included;
//! - against a server refusing everything, whatever it says, the requests
//!   per (virtual) minute stay bounded by the backoff and the budget.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use courteous::{Config, CourteousLayer, RetryReport};
use http::Method;
use proptest::prelude::*;
use tokio::time::Instant;
use tower::{Layer, ServiceExt};

const CASES: u32 = 512;

const FIELDS: &[&str] = &[
    "retry-after",
    "retry-after-ms",
    "x-ms-retry-after-ms",
    "ratelimit",
    "ratelimit-policy",
    "ratelimit-limit",
    "ratelimit-remaining",
    "ratelimit-reset",
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
    "x-ratelimit-reset-after",
    "date",
];

/// Header values servers send, sane and absurd.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u64..100).prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        "[0-9]{18,30}",
        Just("0".to_owned()),
        Just("-5".to_owned()),
        Just("NaN".to_owned()),
        Just("1e300".to_owned()),
        Just("0.001".to_owned()),
        (0u64..1_000_000).prop_map(|ms| format!("{}.{:03}", ms / 1000, ms % 1000)),
        // Dates: the past, the near future, the far future, the epoch.
        (0u64..4_000_000_000).prop_map(|secs| httpdate::fmt_http_date(
            std::time::UNIX_EPOCH + Duration::from_secs(secs)
        )),
        Just("Fri, 31 Dec 9999 23:59:59 GMT".to_owned()),
        // Structured fields, spent or not.
        (any::<u64>(), any::<u64>()).prop_map(|(q, w)| format!("\"p\";q={q};w={w}")),
        (0u64..20, 0u64..100).prop_map(|(q, w)| format!("\"p\";q={q};w={w}")),
        (any::<u64>(), any::<u64>()).prop_map(|(r, t)| format!("\"p\";r={r};t={t}")),
        (0u64..5, 0u64..10).prop_map(|(r, t)| format!("\"p\";r={r};t={t}")),
        (0u64..20, 0u64..5, 0u64..10)
            .prop_map(|(l, r, t)| format!("limit={l}, remaining={r}, reset={t}")),
        "[ -~]{0,24}",
    ]
}

/// A problem+json hint, as absurd as the headers.
fn body() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        3 => Just(None),
        1 => prop_oneof![
            any::<f64>().prop_map(|ms| format!("{{\"retry_after_ms\":{ms:e}}}")),
            any::<u64>().prop_map(|ms| format!("{{\"retry_after_ms\":{ms}}}")),
            Just("{\"retry_after\":1e300}".to_owned()),
            Just("{\"retry_after\":-1}".to_owned()),
            Just("{\"retry_after_ms\":".to_owned()),
        ]
        .prop_map(Some),
    ]
}

#[derive(Debug, Clone)]
struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: Option<String>,
    /// Time the server takes to answer.
    latency: Duration,
}

fn reply(statuses: &'static [u16]) -> impl Strategy<Value = Reply> {
    (
        prop::sample::select(statuses),
        prop::collection::vec((prop::sample::select(FIELDS), value()), 0..5),
        body(),
        prop_oneof![3 => Just(0u64), 1 => 0u64..3_000],
    )
        .prop_map(|(status, headers, body, latency)| Reply {
            status,
            headers,
            body,
            latency: Duration::from_millis(latency),
        })
}

/// A server answering the replies in turn (cycling), counting its calls.
#[derive(Clone)]
struct Server {
    replies: Arc<Vec<Reply>>,
    calls: Arc<Mutex<Vec<Instant>>>,
}

impl Server {
    fn new(replies: Vec<Reply>) -> Self {
        Self {
            replies: Arc::new(replies),
            calls: Arc::default(),
        }
    }

    fn calls(&self) -> Vec<Instant> {
        self.calls.lock().unwrap().clone()
    }

    fn service(
        &self,
    ) -> impl tower::Service<
        reqwest::Request,
        Response = reqwest::Response,
        Error = std::io::Error,
        Future = impl Send,
    > + Clone
    + Send
    + 'static {
        let server = self.clone();
        tower::service_fn(move |_req: reqwest::Request| {
            let server = server.clone();
            async move {
                let reply = {
                    let mut calls = server.calls.lock().unwrap();
                    calls.push(Instant::now());
                    server.replies[(calls.len() - 1) % server.replies.len()].clone()
                };
                tokio::time::sleep(reply.latency).await;
                let mut builder = http::Response::builder().status(reply.status);
                for (name, value) in &reply.headers {
                    builder = builder.header(*name, value.as_str());
                }
                if reply.body.is_some() {
                    builder = builder.header("content-type", "application/problem+json");
                }
                let body = reply.body.clone().unwrap_or_default();
                Ok(reqwest::Response::from(builder.body(body).unwrap()))
            }
        })
    }
}

fn get() -> reqwest::Request {
    reqwest::Request::new(Method::GET, "http://127.0.0.1:9/r".parse().unwrap())
}

fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

/// A user's settings, sane or extreme, and the deadline among them.
fn config() -> impl Strategy<Value = (Config, Option<Duration>)> {
    (
        any::<u64>(),
        prop_oneof![
            Just(Config::DEFAULT_MAX_WAIT),
            Just(Duration::ZERO),
            Just(Duration::MAX)
        ],
        prop_oneof![
            Just(Some(Config::DEFAULT_DEADLINE)),
            Just(Some(Duration::from_secs(1))),
            Just(Some(Duration::MAX)),
            Just(None)
        ],
        1u32..8,
        any::<bool>(),
    )
        .prop_map(|(seed, max_wait, deadline, attempts, pacing)| {
            let config = Config::default()
                .rng_seed(seed)
                .max_wait(max_wait)
                .deadline(deadline)
                .max_attempts(attempts)
                .pacing(pacing);
            (config, deadline)
        })
}

/// One client step: wait, then send (maybe two at once, maybe cancelled).
#[derive(Debug, Clone)]
struct Step {
    pause: Duration,
    concurrent: bool,
    cancel_after: Option<Duration>,
}

fn step() -> impl Strategy<Value = Step> {
    (
        prop_oneof![2 => 0u64..100, 1 => 0u64..120_000],
        any::<bool>(),
        prop_oneof![3 => Just(None), 1 => (0u64..5_000).prop_map(Some)],
    )
        .prop_map(|(pause, concurrent, cancel)| Step {
            pause: Duration::from_millis(pause),
            concurrent,
            cancel_after: cancel.map(Duration::from_millis),
        })
}

/// A send's outcome, checked against the invariants.
async fn send<S: ServiceLike>(
    svc: &courteous::Courteous<S>,
    deadline: Option<Duration>,
    step: &Step,
) {
    let started = Instant::now();
    let call = svc.clone().oneshot(get());
    let outcome = match step.cancel_after {
        Some(limit) => match tokio::time::timeout(limit, call).await {
            Ok(outcome) => outcome,
            Err(_) => return,
        },
        None => call.await,
    };
    let took = started.elapsed();
    if let Some(deadline) = deadline {
        // Every wait ends before the deadline, and an attempt still out
        // when it passes is cancelled (up to the timer's 1 ms tick late).
        assert!(
            took <= deadline.saturating_add(Duration::from_millis(1)),
            "{took:?} past the deadline {deadline:?}"
        );
    }
    match outcome {
        Ok(response) => {
            let report = response
                .extensions()
                .get::<RetryReport>()
                .expect("a report");
            assert!(report.attempts() >= 1);
        }
        Err(error) => assert!(
            error.is_rate_limited() || error.is_request() || error.is_deadline(),
            "an untyped error: {error:?}"
        ),
    }
}

/// The service types the layer wraps here.
trait ServiceLike:
    tower::Service<
        reqwest::Request,
        Response = reqwest::Response,
        Error = std::io::Error,
        Future: Send,
    > + Clone
    + Send
    + 'static
{
}

impl<S> ServiceLike for S where
    S: tower::Service<
            reqwest::Request,
            Response = reqwest::Response,
            Error = std::io::Error,
            Future: Send,
        > + Clone
        + Send
        + 'static
{
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    /// Any server, any settings, any clock: no panic, deadlines kept,
    /// typed errors, and nothing left in flight.
    #[test]
    fn any_server_any_settings_any_clock(
        (config, deadline) in config(),
        replies in prop::collection::vec(reply(&[200, 200, 429, 429, 503, 500, 404]), 1..12),
        steps in prop::collection::vec(step(), 1..16),
    ) {
        paused_runtime().block_on(async {
            let server = Server::new(replies);
            let layer = CourteousLayer::with_config(config);
            let svc = layer.layer(server.service());
            for step in &steps {
                tokio::time::sleep(step.pause).await;
                if step.concurrent {
                    tokio::join!(send(&svc, deadline, step), send(&svc, deadline, step));
                } else {
                    send(&svc, deadline, step).await;
                }
            }
            for (scope, stats) in layer.stats() {
                assert_eq!(stats.in_flight(), 0, "{scope}: {stats:?}");
                assert!(stats.sent() >= stats.throttled());
            }
        });
    }

    /// A server refusing everything, whatever its hint: a loop calling
    /// `send` for a virtual minute sends at most [`MAX_PER_MINUTE`].
    #[test]
    fn refusing_everything_is_not_hammered(
        seed in any::<u64>(),
        replies in prop::collection::vec(reply(&[429, 503]), 1..6),
    ) {
        let replies: Vec<Reply> = replies
            .into_iter()
            .map(|reply| Reply { latency: Duration::ZERO, ..reply })
            .collect();
        let calls = paused_runtime().block_on(async {
            let server = Server::new(replies);
            let layer = CourteousLayer::with_config(Config::default().rng_seed(seed));
            let svc = layer.layer(server.service());
            let started = Instant::now();
            let mut sends = 0;
            while started.elapsed() < Duration::from_secs(60) && sends < 1_000 {
                sends += 1;
                if svc.clone().oneshot(get()).await.is_ok() {
                    panic!("a refusal came back as a success");
                }
                // A give-up before sending returns at once: the loop lets
                // virtual time pass (a client ignoring the engine would
                // send 600 times a minute).
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            server.calls().len()
        });
        prop_assert!(calls <= MAX_PER_MINUTE, "{calls} requests in a minute");
    }
}

/// The backoff alone (full jitter from 0.1 s doubling to a 20 s cap)
/// expects about 14 requests in a refused minute; this is the bound no seed
/// may pass.
const MAX_PER_MINUTE: usize = 40;
