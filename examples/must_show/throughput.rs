//! Wrapped vs bare reqwest against a server with no limits.
//!
//! Two measures. Runs of `--requests` requests, each side on its own, paired
//! (below): the throughput at concurrency C as a user sees it, but a run of
//! its own meets the machine in its own state, and on a small shared
//! machine two identical clients differ by a few percent this way (the A/A
//! control shows how much). At concurrency 1 throughput is the inverse of
//! latency, so there the sides also take turns request by request and the
//! ratio of their summed latencies is the verdict: both meet the same
//! machine, and every cost of the wrapper is still inside its own requests'
//! latency.

use std::time::{Duration, Instant};

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
    let mut ratio = measured.median_ratio;
    let mut judged_on = "median ratio";
    if concurrency == 1 {
        let pairs = args.runs as u64 * args.requests / 2;
        let turns = interleaved(&bare, &wrapped, &url, pairs).await?;
        let turns_noise = interleaved(&bare, &control, &url, pairs).await?;
        println!(
            "latency C=1 ({pairs} pairs taking turns, no limits): wrapped/bare throughput {:.3} \
             (p50 {:.1} vs {:.1} µs); A/A control {:.3}",
            turns.ratio, turns.b_median_us, turns.a_median_us, turns_noise.ratio
        );
        ratio = turns.ratio;
        judged_on = "taking turns";
    }
    let verdict = if ratio >= THROUGHPUT_MIN_RATIO {
        "ok"
    } else {
        "MISS"
    };
    println!(
        "throughput C={concurrency} ({} pairs x {} req, no limits): wrapped/bare median ratio {:.3}, \
         best {:.0}/{:.0} req/s = {:.3}; A/A control: median {:.3}, best {:.3}  {verdict} ({judged_on}: {ratio:.3})",
        args.runs,
        args.requests,
        measured.median_ratio,
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

/// What taking turns measured.
pub(crate) struct Turns {
    /// `b`'s throughput over `a`'s: at concurrency 1, `a`'s summed latency
    /// over `b`'s.
    ratio: f64,
    a_median_us: f64,
    b_median_us: f64,
}

/// `pairs` pairs of GETs, one by each side in turn (alternating which goes
/// first).
pub(crate) async fn interleaved(
    a: &Side,
    b: &Side,
    url: &str,
    pairs: u64,
) -> Result<Turns, String> {
    let (mut a_total, mut b_total) = (Duration::ZERO, Duration::ZERO);
    let (mut a_us, mut b_us) = (Vec::new(), Vec::new());
    for pair in 0..pairs {
        let order = if pair % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        };
        for a_turn in order {
            let started = Instant::now();
            get(if a_turn { a } else { b }, url).await?;
            let took = started.elapsed();
            let us = took.as_secs_f64() * 1e6;
            if a_turn {
                a_total += took;
                a_us.push(us);
            } else {
                b_total += took;
                b_us.push(us);
            }
        }
    }
    Ok(Turns {
        ratio: a_total.as_secs_f64() / b_total.as_secs_f64(),
        a_median_us: median(&mut a_us),
        b_median_us: median(&mut b_us),
    })
}

/// One GET, its body read.
async fn get(side: &Side, url: &str) -> Result<(), String> {
    let response = match side {
        Side::Bare(client) => client.get(url).send().await.map_err(|e| e.to_string())?,
        Side::Wrapped(client) => client.get(url).send().await.map_err(|e| e.to_string())?,
    };
    response.bytes().await.map_err(|e| e.to_string())?;
    Ok(())
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
                    get(&side, &url).await?;
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
