//! The messages of the four failures a new user meets first (closed port,
//! a wait beyond `max_wait`, a refused POST, a give-up after every attempt),
//! against wiremock on real sockets. Run with `--nocapture` to read them.

use std::time::Duration;

use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn serve(template: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(template)
        .mount(&server)
        .await;
    server
}

fn fast_backoff() -> courteous::ClientBuilder {
    courteous::Client::builder().backoff(courteous::Backoff::new(
        Duration::from_millis(1),
        Duration::from_millis(5),
    ))
}

#[tokio::test]
async fn messages() {
    let url = format!("http://127.0.0.1:{}/x", closed_port());
    let err = fast_backoff().build().get(&url).send().await.unwrap_err();
    println!("closed port: {err}");

    let server = serve(
        ResponseTemplate::new(200)
            .insert_header("x-ratelimit-limit", "10")
            .insert_header("x-ratelimit-remaining", "0")
            .insert_header("x-ratelimit-reset", "122"),
    )
    .await;
    let client = courteous::Client::new();
    client.get(server.uri()).send().await.unwrap();
    let err = client.get(server.uri()).send().await.unwrap_err();
    println!("wait too long (quota): {err}");

    let server = serve(ResponseTemplate::new(429).insert_header("retry-after", "3600")).await;
    let err = courteous::Client::new()
        .get(server.uri())
        .send()
        .await
        .unwrap_err();
    println!("wait too long (hint): {err}");

    let server = serve(ResponseTemplate::new(429).insert_header("retry-after-ms", "50")).await;
    let err = courteous::Client::new()
        .post(format!("{}/orders", server.uri()))
        .body("{}")
        .send()
        .await
        .unwrap_err();
    println!("refused POST: {err}");

    let server = serve(ResponseTemplate::new(429).insert_header("retry-after-ms", "10")).await;
    let err = fast_backoff()
        .build()
        .get(server.uri())
        .send()
        .await
        .unwrap_err();
    println!("give-up: {err}");
}
