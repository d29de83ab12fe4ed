//! The courteous example client, shared by `polite` and `must_show` so the
//! measurement runs exactly what the example runs.

use super::{CommonArgs, FleetCalls, Outcome, Report};

/// The client type the examples wrap reqwest in.
pub type Client = courteous::Client;

/// courteous with default settings over `http`; `pacing: false` is the
/// "Retry-After only" mode (hints honoured, no slowing down before a 429).
pub fn client(http: reqwest::Client, pacing: bool) -> Result<Client, String> {
    Ok(courteous::Client::builder()
        .pacing(pacing)
        .http_client(http)
        .build())
}

/// Run the load loop with a polite client; `sent` and `throttled` come from
/// the client's per-scope counters, so they include internal retries.
pub async fn run(args: &CommonArgs, pacing: bool) -> Result<Report, String> {
    run_with(args, pacing, None).await
}

/// [`run`], sharing the quota with every process given the same
/// `fleet_redis` URL (feature `redis`). A Redis that cannot be reached at
/// start-up is reported on stderr and the run goes on alone: Redis trouble
/// never stops a request.
pub async fn run_with(
    args: &CommonArgs,
    pacing: bool,
    fleet_redis: Option<&str>,
) -> Result<Report, String> {
    let http = args.http_client()?;
    let (client, fleet_calls) = match fleet_redis {
        None => (client(http, pacing)?, None),
        Some(url) => fleet_client(http, pacing, url).await?,
    };
    let url = args.url.clone();
    let sender = client.clone();
    let tally = super::drive(args, move || {
        let request = sender.get(url.as_str());
        async move {
            match request.send().await {
                Ok(response) => {
                    let outcome = super::classify(response.status());
                    let _ = response.bytes().await;
                    outcome
                }
                // Gave up on a 429/503 (attempts, budget, a wait too long).
                Err(error) if error.is_rate_limited() => Outcome::Throttled,
                Err(_) => Outcome::Error,
            }
        }
    })
    .await;
    let (sent, throttled) = client
        .stats()
        .iter()
        .fold((0, 0), |(sent, throttled), (_, stats)| {
            (sent + stats.sent(), throttled + stats.throttled())
        });
    let name = if pacing { "polite" } else { "polite_no_pacing" };
    Ok(Report {
        sent,
        throttled,
        fleet: fleet_calls.map(|calls| calls()),
        ..Report::from_tally(name, &tally)
    })
}

/// Reads the fleet store's call counters at the end of a run.
type FleetReader = Box<dyn Fn() -> FleetCalls + Send + Sync>;

#[cfg(feature = "redis")]
async fn fleet_client(
    http: reqwest::Client,
    pacing: bool,
    url: &str,
) -> Result<(Client, Option<FleetReader>), String> {
    let builder = courteous::Client::builder()
        .pacing(pacing)
        .http_client(http);
    match courteous::fleet::RedisFleet::builder(url).connect().await {
        Ok(fleet) => {
            let counted = fleet.clone();
            let read: FleetReader = Box::new(move || {
                let c = counted.counters();
                FleetCalls {
                    calls: c.calls,
                    missed_deadline: c.missed_deadline,
                    errors: c.errors,
                }
            });
            Ok((builder.fleet(fleet).build(), Some(read)))
        }
        Err(e) => {
            eprintln!("polite: fleet store at {url} unavailable ({e}); pacing alone");
            Ok((builder.build(), None))
        }
    }
}

#[cfg(not(feature = "redis"))]
async fn fleet_client(
    _: reqwest::Client,
    _: bool,
    _: &str,
) -> Result<(Client, Option<FleetReader>), String> {
    Err(
        "--fleet-redis needs the `redis` feature: cargo build --example polite --features redis"
            .into(),
    )
}
