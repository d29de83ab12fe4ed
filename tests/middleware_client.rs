//! `courteous::Client` against wiremock on real loopback sockets: hints in
//! every unit are waited (at least the hint; no upper bounds on real time),
//! pauses are shared, only retryable requests are retried, and whatever is
//! handed back carries its body intact.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use courteous::{Client, Config, GiveUpMode, RetryBudget, RetryReport};
use http::StatusCode;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Answers from a script (the last entry repeats) and records when each
/// request arrived, with its headers and body.
#[derive(Clone)]
struct Scripted {
    replies: Arc<Vec<ResponseTemplate>>,
    seen: Arc<Mutex<Vec<(Instant, Request)>>>,
}

impl Scripted {
    fn new(replies: Vec<ResponseTemplate>) -> Self {
        Self {
            replies: Arc::new(replies),
            seen: Arc::default(),
        }
    }

    fn seen(&self) -> Vec<(Instant, Request)> {
        self.seen.lock().unwrap().clone()
    }
}

impl Respond for Scripted {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let mut seen = self.seen.lock().unwrap();
        let n = seen.len();
        seen.push((Instant::now(), request.clone()));
        self.replies[n.min(self.replies.len() - 1)].clone()
    }
}

async fn serve(script: &Scripted) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(path("/r"))
        .respond_with(script.clone())
        .mount(&server)
        .await;
    server
}

fn ok() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_string("fine")
}

fn throttled() -> ResponseTemplate {
    ResponseTemplate::new(429).set_body_string("slow down")
}

fn no_jitter() -> Config {
    Config::default().hint_jitter(0.0, Duration::ZERO)
}

fn client(config: Config) -> Client {
    Client::builder().config(config).build()
}

fn gap(seen: &[(Instant, Request)], i: usize) -> Duration {
    seen[i + 1].0 - seen[i].0
}

