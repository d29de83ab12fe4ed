//! The two server-side experiments of the comparison, end to end on a real
//! `redis-server` (started by `compare` itself on a free loopback port): they
//! take about a second and must reproduce the seed's findings. The client
//! experiments take a minute and run only from the command line.

use demo_server::HeaderStyle;
use demo_server::compare::{self, CompareArgs, Experiment};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn race_and_window_edge_reproduce_the_seed() {
    assert!(
        demo_server::redis_process::RedisServer::binary().is_some(),
        "redis-server on PATH (CI installs it)"
    );
    let args = CompareArgs {
        redis: None,
        json: false,
        svg: None,
        headers: HeaderStyle::All,
        matrix: false,
        algorithms: Vec::new(),
        styles: Vec::new(),
        concurrency: Vec::new(),
        only: vec![Experiment::Race, Experiment::Edge],
    };
    let program = compare::clients::ClientProgram::at(env!("CARGO_BIN_EXE_demo-server").into());
    let report = compare::run_with(args, program)
        .await
        .expect("comparison runs");
    assert!(
        report.store.starts_with("redis at 127.0.0.1:"),
        "{}",
        report.store
    );
    assert_eq!(report.race.len(), 2);
    assert_eq!(report.edge.len(), 3);
    assert!(report.waste.is_empty() && report.herd.is_empty() && report.cost.is_none());
    assert_eq!(report.svg, None, "no timeline without client runs");
    let (race, edge) = (&report.targets[0], &report.targets[1]);
    assert_eq!(race.met, Some(true), "{}: {}", race.claim, race.measured);
    assert_eq!(edge.met, Some(true), "{}: {}", edge.claim, edge.measured);
    assert!(report.targets[2..].iter().all(|t| t.met.is_none()));
}
