//! The comparison's verdicts follow the measurements, and the table and the
//! JSON carry every experiment.

use demo_server::Algorithm;
use demo_server::compare::CompareReport;
use demo_server::compare::clients::{ClientKind, ClientReport};
use demo_server::compare::experiments::edge::EdgeRow;
use demo_server::compare::experiments::herd::HerdRow;
use demo_server::compare::experiments::race::RaceRow;
use demo_server::compare::experiments::waste::{SETUPS, WasteRow};
use demo_server::compare::recorder::Seen;

fn client(kind: ClientKind, setup: usize, sent: u64, ok: u64, elapsed_ms: u64) -> WasteRow {
    WasteRow {
        client: kind,
        setup: SETUPS[setup],
        client_id: format!("{}-{setup}", kind.slug()),
        report: Some(ClientReport {
            client: kind.example().into(),
            sent,
            ok,
            throttled: sent - ok,
            errors: 0,
            elapsed_ms,
            fleet: None,
        }),
        seen: Seen {
            received: sent,
            allowed: ok,
            throttled: sent - ok,
        },
        error: None,
    }
}

fn race(algorithm: Algorithm, admitted: [usize; 3]) -> RaceRow {
    RaceRow {
        algorithm,
        round_trips: algorithm.round_trips(),
        admitted: admitted.to_vec(),
        requests: 50,
        capacity: 20,
    }
}

fn edge(algorithm: Algorithm, before: u64, after: u64, f: f64) -> EdgeRow {
    EdgeRow {
        algorithm,
        before,
        after,
        span_ms: 350,
        f,
        limit: 100,
        window_ms: 1000,
    }
}

fn measured() -> CompareReport {
    let mut report = CompareReport {
        store: "embedded".into(),
        race: vec![
            race(Algorithm::RacyBucket, [20, 50, 50]),
            race(Algorithm::TokenBucket, [20, 20, 20]),
        ],
        edge: vec![
            edge(Algorithm::FixedWindow, 100, 100, 0.1),
            edge(Algorithm::SlidingLog, 100, 0, 0.1),
            edge(Algorithm::SlidingWindow, 100, 8, 0.1),
        ],
        waste: vec![
            client(ClientKind::Naive, 0, 40_000, 100, 4_000),
            client(ClientKind::RetryAfterOnly, 0, 104, 100, 4_040),
            client(ClientKind::Courteous, 0, 100, 100, 4_010),
            client(ClientKind::Courteous, 1, 101, 100, 4_020),
            client(ClientKind::Courteous, 2, 100, 100, 4_030),
        ],
        ..CompareReport::default()
    };
    report.evaluate();
    report
}

fn verdicts(report: &CompareReport) -> Vec<Option<bool>> {
    report.targets.iter().map(|t| t.met).collect()
}

#[test]
fn targets_follow_the_measurements() {
    let report = measured();
    // race, edge, courteous c=1, c=4, 3 replicas; then the herds (local 10,
    // fleet 10/30/100, Redis stopped, cost), not measured.
    assert_eq!(
        verdicts(&report),
        [
            Some(true),
            Some(true),
            Some(true),
            Some(true),
            Some(true),
            None,
            None,
            None,
            None,
            None,
            None
        ]
    );
}

#[test]
fn missing_a_target_is_reported() {
    let mut report = measured();
    report.race[1].admitted[2] = 21; // atomic bucket over-admitted once
    report.edge[1].after = 3; // sliding log let some through
    report.waste[2] = client(ClientKind::Courteous, 0, 100, 100, 4_200); // slower than Retry-After only
    report.waste[3] = client(ClientKind::Courteous, 1, 103, 100, 4_020); // 2.9 % wasted
    report.evaluate();
    assert_eq!(
        verdicts(&report),
        [
            Some(false),
            Some(false),
            Some(false),
            Some(false),
            Some(true),
            None,
            None,
            None,
            None,
            None,
            None
        ]
    );
    let table = report.to_string();
    assert_eq!(table.matches("MISSED").count(), 4, "{table}");
    assert!(table.contains("n/a"), "{table}");
}

#[test]
fn the_sliding_window_bound_grows_with_how_far_past_the_edge_it_ran() {
    let mut report = measured();
    report.edge[2] = edge(Algorithm::SlidingWindow, 100, 15, 0.1);
    report.evaluate();
    assert_eq!(report.targets[1].met, Some(false), "15 > ceil(100 · 0.1)");
    report.edge[2] = edge(Algorithm::SlidingWindow, 100, 15, 0.2);
    report.evaluate();
    assert_eq!(report.targets[1].met, Some(true), "15 ≤ ceil(100 · 0.2)");
}

