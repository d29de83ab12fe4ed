//! The operating-point experiment end to end on two small points: each
//! client runs as `demo-server client …` (this package's binary) through
//! the recording proxy, and each row carries its floor and its ratio.

use demo_server::compare::clients::{ClientKind, ClientProgram};
use demo_server::compare::experiments::{Lab, grid};
use demo_server::lab::{OperatingPoint, POINTS};
use demo_server::local_store::LocalStore;
use demo_server::{Algorithm, HeaderStyle};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_client_runs_on_each_point_against_its_floor() {
    let program = ClientProgram::at(env!("CARGO_BIN_EXE_demo-server").into());
    let lab = Lab::new(LocalStore::memory(), program, HeaderStyle::All);
    // A bucket of 5/s (the 10th unit 1 s after the first send) and a
    // concurrency limit of 2 at 100 ms (4 requests: 2 rounds, 200 ms).
    let points = [
        OperatingPoint {
            successes: 10,
            ..POINTS[0]
        },
        OperatingPoint {
            name: "concurrency-small",
            algorithm: Algorithm::Concurrency,
            limit: 2,
            window_ms: 30_000,
            headers: HeaderStyle::RetryAfter,
            latency_ms: 100,
            jitter_ms: 0,
            concurrency: 2,
            successes: 4,
        },
    ];
    let rows = grid::run(&lab, &points).await.expect("the grid runs");
    assert_eq!(rows.len(), points.len() * grid::CLIENTS.len());
    for (row, (point, client)) in rows.iter().zip(
        points
            .iter()
            .flat_map(|p| grid::CLIENTS.iter().map(move |c| (p, *c))),
    ) {
        assert_eq!((row.point.name, row.client), (point.name, client));
        let report = row.report.as_ref().unwrap_or_else(|| panic!("{row:?}"));
        assert_eq!(report.ok, point.successes, "{row:?}");
        assert_eq!(
            row.seen.received, report.sent,
            "the proxy saw every request"
        );
        let floor = row.floor_ms.expect("a floor");
        assert_eq!(
            floor,
            if point.algorithm == Algorithm::Concurrency {
                200
            } else {
                1000
            }
        );
        assert!(row.ratio.is_some_and(|r| r > 0.0), "{row:?}");
    }
    let polite = rows
        .iter()
        .find(|r| r.client == ClientKind::Courteous)
        .expect("a courteous row");
    assert_eq!(polite.max_sent(), 11, "N + C");
}
