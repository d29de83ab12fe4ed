//! Each API's preset against its mock (`courteous::testing`), through the
//! client, one worker and four: every request ends in a success, and the
//! mock receives at most `N + C` requests for `N` successes (`C` = the
//! concurrency: at most one refusal per request in flight before the first
//! reading). Where the API announces what is left, the first reading paces.
#![cfg(feature = "testing")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use courteous::signal::SignalParser;
use courteous::testing::{
    AnthropicApi, AwsApi, AzureApi, DiscordApi, GitHubApi, GitLabApi, GoogleApi, OpenAiApi,
    RedditApi, ShopifyApi, XApi,
};
use courteous::{Client, ClientBuilder, preset};
use http::StatusCode;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Respond};

/// Successes each run needs.
const N: usize = 12;
/// No run may take longer (a bound on the load loop, not an assertion).
const RUN_LIMIT: Duration = Duration::from_secs(60);

async fn mount(responder: impl Respond + 'static) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(responder)
        .mount(&server)
        .await;
    server
}

/// `N` requests to `paths` (round robin) from `c` workers; panics unless
/// every one ends in a 200.
async fn load(client: Client, base: String, paths: &[&str], c: usize) {
    load_n(client, base, paths, c, N).await;
}

/// [`load`] with `n` requests.
async fn load_n(client: Client, base: String, paths: &[&str], c: usize, n: usize) {
    let next = Arc::new(AtomicUsize::new(0));
    let paths: Arc<Vec<String>> = Arc::new(paths.iter().map(|p| format!("{base}{p}")).collect());
    let workers = (0..c).map(|_| {
        let (client, next, paths) = (client.clone(), Arc::clone(&next), Arc::clone(&paths));
        tokio::spawn(async move {
            loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= n {
                    return;
                }
                let url = &paths[index % paths.len()];
                let response = client.get(url).send().await.unwrap();
                assert_eq!(response.status(), StatusCode::OK, "{url}");
            }
        })
    });
    let all = futures_util::future::join_all(workers);
    for worker in tokio::time::timeout(RUN_LIMIT, all)
        .await
        .expect("run bounded")
    {
        worker.unwrap();
    }
}

/// `n` requests from `c` workers through `builder`'s client; panics unless
/// every one ends in a 200 and the mock received (`received`) at most
/// `n + c`. Prints what was sent and how long it took.
async fn load_timed(
    name: &str,
    builder: ClientBuilder,
    base: String,
    paths: &[&str],
    (c, n): (usize, usize),
    received: impl Fn() -> u64,
) {
    let started = std::time::Instant::now();
    load_n(client(builder), base, paths, c, n).await;
    let received = received();
    println!(
        "{name} c={c}: {received} sent for {n} successes in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        received <= (n + c) as u64,
        "{name} c={c}: {received} sent for {n} successes (allowed {})",
        n + c
    );
}

/// A client from `builder` that waits for resets up to 10 s.
fn client(builder: ClientBuilder) -> Client {
    builder
        .max_wait(Duration::from_secs(10))
        .max_attempts(10)
        .build()
}

/// Mounts `api`, runs the load through `builder`'s client, and checks what
/// the mock received (`received`).
async fn run<R: Respond + Clone + 'static>(
    name: &str,
    api: R,
    received: fn(&R) -> u64,
    builder: ClientBuilder,
    paths: &[&str],
    c: usize,
) {
    let server = mount(api.clone()).await;
    load(client(builder), server.uri(), paths, c).await;
    check(name, c, received(&api));
}

fn check(api: &str, c: usize, received: u64) {
    println!("{api} c={c}: {received} sent for {N} successes");
    assert!(
        received <= (N + c) as u64,
        "{api} c={c}: {received} sent for {N} successes (allowed {})",
        N + c
    );
}

/// A test at one worker and one at four, each ignored with a reason when
/// one is given (`one = "…"`, `four = "…"`).
macro_rules! per_concurrency {
    ($name:ident, $run:ident $(, one = $one:literal)? $(, four = $four:literal)?) => {
        mod $name {
            per_concurrency!(@test one_worker, 1, $run $(, $one)?);
            per_concurrency!(@test four_workers, 4, $run $(, $four)?);
        }
    };
    (@test $test:ident, $c:literal, $run:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $test() {
            super::$run($c).await;
        }
    };
    (@test $test:ident, $c:literal, $run:ident, $why:literal) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = $why]
        async fn $test() {
            super::$run($c).await;
        }
    };
}

