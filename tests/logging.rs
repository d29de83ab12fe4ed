//! What a user sees with `RUST_LOG=courteous=debug` (here the same filter
//! set in code): a resend and a wait logged at DEBUG under their layer's
//! target, a give-up at WARN, with OpenTelemetry's field names. wiremock
//! on real sockets.

use std::io;
use std::sync::{Arc, Mutex};

use tracing_subscriber::EnvFilter;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Collects what the subscriber writes.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn lines(&self) -> Vec<String> {
        let bytes = self.0.lock().unwrap().clone();
        String::from_utf8(bytes)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

#[tokio::test]
async fn courteous_debug_shows_waits_resends_and_a_warned_give_up() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::new("courteous=debug"))
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    // One refusal with a short hint, then a refusal asking for an hour.
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after-ms", "20"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "3600"))
        .mount(&server)
        .await;
    let client = courteous::Client::new();
    let url = format!("{}/items", server.uri());
    let err = client.get(&url).send().await.unwrap_err();
    assert!(err.is_wait_too_long(), "{err:?}");
    // The scope is paused for an hour: the next request is not sent.
    client.get(&url).send().await.unwrap_err();

    let lines = captured.lines();
    for line in &lines {
        println!("{line}");
    }
    let find = |parts: &[&str]| {
        lines
            .iter()
            .find(|line| parts.iter().all(|part| line.contains(part)))
            .unwrap_or_else(|| panic!("no line with {parts:?} in {lines:#?}"))
    };
    find(&[
        "DEBUG",
        "courteous::service",
        "courteous: retrying",
        "http.request.method=GET",
        &format!("url.full={url}"),
        "http.request.resend_count=1",
        "http.response.status_code=429",
        "courteous.wait_ms=",
    ]);
    find(&[
        " WARN ",
        "courteous::service",
        "courteous: gave up",
        "http.request.method=GET",
        &format!("url.full={url}"),
        "http.response.status_code=429",
        "courteous.attempts=2",
        "error.type=\"wait_too_long\"",
        "max_wait (60 s)",
    ]);
    find(&[
        " WARN ",
        "courteous: gave up",
        "courteous.attempts=0",
        "error.type=\"wait_too_long\"",
        "not sent: the scope is paused",
    ]);
}
