//! What the herds must show (issue 11), checked against the rows.

use super::experiments::fleet_cost::FleetCost;
use super::experiments::herd::{HerdRow, SIZES, STOPPED};
use super::report::{Target, not_measured};

/// The local herd of 10 (issue 5), the fleet at every size, the stopped
/// Redis, and the cost line.
pub fn all(rows: &[HerdRow], cost: Option<&FleetCost>) -> Vec<Target> {
    let row = |clients: usize, fleet: bool| {
        rows.iter().find(|r| {
            r.clients == clients && r.fleet == fleet && r.redis_stopped_after_ms.is_none()
        })
    };
    let mut targets = vec![local_ten(row(10, false))];
    for (clients, _) in SIZES {
        targets.push(fleet_size(clients, row(clients, true)));
    }
    let stopped = rows.iter().find(|r| r.redis_stopped_after_ms.is_some());
    targets.push(stopped_target(stopped, row(STOPPED.0, false)));
    targets.push(cost_target(cost));
    targets
}

fn figures(r: &HerdRow) -> String {
    format!(
        "{} sent, {} ok, {:.1} % wasted, {:.1} % of the quota, {}/{} finished",
        r.sent,
        r.ok,
        r.wasted_percent,
        100.0 * r.quota_used,
        r.finished,
        r.clients
    )
}

fn local_ten(row: Option<&HerdRow>) -> Target {
    let claim = "herd of 10 processes, local engine: ≤ 10 % wasted, ≥ 88 % of the quota".to_owned();
    match row {
        Some(r) => Target {
            claim,
            met: Some(r.wasted_percent <= 10.0 && r.quota_used >= 0.88 && r.finished == r.clients),
            measured: figures(r),
        },
        None => not_measured(claim),
    }
}

fn fleet_size(clients: usize, row: Option<&HerdRow>) -> Target {
    let claim =
        format!("herd of {clients} processes, fleet store: ≤ 1 % wasted at ≥ 95 % of the quota");
    match row {
        Some(r) => Target {
            claim,
            met: Some(r.wasted_percent <= 1.0 && r.quota_used >= 0.95 && r.finished == r.clients),
            measured: figures(r),
        },
        None => not_measured(claim),
    }
}

fn stopped_target(stopped: Option<&HerdRow>, local: Option<&HerdRow>) -> Target {
    let claim = format!(
        "fleet Redis stopped mid-run ({} processes): every process finishes, waste no worse than the local engine's",
        STOPPED.0
    );
    match (stopped, local) {
        (Some(s), Some(l)) => Target {
            claim,
            met: Some(
                s.finished == s.clients
                    && s.failures.is_empty()
                    && s.ok >= s.clients as u64 * s.successes_each
                    && s.wasted_percent <= l.wasted_percent,
            ),
            measured: format!(
                "{}; local engine {:.1} % wasted",
                figures(s),
                l.wasted_percent
            ),
        },
        _ => not_measured(claim),
    }
}

fn cost_target(cost: Option<&FleetCost>) -> Target {
    let claim = "fleet store cost: p50/p99 of its calls beside a Redis PING, same run".to_owned();
    match cost {
        Some(c) => Target {
            claim,
            met: Some(true),
            measured: format!(
                "PING {:.1}/{:.1} µs, reserve {:.1}/{:.1} µs ({:.2}× PING at p50), publish {:.1}/{:.1} µs",
                c.ping.p50_us,
                c.ping.p99_us,
                c.reserve.p50_us,
                c.reserve.p99_us,
                c.reserve.p50_us / c.ping.p50_us.max(f64::MIN_POSITIVE),
                c.publish.p50_us,
                c.publish.p99_us
            ),
        },
        None => not_measured(claim),
    }
}
