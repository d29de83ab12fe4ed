//! A 503 without any hint (no `Retry-After`, no quota fields) is retried
//! with backoff for its request alone; a second one in a row for the same
//! request pauses the scope, as a 503 with a hint does at once. Paused
//! time over a `tower::service_fn`: request A meets the 503s, request B
//! is sent while A backs off, and B's send time says whether the scope
//! was paused.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use courteous::CourteousLayer;
use http::{Method, StatusCode};
use tokio::time::Instant;
use tower::{Layer, ServiceExt};

/// A status and its `Retry-After`, if any.
type Answer = (u16, Option<&'static str>);

/// Answers the scripted statuses in order (then 200), with the headers
/// given; records when each path was called.
#[derive(Clone)]
struct Server {
    answers: Arc<Mutex<Vec<Answer>>>,
    calls: Arc<Mutex<Vec<(Duration, String)>>>,
    start: Instant,
}

impl Server {
    fn new(answers: &[Answer]) -> Self {
        let mut answers = answers.to_vec();
        answers.reverse();
        Self {
            answers: Arc::new(Mutex::new(answers)),
            calls: Arc::default(),
            start: Instant::now(),
        }
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
        tower::service_fn(move |req: reqwest::Request| {
            let server = server.clone();
            async move {
                let at = server.start.elapsed();
                server
                    .calls
                    .lock()
                    .unwrap()
                    .push((at, req.url().path().to_owned()));
                let (status, retry_after) =
                    server.answers.lock().unwrap().pop().unwrap_or((200, None));
                let mut response = http::Response::builder().status(status);
                if let Some(seconds) = retry_after {
                    response = response.header("retry-after", seconds);
                }
                Ok(reqwest::Response::from(response.body("").unwrap()))
            }
        })
    }

    /// When `path` was called, in order.
    fn calls_of(&self, path: &str) -> Vec<Duration> {
        let calls = self.calls.lock().unwrap();
        calls
            .iter()
            .filter(|(_, p)| p == path)
            .map(|(at, _)| *at)
            .collect()
    }
}

fn get(path: &str) -> reqwest::Request {
    let url = format!("http://127.0.0.1:9{path}").parse().unwrap();
    reqwest::Request::new(Method::GET, url)
}

/// Sends A, then B after `b_after`; both must end in 200.
async fn run(layer: &CourteousLayer, server: &Server, b_after: Duration) {
    let a = tokio::spawn(layer.layer(server.service()).oneshot(get("/a")));
    tokio::time::sleep(b_after).await;
    let b = tokio::spawn(layer.layer(server.service()).oneshot(get("/b")));
    assert_eq!(a.await.unwrap().unwrap().status(), StatusCode::OK);
    assert_eq!(b.await.unwrap().unwrap().status(), StatusCode::OK);
}

const MS: Duration = Duration::from_millis(1);

#[tokio::test(start_paused = true)]
async fn a_bare_503_retries_its_request_and_pauses_no_one_else() {
    let server = Server::new(&[(503, None)]);
    let layer = CourteousLayer::new();
    run(&layer, &server, MS).await;
    let a = server.calls_of("/a");
    assert_eq!(a.len(), 2, "{a:?}");
    // The retry waits the backoff of a first retry (under 100 ms by
    // default), not the 1 s a refusal without a hint pauses the scope.
    assert!(a[1] < Duration::from_millis(100), "{a:?}");
    assert_eq!(server.calls_of("/b"), [MS], "B was not held back");
    let stats = layer.stats()[0].1;
    assert_eq!(
        (stats.sent(), stats.throttled(), stats.retries()),
        (3, 0, 1)
    );
}

#[tokio::test(start_paused = true)]
async fn a_second_bare_503_in_a_row_pauses_the_scope() {
    let server = Server::new(&[(503, None), (503, None)]);
    let layer = CourteousLayer::new();
    run(&layer, &server, Duration::from_millis(150)).await;
    let a = server.calls_of("/a");
    assert_eq!(a.len(), 3, "{a:?}");
    assert!(a[2] - a[1] >= Duration::from_secs(1), "{a:?}");
    // B, sent after A's second 503, waits for the scope's pause (1 s).
    let b = server.calls_of("/b");
    assert!(b[0] >= a[1] + Duration::from_secs(1), "A {a:?}, B {b:?}");
    let stats = layer.stats()[0].1;
    assert_eq!(stats.throttled(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_503_with_a_hint_pauses_the_scope_at_once() {
    let server = Server::new(&[(503, Some("2"))]);
    let layer =
        CourteousLayer::with_config(courteous::Config::default().hint_jitter(0.0, Duration::ZERO));
    run(&layer, &server, MS).await;
    assert_eq!(
        server.calls_of("/a"),
        [Duration::ZERO, Duration::from_secs(2)]
    );
    let b = server.calls_of("/b");
    assert!(b[0] >= Duration::from_secs(2), "{b:?}");
    assert_eq!(layer.stats()[0].1.throttled(), 1);
}