async fn openai_requests_bind(c: usize) {
    // 5 requests a second; tokens to spare.
    let api = OpenAiApi::new(5, 1_000_000, Duration::from_secs(1)).tokens_per_request(10);
    let builder = preset::OpenAi.client();
    run(
        "openai requests",
        api,
        OpenAiApi::received,
        builder,
        &["/v1/chat/completions"],
        c,
    )
    .await;
}
per_concurrency!(openai_requests, openai_requests_bind);

async fn openai_tokens_bind(c: usize) {
    // 100 requests but 500 tokens a second, 100 tokens a request.
    let api = OpenAiApi::new(100, 500, Duration::from_secs(1)).tokens_per_request(100);
    let builder = preset::OpenAi.client();
    run(
        "openai tokens",
        api,
        OpenAiApi::received,
        builder,
        &["/v1/chat/completions"],
        c,
    )
    .await;
}
per_concurrency!(openai_tokens, openai_tokens_bind);

/// Issue 32's reported row: two quotas, requests 20/s and tokens 1,000/s
/// at 100 a request (the tokens bind: 10 requests a second), c=4, 50
/// successes. A plain `Retry-After` client sent 66 requests; courteous,
/// reading only the requests quota, 73.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_quotas_requests_and_tokens() {
    const SUCCESSES: usize = 50;
    let c = 4;
    let api = OpenAiApi::new(20, 1_000, Duration::from_secs(1)).tokens_per_request(100);
    let server = mount(api.clone()).await;
    // The floor: a bucket of 10 requests' tokens, then 10 a second (4.0 s).
    load_timed(
        "two quotas",
        preset::OpenAi.client(),
        server.uri(),
        &["/v1/chat/completions"],
        (c, SUCCESSES),
        || api.received(),
    )
    .await;
}

/// What a run of `n` requests from `c` workers through `builder`'s client
/// ended with: successes, and how long it took. Unlike [`load_n`], a
/// request that fails does not panic.
async fn load_counting(builder: ClientBuilder, base: String, c: usize, n: usize) -> (u64, f64) {
    let client = client(builder);
    let next = Arc::new(AtomicUsize::new(0));
    let url = format!("{base}/v1/chat/completions");
    let started = std::time::Instant::now();
    let workers = (0..c).map(|_| {
        let (client, next, url) = (client.clone(), Arc::clone(&next), url.clone());
        tokio::spawn(async move {
            let mut ok = 0;
            while next.fetch_add(1, Ordering::Relaxed) < n {
                let sent = client.get(&url).send().await;
                ok += u64::from(sent.is_ok_and(|r| r.status() == StatusCode::OK));
            }
            ok
        })
    });
    let all = futures_util::future::join_all(workers);
    let done = tokio::time::timeout(RUN_LIMIT, all)
        .await
        .expect("run bounded");
    let ok = done.into_iter().map(Result::unwrap).sum();
    (ok, started.elapsed().as_secs_f64())
}

/// Issue 33: the `usage` of an answer settles its request's cost. A
/// gateway counts tokens in fixed windows of 1 s, 1,000 a window
/// (`token_windows`), and sends its token headers on one answer in ten
/// (`token_headers_every`); requests to spare; nothing declared. The first
/// 20 requests spend 100 tokens, the next 250 (`then_tokens_per_request`);
/// one worker, 40 successes. The floor: 10 a window, then 4: 7 windows,
/// 6.0 s, nothing refused.
///
/// With a reading on every answer, settling changes only the estimate of
/// what an undeclared request costs (every answer re-syncs the count to the
/// server's), and the fall between two readings gives it too. Here most
/// answers carry no reading: the preset, which reads `usage`, counts each
/// request at what it spent and prices the next at it from the first long
/// answer; the same client without it (`SignalParser::new()`) learns no
/// price from readings a window apart and is refused until its requests
/// pacer relearns the pace from refusals. Both are refused in a window
/// whose first answers carry no reading: past a window's end the count
/// holds nothing back until a reading names the next one (`metered.rs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_usage_settles_tokens_between_readings() {
    const SUCCESSES: usize = 40;
    let c = 1;
    let mut runs = Vec::new();
    for (name, builder) in [
        ("usage read", preset::OpenAi.client()),
        (
            "usage not read",
            preset::OpenAi.client().parser(SignalParser::new()),
        ),
    ] {
        let api = OpenAiApi::new(1_000, 1_000, Duration::from_secs(1))
            .token_windows()
            .tokens_per_request(100)
            .then_tokens_per_request(20, 250)
            .token_headers_every(10);
        let server = mount(api.clone()).await;
        let (ok, secs) = load_counting(builder, server.uri(), c, SUCCESSES).await;
        println!(
            "openai usage, {name}, c={c}: {} sent, {} refused, {ok} of {SUCCESSES} succeeded in {secs:.2} s (floor 6.00 s)",
            api.received(),
            api.rejected(),
        );
        runs.push((ok, api.rejected()));
    }
    let (ok, rejected) = runs[0];
    assert_eq!(ok, SUCCESSES as u64, "usage read: every request succeeds");
    assert!(
        rejected <= 2,
        "usage read: {rejected} refused (allowed 2: windows without an early reading)"
    );
}