#[tokio::test]
async fn retry_after_seconds_is_waited() {
    let script = Scripted::new(vec![throttled().insert_header("retry-after", "1"), ok()]);
    let server = serve(&script).await;
    let response = Client::new()
        .get(format!("{}/r", server.uri()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let report = response.extensions().get::<RetryReport>().unwrap().clone();
    assert_eq!((report.attempts(), report.throttled()), (2, 1));
    assert!(report.waited() >= Duration::from_secs(1));
    assert!(gap(&script.seen(), 0) >= Duration::from_secs(1));
    assert_eq!(response.text().await.unwrap(), "fine");
}

#[tokio::test]
async fn retry_after_http_date_is_measured_against_the_date_header() {
    // The server's clock says `date`; the retry is one second after it.
    let date = SystemTime::now() - Duration::from_secs(3600);
    let retry_at = date + Duration::from_secs(1);
    let script = Scripted::new(vec![
        throttled()
            .insert_header("date", httpdate::fmt_http_date(date).as_str())
            .insert_header("retry-after", httpdate::fmt_http_date(retry_at).as_str()),
        ok(),
    ]);
    let server = serve(&script).await;
    let response = client(no_jitter())
        .get(format!("{}/r", server.uri()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(gap(&script.seen(), 0) >= Duration::from_secs(1));
}

#[tokio::test]
async fn millisecond_hints_are_waited() {
    let header = throttled().insert_header("retry-after-ms", "300");
    let problem = ResponseTemplate::new(429).set_body_raw(
        r#"{"type":"about:blank","title":"Too Many Requests","status":429,"retry_after_ms":250}"#,
        "application/problem+json",
    );
    for (reply, hint) in [(header, 300), (problem, 250)] {
        let script = Scripted::new(vec![reply, ok()]);
        let server = serve(&script).await;
        let response = client(no_jitter())
            .get(format!("{}/r", server.uri()))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert!(
            gap(&script.seen(), 0) >= Duration::from_millis(hint),
            "hint {hint} ms"
        );
    }
}

#[tokio::test]
async fn one_throttled_request_pauses_the_others() {
    let script = Scripted::new(vec![throttled().insert_header("retry-after", "1"), ok()]);
    let server = serve(&script).await;
    let client = client(no_jitter());
    let url = format!("{}/r", server.uri());
    let first = tokio::spawn(client.get(&url).send());
    // Wait until the 429 has been answered, then start three more.
    while client
        .stats()
        .first()
        .is_none_or(|(_, s)| s.throttled() == 0)
    {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let others: Vec<_> = (0..3)
        .map(|_| tokio::spawn(client.get(&url).send()))
        .collect();
    assert_eq!(first.await.unwrap().unwrap().status(), StatusCode::OK);
    for other in others {
        assert_eq!(other.await.unwrap().unwrap().status(), StatusCode::OK);
    }
    let seen = script.seen();
    assert_eq!(seen.len(), 5);
    for (at, _) in &seen[1..] {
        assert!(
            *at - seen[0].0 >= Duration::from_secs(1),
            "sent during the pause"
        );
    }
    let (_, stats) = &client.stats()[0];
    assert_eq!(
        (stats.sent(), stats.throttled(), stats.retries()),
        (5, 1, 1)
    );
}

#[tokio::test]
async fn post_is_retried_only_with_an_idempotency_key() {
    let hint = || throttled().insert_header("retry-after-ms", "20");
    let script = Scripted::new(vec![hint(), ok()]);
    let server = serve(&script).await;
    let url = format!("{}/r", server.uri());
    let client = client(no_jitter());

    // Not retried, and (one give-up rule) an error carrying the response.
    let err = client.post(&url).body("order").send().await.unwrap_err();
    assert!(err.is_rate_limited(), "{err:?}");
    let response = err.into_response().unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(response.text().await.unwrap(), "slow down");
    assert_eq!(script.seen().len(), 1);

    let script = Scripted::new(vec![hint(), ok()]);
    let server = serve(&script).await;
    let url = format!("{}/r", server.uri());
    let response = client
        .post(&url)
        .idempotency_key("k-1")
        .body("order")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(script.seen().len(), 2);

    // Generated keys are reused by every attempt.
    let script = Scripted::new(vec![hint(), ok()]);
    let server = serve(&script).await;
    let generating = Client::builder()
        .config(no_jitter())
        .generate_idempotency_keys(true)
        .build();
    let response = generating
        .post(format!("{}/r", server.uri()))
        .body("order")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let keys: Vec<_> = script
        .seen()
        .iter()
        .map(|(_, r)| r.headers["idempotency-key"].clone())
        .collect();
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[0], keys[1]);
    assert!(script.seen().iter().all(|(_, r)| r.body == b"order"));
}

#[tokio::test]
async fn a_streaming_body_is_sent_once_and_its_response_returned() {
    let script = Scripted::new(vec![
        throttled().insert_header("retry-after-ms", "20"),
        ok(),
    ]);
    let server = serve(&script).await;
    let chunks: Vec<Result<&'static str, std::io::Error>> = vec![Ok("str"), Ok("eam")];
    let body = reqwest::Body::wrap_stream(futures_util::stream::iter(chunks));
    let err = Client::new()
        .put(format!("{}/r", server.uri()))
        .body(body)
        .send()
        .await
        .unwrap_err();
    let response = err.into_response().unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(response.text().await.unwrap(), "slow down");
    let seen = script.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].1.body, b"stream");
}

#[tokio::test]
async fn a_wait_beyond_the_cap_is_a_typed_error_or_the_response() {
    let reply = || throttled().insert_header("retry-after", "3600");
    let script = Scripted::new(vec![reply()]);
    let server = serve(&script).await;
    let started = Instant::now();
    let err = Client::new()
        .get(format!("{}/r", server.uri()))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_rate_limited() && err.is_wait_too_long(), "{err:?}");
    assert_eq!(err.retry_after(), Some(Duration::from_secs(3600)));
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "slept instead of returning"
    );
    let response = err.into_response().unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(response.text().await.unwrap(), "slow down");

    let script = Scripted::new(vec![reply()]);
    let server = serve(&script).await;
    let client = Client::builder().give_up(GiveUpMode::Response).build();
    let response = client
        .get(format!("{}/r", server.uri()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(response.text().await.unwrap(), "slow down");
    assert_eq!(script.seen().len(), 1);
}

#[tokio::test]
async fn the_deadline_is_respected() {
    let script = Scripted::new(vec![throttled().insert_header("retry-after", "1"), ok()]);
    let server = serve(&script).await;
    let client = Client::builder()
        .deadline(Duration::from_millis(500))
        .build();
    let err = client
        .get(format!("{}/r", server.uri()))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_deadline(), "{err:?}");
    assert_eq!(script.seen().len(), 1);
}

#[tokio::test]
async fn a_spent_budget_means_no_more_retries() {
    let script = Scripted::new(vec![throttled().insert_header("retry-after-ms", "10")]);
    let server = serve(&script).await;
    let client = Client::builder()
        .config(no_jitter().max_attempts(10))
        .retry_budget(RetryBudget::new(Duration::from_secs(10), 0, 1.0))
        .build();
    let url = format!("{}/r", server.uri());
    // One first attempt buys one retry; then the budget is spent.
    let err = client.get(&url).send().await.unwrap_err();
    assert!(err.is_budget_exhausted(), "{err:?}");
    assert_eq!(err.attempts(), 2);
    assert_eq!(script.seen().len(), 2);
    let (_, stats) = &client.stats()[0];
    assert_eq!((stats.sent(), stats.retries(), stats.gave_up()), (2, 1, 1));
}

#[tokio::test]
async fn a_large_problem_body_comes_back_intact() {
    let padding = "x".repeat(200 * 1024);
    let body = format!(
        r#"{{"title":"Too Many Requests","status":429,"retry_after_ms":10,"padding":"{padding}"}}"#
    );
    let script = Scripted::new(vec![
        ResponseTemplate::new(429).set_body_raw(body.clone(), "application/problem+json"),
    ]);
    let server = serve(&script).await;
    // POST without a key: read for hints, not retried, handed back whole.
    let response = Client::new()
        .post(format!("{}/r", server.uri()))
        .send()
        .await
        .unwrap_err()
        .into_response()
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
    let url = response.url().clone();
    assert_eq!(url.path(), "/r");
    assert_eq!(response.text().await.unwrap(), body);
}

#[tokio::test]
async fn connection_errors_are_retried_then_reported() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let client = Client::builder().max_attempts(3).build();
    let err = client
        .get(format!("http://127.0.0.1:{port}/r"))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_request() && err.is_connect(), "{err:?}");
    assert_eq!(err.attempts(), 3);
}

