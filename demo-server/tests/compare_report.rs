//! The comparison's verdicts follow the measurements, and the table and the
//! JSON carry every experiment.

use demo_server::Algorithm;
use demo_server::compare::CompareReport;
use demo_server::compare::clients::{ClientKind, ClientReport};
use demo_server::compare::experiments::edge::EdgeRow;
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
    // race, edge, courteous c=1, c=4, 3 replicas, herd (not measured).
    assert_eq!(
        verdicts(&report),
        [
            Some(true),
            Some(true),
            Some(true),
            Some(true),
            Some(true),
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
    assert!(json["herd"].is_null());
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