/// A success the preset reads for its `usage` comes back to the caller
/// byte for byte: a whole answer (read), one longer than the body limit
/// (its prefix chained in front of the rest: no usage), a stream (never
/// read).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_bodies_come_back_whole() {
    let usage = r#""usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}"#;
    let whole = format!(r#"{{"object":"chat.completion",{usage}}}"#);
    let padding = "x".repeat(SignalParser::DEFAULT_BODY_LIMIT + 10_000);
    let long = format!(r#"{{"object":"chat.completion","pad":"{padding}",{usage}}}"#);
    let stream = format!("data: {whole}\n\ndata: [DONE]\n\n");
    for (path, body, media, read) in [
        ("/whole", &whole, "application/json", Some(21)),
        ("/long", &long, "application/json", None),
        ("/stream", &stream, "text/event-stream", None),
    ] {
        let server = MockServer::start().await;
        Mock::given(any())
            .respond_with(wiremock::ResponseTemplate::new(200).set_body_raw(body.clone(), media))
            .mount(&server)
            .await;
        let client = preset::OpenAi.client().build();
        let response = client
            .get(format!("{}{path}", server.uri()))
            .send()
            .await
            .unwrap();
        let report = response.extensions().get::<courteous::RetryReport>();
        let tokens = report
            .and_then(|report| report.last_signal().usage())
            .and_then(|usage| usage.get(courteous::signal::QuotaUnit::Tokens));
        assert_eq!(tokens, read, "{path}");
        assert_eq!(&response.text().await.unwrap(), body, "{path}");
    }
}

async fn anthropic_requests_bind(c: usize) {
    let api = AnthropicApi::new(5, 1_000_000, 1_000_000, Duration::from_secs(1))
        .tokens_per_request(10, 10);
    let builder = preset::Anthropic.client();
    run(
        "anthropic requests",
        api,
        AnthropicApi::received,
        builder,
        &["/v1/messages"],
        c,
    )
    .await;
}
per_concurrency!(anthropic_requests, anthropic_requests_bind);

async fn anthropic_output_tokens_bind(c: usize) {
    let api =
        AnthropicApi::new(100, 1_000_000, 500, Duration::from_secs(1)).tokens_per_request(10, 100);
    let server = mount(api.clone()).await;
    load(
        client(preset::Anthropic.client()),
        server.uri(),
        &["/v1/messages"],
        c,
    )
    .await;
    check("anthropic output tokens", c, api.received());
}
per_concurrency!(anthropic_output_tokens, anthropic_output_tokens_bind);

async fn discord_shared_bucket(c: usize) {
    // Two routes, one bucket of 5 per second.
    let api = DiscordApi::new(50).bucket(
        "d721dea6054f6322373d361f98e5c38b",
        5,
        Duration::from_secs(1),
        &["/api/v10/channels/1/messages", "/api/v10/channels/1/pins"],
    );
    let paths = ["/api/v10/channels/1/messages", "/api/v10/channels/1/pins"];
    let builder = preset::Discord.client();
    run(
        "discord shared bucket",
        api,
        DiscordApi::received,
        builder,
        &paths,
        c,
    )
    .await;
}
per_concurrency!(discord_shared, discord_shared_bucket);

/// Discord's global limit (50 a second, never announced) binds two
/// buckets with room: the preset declares it, so no request is refused.
async fn discord_global_limit(c: usize) {
    const SUCCESSES: usize = 150;
    let api = DiscordApi::new(50)
        .bucket("a", 1_000, Duration::from_secs(1), &["/api/v10/channels/1"])
        .bucket("b", 1_000, Duration::from_secs(1), &["/api/v10/channels/2"]);
    let server = mount(api.clone()).await;
    let paths = [
        "/api/v10/channels/1/messages",
        "/api/v10/channels/2/messages",
    ];
    load_timed(
        "discord global",
        preset::Discord.client(),
        server.uri(),
        &paths,
        (c, SUCCESSES),
        || api.received(),
    )
    .await;
}
per_concurrency!(discord_global, discord_global_limit);

/// A global refusal pauses every bucket: before its `retry_after` has run
/// out, no request on any route reaches the server but those already in
/// flight when the refusal was sent (at most `c - 1` a pause).
async fn discord_global_pause(c: usize) {
    let api = DiscordApi::new(4)
        .bucket("a", 100, Duration::from_secs(1), &["/api/v10/channels/1"])
        .bucket("b", 100, Duration::from_secs(1), &["/api/v10/channels/2"]);
    let server = mount(api.clone()).await;
    let paths = [
        "/api/v10/channels/1/messages",
        "/api/v10/channels/2/messages",
    ];
    load(client(preset::Discord.client()), server.uri(), &paths, c).await;
    assert!(
        api.rejected() > 0,
        "c={c}: the global limit was never reached"
    );
    let in_flight = c as u64 - 1;
    assert!(
        api.early() <= in_flight * api.pauses(),
        "c={c}: {} sent during {} global pauses",
        api.early(),
        api.pauses()
    );
}
per_concurrency!(discord_global_pauses_every_bucket, discord_global_pause);

async fn google_per_minute(c: usize) {
    let api = GoogleApi::new(5, Duration::from_secs(1));
    let builder = preset::Google.client();
    run(
        "google",
        api,
        GoogleApi::received,
        builder,
        &["/v1beta/models/m:generateContent"],
        c,
    )
    .await;
}
per_concurrency!(google, google_per_minute);

async fn github_primary(c: usize) {
    let api = GitHubApi::new(
        std::num::NonZeroU32::new(6).unwrap(),
        Duration::from_secs(2),
    );
    let builder = preset::GitHub.client();
    run(
        "github",
        api,
        GitHubApi::received,
        builder,
        &["/repos/o/r/issues"],
        c,
    )
    .await;
}
per_concurrency!(github, github_primary);

async fn gitlab_epoch_reset(c: usize) {
    let api = GitLabApi::new(6, Duration::from_secs(2));
    let builder = preset::GitLab.client();
    run(
        "gitlab",
        api,
        GitLabApi::received,
        builder,
        &["/api/v4/projects"],
        c,
    )
    .await;
}
per_concurrency!(gitlab, gitlab_epoch_reset);

async fn shopify_leaky_bucket(c: usize) {
    let api = ShopifyApi::new(4, 4);
    let builder = preset::Shopify.client();
    run(
        "shopify",
        api,
        ShopifyApi::received,
        builder,
        &["/admin/api/2025-07/products.json"],
        c,
    )
    .await;
}
per_concurrency!(shopify, shopify_leaky_bucket);

async fn azure_reads(c: usize) {
    let api = AzureApi::new(4, 4, Duration::from_secs(1));
    let builder = preset::Azure.client();
    run(
        "azure",
        api,
        AzureApi::received,
        builder,
        &["/subscriptions/s/resourcegroups"],
        c,
    )
    .await;
}
per_concurrency!(azure, azure_reads);

async fn reddit_window(c: usize) {
    let api = RedditApi::new(6, Duration::from_secs(2));
    let builder = preset::Reddit.client();
    run(
        "reddit",
        api,
        RedditApi::received,
        builder,
        &["/r/rust/hot"],
        c,
    )
    .await;
}
per_concurrency!(reddit, reddit_window);

async fn x_window(c: usize) {
    let api = XApi::new(6, Duration::from_secs(2));
    let builder = preset::X.client();
    run(
        "x",
        api,
        XApi::received,
        builder,
        &["/2/tweets/search/recent"],
        c,
    )
    .await;
}
per_concurrency!(x, x_window);

async fn aws_bucket(c: usize) {
    let api = AwsApi::new(4, 4);
    let builder = preset::Aws.client();
    run("aws", api, AwsApi::received, builder, &["/"], c).await;
}
per_concurrency!(aws, aws_bucket);
