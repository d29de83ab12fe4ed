//! Wrapped vs bare reqwest against a server with no limits.

use std::time::Instant;

use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support;
use crate::{Args, THROUGHPUT_MIN_RATIO};

/// Wrapped vs bare reqwest: the median over runs of the ratio of their
/// rates, each pair measured back to back in alternating order so a
/// neighbour's load hits both sides alike. An A/A pair (bare vs another bare
/// client) is measured the same way to show the noise floor.
pub(crate) async fn compare(args: &Args, concurrency: u64) -> Result<f64, String> {
    let server = MockServer::builder()
        .disable_request_recording()
        .start()
        .await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    let url = server.uri();
    let bare = Side::Bare(reqwest::Client::new());
    let control = Side::Bare(reqwest::Client::new());
    let wrapped = Side::Wrapped(support::polite::client(reqwest::Client::new(), true)?);
    for side in [&bare, &control, &wrapped] {
        // One unmeasured run each opens connections and warms caches.
        load(side, &url, 200, concurrency).await?;
    }
    let measured = paired(args, &bare, &wrapped, &url, concurrency).await?;
    let noise = paired(args, &bare, &control, &url, concurrency).await?;
    let ratio = measured.median_ratio;
    let verdict = if ratio >= THROUGHPUT_MIN_RATIO {
        "ok"
    } else {
        "MISS"
    };
    println!(
        "throughput C={concurrency} ({} pairs x {} req, no limits): wrapped/bare median ratio {ratio:.3}, \
         best {:.0}/{:.0} req/s = {:.3}; A/A control: median {:.3}, best {:.3}  {verdict}",
        args.runs,
        args.requests,
        measured.b_best,
        measured.a_best,
        measured.best_ratio(),
        noise.median_ratio,
        noise.best_ratio(),
    );
    Ok(ratio)
}

/// Over `--runs` pairs: the median of the `b / a` rate ratios, and each
/// side's best rate (the least disturbed by neighbours on a shared machine).
pub(crate) async fn paired(
    args: &Args,
    a: &Side,
    b: &Side,
    url: &str,
    concurrency: u64,
) -> Result<Paired, String> {
    let mut ratios = Vec::new();
    let (mut a_best, mut b_best) = (0.0_f64, 0.0_f64);
    for run in 0..args.runs {
        let (a_rate, b_rate) = if run % 2 == 0 {
            let a_rate = load(a, url, args.requests, concurrency).await?;
            (a_rate, load(b, url, args.requests, concurrency).await?)
        } else {
            let b_rate = load(b, url, args.requests, concurrency).await?;
            (load(a, url, args.requests, concurrency).await?, b_rate)
        };
        ratios.push(b_rate / a_rate);
        a_best = a_best.max(a_rate);
        b_best = b_best.max(b_rate);
    }
    Ok(Paired {
        median_ratio: median(&mut ratios),
        a_best,
        b_best,
    })
}

pub(crate) struct Paired {
    median_ratio: f64,
    a_best: f64,
    b_best: f64,
}

impl Paired {
    pub(crate) fn best_ratio(&self) -> f64 {
        self.b_best / self.a_best
    }
}

#[derive(Debug, Clone)]
pub(crate) enum Side {
    Bare(reqwest::Client),
    Wrapped(support::polite::Client),
}

/// `requests` GETs from `concurrency` tasks; requests per second.
pub(crate) async fn load(
    side: &Side,
    url: &str,
    requests: u64,
    concurrency: u64,
) -> Result<f64, String> {
    let started = Instant::now();
    let tasks: Vec<_> = (0..concurrency)
        .map(|task| {
            let share = requests / concurrency + u64::from(task < requests % concurrency);
            let (side, url) = (side.clone(), url.to_owned());
            tokio::spawn(async move {
                for _ in 0..share {
                    let response = match &side {
                        Side::Bare(client) => {
                            client.get(&url).send().await.map_err(|e| e.to_string())?
                        }
                        Side::Wrapped(client) => {
                            client.get(&url).send().await.map_err(|e| e.to_string())?
                        }
                    };
                    response.bytes().await.map_err(|e| e.to_string())?;
                }
                Ok::<_, String>(())
            })
        })
        .collect();
    for task in tasks {
        task.await.map_err(|e| e.to_string())??;
    }
    Ok(requests as f64 / started.elapsed().as_secs_f64())
}

pub(crate) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
