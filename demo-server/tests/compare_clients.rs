//! Reading the example clients' reports and calling them with the right arguments.

use demo_server::compare::clients::{ClientKind, ClientReport, parse_report};

#[test]
fn the_report_is_the_last_non_empty_line() {
    let stdout = "warming up\n{\"not\":\"it\"}\n{\"client\":\"polite\",\"sent\":101,\"ok\":100,\"throttled\":1,\"errors\":0,\"elapsed_ms\":4012}\n\n";
    let report = parse_report(stdout).expect("a report");
    assert_eq!(
        report,
        ClientReport {
            client: "polite".into(),
            sent: 101,
            ok: 100,
            throttled: 1,
            errors: 0,
            elapsed_ms: 4012,
            fleet: None,
        }
    );
    assert_eq!(report.wasted(), 1);
}

#[test]
fn a_fleet_member_reports_its_store_calls() {
    let stdout = "{\"client\":\"polite\",\"sent\":2,\"ok\":2,\"throttled\":0,\"errors\":0,\"elapsed_ms\":900,\"fleet\":{\"calls\":5,\"missed_deadline\":1,\"errors\":0}}";
    let report = parse_report(stdout).expect("a report");
    let fleet = report.fleet.expect("the fleet calls");
    assert_eq!(
        (fleet.calls, fleet.missed_deadline, fleet.errors),
        (5, 1, 0)
    );
}

#[test]
fn no_report_without_a_json_last_line() {
    assert_eq!(parse_report(""), None);
    assert_eq!(parse_report("{\"client\":\"x\"}\ndone\n"), None);
    assert_eq!(parse_report("{\"client\":\"x\",\"sent\":1}"), None);
    assert_eq!(
        parse_report(
            "{\"client\":\"x\",\"sent\":-1,\"ok\":0,\"throttled\":0,\"errors\":0,\"elapsed_ms\":1}"
        ),
        None
    );
}

#[test]
fn retry_after_only_is_polite_without_pacing() {
    assert_eq!(ClientKind::RetryAfterOnly.example(), "polite");
    assert_eq!(ClientKind::RetryAfterOnly.extra_args(), ["--no-pacing"]);
    assert_eq!(ClientKind::Courteous.example(), "polite");
    assert!(ClientKind::Courteous.extra_args().is_empty());
    assert_eq!(ClientKind::FixedDelay.example(), "fixed_delay");
    assert_eq!(ClientKind::Naive.example(), "naive");
    let slugs: std::collections::HashSet<_> = ClientKind::ALL.iter().map(|k| k.slug()).collect();
    assert_eq!(
        slugs.len(),
        ClientKind::ALL.len(),
        "client ids never collide"
    );
}

#[test]
fn every_client_is_a_subcommand_of_this_binary() {
    use clap::Parser;
    use demo_server::cli::{Cli, Command};
    for kind in ClientKind::ALL {
        let argv = [
            "demo-server",
            "client",
            kind.subcommand(),
            "--successes",
            "3",
        ]
        .into_iter()
        .chain(kind.extra_args().iter().copied());
        let parsed = Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert!(matches!(parsed.command, Command::Client(_)), "{kind:?}");
    }
}