#[test]
fn the_table_has_every_experiment_and_the_json_every_field() {
    let report = measured();
    let table = report.to_string();
    for heading in [
        "1. race",
        "2. window edge",
        "3. wasted requests",
        "must show",
    ] {
        assert!(table.contains(heading), "{heading} in {table}");
    }
    assert!(table.contains("20/50, 50/50, 50/50"), "{table}");
    assert!(table.contains("courteous defaults"), "{table}");
    let json = serde_json::to_value(&report).unwrap();
    for key in [
        "store", "headers", "seconds", "race", "edge", "waste", "herd", "cost", "svg", "targets",
    ] {
        assert!(json.get(key).is_some(), "{key} in {json}");
    }
    let row = &json["waste"][0];
    assert_eq!(row["client"], "naive");
    assert_eq!(row["setup"]["replicas"], 1);
    assert_eq!(row["report"]["sent"], 40_000);
    assert_eq!(json["race"][0]["algorithm"], "racy-bucket");
    assert_eq!(json["targets"][0]["met"], true);
    assert_eq!(json["herd"], serde_json::json!([]));
}

fn herd_row(clients: usize, fleet: bool, stopped: bool, sent: u64, ok: u64, quota: f64) -> HerdRow {
    HerdRow {
        client_id: format!("herd{clients}"),
        clients,
        fleet,
        redis_stopped_after_ms: stopped.then_some(2000),
        successes_each: ok / clients as u64,
        finished: clients,
        failures: Vec::new(),
        sent,
        ok,
        throttled: sent - ok,
        wasted_percent: 100.0 * (sent - ok) as f64 / sent as f64,
        elapsed_ms: 9_000,
        rate_per_s: ok as f64 / 9.0,
        quota_used: quota,
        fleet_calls: None,
        refused_at_ms: Vec::new(),
    }
}

#[test]
fn herd_rows_are_checked_per_size_and_listed_in_json() {
    let mut report = measured();
    report.herd = vec![
        herd_row(10, false, false, 206, 200, 0.91),
        herd_row(10, true, false, 200, 200, 0.97),
        herd_row(30, false, false, 260, 210, 0.80),
        // 2 wasted of 212: 0.9 %, but 94 % of the quota: missed.
        herd_row(30, true, false, 212, 210, 0.94),
        herd_row(100, true, false, 202, 200, 0.96),
        herd_row(30, true, true, 230, 210, 0.85),
    ];
    report.evaluate();
    let herd: Vec<_> = verdicts(&report).into_iter().skip(5).collect();
    // local 10, fleet 10, fleet 30, fleet 100, stopped (8.7 % vs local 19.2 %), cost.
    assert_eq!(
        herd,
        [
            Some(true),
            Some(true),
            Some(false),
            Some(true),
            Some(true),
            None
        ]
    );
    let json = serde_json::to_value(&report).unwrap();
    let rows = json["herd"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    for key in ["clients", "fleet", "sent", "ok", "quota_used"] {
        assert!(rows[0].get(key).is_some(), "{key} in {}", rows[0]);
    }
    assert_eq!(rows[1]["fleet"], true);
    let table = report.to_string();
    assert!(table.contains("fleet, Redis stopped at 2 s"), "{table}");
}

#[test]
fn courteous_may_not_be_slower_than_retry_after_only_beyond_timer_noise() {
    let mut report = measured();
    // Retry-After only took 4,040 ms; 1 % is 40 ms.
    report.waste[2] = client(ClientKind::Courteous, 0, 100, 100, 4_080);
    report.evaluate();
    assert_eq!(report.targets[2].met, Some(true), "{:?}", report.targets[2]);
    report.waste[2] = client(ClientKind::Courteous, 0, 100, 100, 4_081);
    report.evaluate();
    assert_eq!(
        report.targets[2].met,
        Some(false),
        "{:?}",
        report.targets[2]
    );
    report.waste[2] = client(ClientKind::Courteous, 0, 101, 100, 4_000);
    report.evaluate();
    assert_eq!(
        report.targets[2].met,
        Some(false),
        "one wasted request misses it"
    );
}