#[tokio::test]
async fn quota_headers_pace_before_any_429() {
    // The server allows 5 per second and says so; it refuses whatever exceeds it.
    for concurrency in [1, 4] {
        let server = MockServer::start().await;
        let bucket = wiremock_bucket::Bucket::new(5, 5.0);
        Mock::given(method("GET"))
            .respond_with(bucket.clone())
            .mount(&server)
            .await;
        let client = Client::new();
        let url = format!("{}/r", server.uri());
        let tasks: Vec<_> = (0..concurrency)
            .map(|_| {
                let (client, url) = (client.clone(), url.clone());
                tokio::spawn(async move {
                    for _ in 0..8 / concurrency {
                        let response = client.get(&url).send().await.unwrap();
                        assert_eq!(response.status(), StatusCode::OK);
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(bucket.refused(), 0, "concurrency {concurrency}");
    }
}

/// A minimal token bucket emitting `RateLimit` and `RateLimit-Policy`.
mod wiremock_bucket {
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    use wiremock::{Request, Respond, ResponseTemplate};

    #[derive(Clone)]
    pub struct Bucket {
        capacity: u64,
        rate: f64,
        state: Arc<Mutex<(f64, Instant, u64)>>,
    }

    impl Bucket {
        pub fn new(capacity: u64, rate: f64) -> Self {
            Self {
                capacity,
                rate,
                state: Arc::new(Mutex::new((capacity as f64, Instant::now(), 0))),
            }
        }

        pub fn refused(&self) -> u64 {
            self.state.lock().unwrap().2
        }
    }

    impl Respond for Bucket {
        fn respond(&self, _: &Request) -> ResponseTemplate {
            let mut state = self.state.lock().unwrap();
            let now = Instant::now();
            state.0 =
                (state.0 + (now - state.1).as_secs_f64() * self.rate).min(self.capacity as f64);
            state.1 = now;
            let allowed = state.0 >= 1.0;
            if allowed {
                state.0 -= 1.0;
            } else {
                state.2 += 1;
            }
            let policy = format!(
                "\"b\";q={};w={}",
                self.capacity,
                (self.capacity as f64 / self.rate).ceil()
            );
            let limit = format!("\"b\";r={}", state.0.floor());
            let template = if allowed {
                ResponseTemplate::new(200)
            } else {
                ResponseTemplate::new(429).insert_header("retry-after", "1")
            };
            template
                .insert_header("ratelimit-policy", policy.as_str())
                .insert_header("ratelimit", limit.as_str())
        }
    }
}

#[tokio::test]
async fn scopes_keyed_by_api_key_do_not_pause_each_other() {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::header("x-api-key", "a"))
        .respond_with(throttled().insert_header("retry-after", "1"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(path("/r"))
        .respond_with(ok())
        .with_priority(2)
        .mount(&server)
        .await;
    let client = Client::builder()
        .config(no_jitter())
        .scope_by(|req: &reqwest::Request| {
            let key = req.headers().get("x-api-key").and_then(|v| v.to_str().ok());
            courteous::Scope::new(key.unwrap_or("none"))
        })
        .build();
    let url = format!("{}/r", server.uri());
    let a = tokio::spawn(client.get(&url).header("x-api-key", "a").send());
    while client.stats().iter().all(|(_, s)| s.throttled() == 0) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let b = client
        .get(&url)
        .header("x-api-key", "b")
        .send()
        .await
        .unwrap();
    assert_eq!(b.status(), StatusCode::OK);
    assert_eq!(a.await.unwrap().unwrap().status(), StatusCode::OK);
    // Key b went through while key a was still paused.
    let keys: Vec<_> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.headers["x-api-key"].to_str().unwrap().to_owned())
        .collect();
    assert_eq!(keys, ["a", "b", "a"]);
    let scopes: Vec<_> = client
        .stats()
        .into_iter()
        .map(|(s, _)| s.as_str().to_owned())
        .collect();
    assert_eq!(scopes, ["a", "b"]);
}
