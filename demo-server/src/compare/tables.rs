//! The terminal tables, one per experiment.

use std::fmt::{self, Write};

use super::clients::ClientKind;
use super::experiments::cost::CostResult;
use super::experiments::edge::EdgeRow;
use super::experiments::fleet_cost::FleetCost;
use super::experiments::grid::{FLOOR_FACTOR, GridRow};
use super::experiments::herd::HerdRow;
use super::experiments::limiters::{LIMIT, LimiterRow, WINDOW_MS};
use super::experiments::race::{RACY_GAP, RaceRow};
use super::experiments::waste::{CAPACITY, RATE, SETUPS, SUCCESSES, WasteRow};
use super::seed;

fn heading(f: &mut fmt::Formatter<'_>, title: &str) -> fmt::Result {
    writeln!(f, "\n{title}")
}

/// Experiment 0: the operating points, then courteous's rows named (above
/// [`FLOOR_FACTOR`] × the floor, more than N + C sent, stopped short).
pub fn grid(f: &mut fmt::Formatter<'_>, rows: &[GridRow]) -> fmt::Result {
    if rows.is_empty() {
        return Ok(());
    }
    heading(
        f,
        "0. operating points: N successes per client, each point its own route, fresh quota per run",
    )?;
    writeln!(
        f,
        "  {:<20} {:<14} {:<14} {:<12} {:>6} {:>2} {:>4}  {:<20} {:>5} {:>4} {:>8} {:>8} {:>6}",
        "point",
        "algorithm",
        "limit",
        "headers",
        "rtt",
        "C",
        "N",
        "client",
        "sent",
        "ok",
        "elapsed",
        "floor",
        "×floor"
    )?;
    for r in rows {
        let p = &r.point;
        let mut line = format!(
            "  {:<20} {:<14} {:<14} {:<12} {:>3} ms {:>2} {:>4}  {:<20}",
            p.name,
            p.algorithm.name(),
            p.limit_label(),
            p.headers.name(),
            p.latency_ms,
            p.concurrency,
            p.successes,
            r.client.label()
        );
        match (&r.report, r.floor_ms) {
            (Some(c), Some(floor)) => {
                let _ = write!(
                    line,
                    " {:>5} {:>4} {:>6.2} s {:>6.2} s {:>6}",
                    c.sent,
                    c.ok,
                    c.elapsed_ms as f64 / 1000.0,
                    floor as f64 / 1000.0,
                    r.ratio.map_or("-".to_owned(), |x| format!("{x:.2}"))
                );
            }
            _ => {
                let _ = write!(line, "  {}", r.error.as_deref().unwrap_or("no result"));
            }
        }
        writeln!(f, "{line}")?;
    }
    let named: Vec<_> = rows
        .iter()
        .filter(|r| r.client == ClientKind::Courteous)
        .filter_map(|r| Some((r, r.named()?)))
        .collect();
    let heading = format!(
        "  courteous rows above {FLOOR_FACTOR}× the floor, with more than N + C sent, or short of N"
    );
    if named.is_empty() {
        return writeln!(f, "{heading}: none");
    }
    writeln!(f, "{heading}:")?;
    for (r, why) in named {
        writeln!(f, "    {}: {why}", r.point.name)?;
    }
    Ok(())
}

/// Experiment 1.
pub fn race(f: &mut fmt::Formatter<'_>, rows: &[RaceRow]) -> fmt::Result {
    let Some(first) = rows.first() else {
        return Ok(());
    };
    heading(
        f,
        &format!(
            "1. race: {} concurrent requests, bucket of {} (racy-bucket sleeps {} ms between read and write)",
            first.requests,
            first.capacity,
            RACY_GAP.as_millis()
        ),
    )?;
    writeln!(
        f,
        "  {:<16} {:>11}  {:<22} seed",
        "algorithm", "round trips", "admitted per run"
    )?;
    for r in rows {
        let runs: Vec<String> = r
            .admitted
            .iter()
            .map(|n| format!("{n}/{}", r.requests))
            .collect();
        writeln!(
            f,
            "  {:<16} {:>11}  {:<22} {}",
            r.algorithm.name(),
            r.round_trips,
            runs.join(", "),
            seed::race(r.algorithm).unwrap_or("-")
        )?;
    }
    Ok(())
}

/// Experiment 2.
pub fn edge(f: &mut fmt::Formatter<'_>, rows: &[EdgeRow]) -> fmt::Result {
    let Some(first) = rows.first() else {
        return Ok(());
    };
    heading(
        f,
        &format!(
            "2. window edge: limit {} per {} ms; {} just before an edge, {} just after",
            first.limit, first.window_ms, first.limit, first.limit
        ),
    )?;
    writeln!(
        f,
        "  {:<16} {:>7} {:>7} {:>9} {:>10}  seed (100 per 10 s)",
        "algorithm", "before", "after", "admitted", "within"
    )?;
    for r in rows {
        writeln!(
            f,
            "  {:<16} {:>7} {:>7} {:>9} {:>7} ms  {}",
            r.algorithm.name(),
            r.before,
            r.after,
            r.total(),
            r.span_ms,
            seed::edge(r.algorithm).unwrap_or("-")
        )?;
    }
    Ok(())
}

/// Experiment 3.
pub fn waste(f: &mut fmt::Formatter<'_>, rows: &[WasteRow]) -> fmt::Result {
    if rows.is_empty() {
        return Ok(());
    }
    heading(
        f,
        &format!(
            "3. wasted requests: {SUCCESSES} successes needed, bucket of {CAPACITY} refilled {RATE}/s"
        ),
    )?;
    writeln!(
        f,
        "  {:<22} {:<17} {:>7} {:>5} {:>7} {:>8} {:>6} {:>9}  seed sent, time",
        "client", "setup", "sent", "ok", "wasted", "wasted%", "429s", "elapsed"
    )?;
    for r in rows {
        let mut line = String::new();
        let _ = write!(line, "  {:<22} {:<17}", r.client.label(), r.setup.label());
        match (&r.report, r.wasted_percent()) {
            (Some(c), Some(pct)) => {
                let _ = write!(
                    line,
                    " {:>7} {:>5} {:>7} {:>7.1}% {:>6} {:>7.2} s",
                    c.sent,
                    c.ok,
                    c.wasted(),
                    pct,
                    c.throttled,
                    c.elapsed_ms as f64 / 1000.0
                );
                match seed::waste(r.client).filter(|_| r.setup == SETUPS[0]) {
                    Some((sent, secs)) => {
                        let _ = write!(line, "  {sent:>6} {secs:.2} s");
                    }
                    None => line.push_str("           -"),
                }
                if r.seen.received != c.sent {
                    let _ = write!(line, "  (server saw {})", r.seen.received);
                }
            }
            _ => {
                let _ = write!(line, "  {}", r.error.as_deref().unwrap_or("no result"));
            }
        }
        writeln!(f, "{line}")?;
    }
    Ok(())
}

/// Experiment 3b.
pub fn limiters(f: &mut fmt::Formatter<'_>, rows: &[LimiterRow]) -> fmt::Result {
    if rows.is_empty() {
        return Ok(());
    }
    heading(
        f,
        &format!(
            "3b. every limiter: {SUCCESSES} successes needed, {LIMIT} per {WINDOW_MS} ms (bucket: {LIMIT} refilled {LIMIT}/s)"
        ),
    )?;
    writeln!(
        f,
        "  {:<16} {:<12} {:>2}  {:<22} {:>6} {:>5} {:>6} {:>9} {:>8} {:>6}",
        "algorithm", "headers", "C", "client", "sent", "ok", "429s", "elapsed", "floor", "×floor"
    )?;
    for r in rows {
        let mut line = format!(
            "  {:<16} {:<12} {:>2}  {:<22}",
            r.cell.algorithm.name(),
            r.cell.headers.name(),
            r.cell.concurrency,
            r.client.label()
        );
        match (&r.report, r.floor_ms) {
            (Some(c), Some(floor)) => {
                let _ = write!(
                    line,
                    " {:>6} {:>5} {:>6} {:>7.2} s {:>6.2} s {:>6.2}",
                    c.sent,
                    c.ok,
                    c.throttled,
                    c.elapsed_ms as f64 / 1000.0,
                    floor as f64 / 1000.0,
                    c.elapsed_ms as f64 / floor.max(1) as f64
                );
            }
            _ => {
                let _ = write!(line, "  {}", r.error.as_deref().unwrap_or("no result"));
            }
        }
        writeln!(f, "{line}")?;
    }
    Ok(())
}

/// Experiment 4.
pub fn herd(
    f: &mut fmt::Formatter<'_>,
    rows: &[HerdRow],
    cost: Option<&FleetCost>,
    skipped: Option<&str>,
) -> fmt::Result {
    if rows.is_empty() {
        return Ok(());
    }
    heading(
        f,
        &format!(
            "4. herd: polite processes on one client id (one quota: {CAPACITY} + {RATE}/s), about 200 successes per herd"
        ),
    )?;
    writeln!(
        f,
        "  {:>9}  {:<30} {:>4} {:>5} {:>5} {:>7} {:>6} {:>8} {:>6}  finished",
        "processes", "store", "each", "sent", "ok", "wasted", "%", "seconds", "quota"
    )?;
    for r in rows {
        writeln!(
            f,
            "  {:>9}  {:<30} {:>4} {:>5} {:>5} {:>7} {:>6.1} {:>8.2} {:>5.1}%  {}/{}",
            r.clients,
            r.store_label(),
            r.successes_each,
            r.sent,
            r.ok,
            r.wasted(),
            r.wasted_percent,
            r.elapsed_ms as f64 / 1000.0,
            100.0 * r.quota_used,
            r.finished,
            r.clients
        )?;
        for failure in r.failures.iter().take(3) {
            writeln!(f, "             failed: {failure}")?;
        }
    }
    if let Some(why) = skipped {
        writeln!(f, "  fleet rows skipped: {why}")?;
    }
    if let Some(c) = cost {
        writeln!(
            f,
            "  fleet store calls beside PING on its Redis, {} rounds: PING p50/p99 {:.1}/{:.1} µs; reserve {:.1}/{:.1} µs; publish {:.1}/{:.1} µs",
            c.rounds,
            c.ping.p50_us,
            c.ping.p99_us,
            c.reserve.p50_us,
            c.reserve.p99_us,
            c.publish.p50_us,
            c.publish.p99_us
        )?;
    }
    Ok(())
}

/// Experiment 5.
pub fn cost(f: &mut fmt::Formatter<'_>, cost: Option<&CostResult>) -> fmt::Result {
    let Some(c) = cost else {
        return Ok(());
    };
    heading(
        f,
        &format!("5. cost of one check, {} sequential", c.iterations),
    )?;
    writeln!(
        f,
        "  {:<18} {:>11} {:>9} {:>9}  seed p50/p99 µs",
        "check", "round trips", "p50 µs", "p99 µs"
    )?;
    if let Some(p) = c.ping {
        writeln!(
            f,
            "  {:<18} {:>11} {:>9.1} {:>9.1}",
            "PING (raw)", 1, p.p50_us, p.p99_us
        )?;
    }
    if let Some(e) = c.empty_script {
        writeln!(
            f,
            "  {:<18} {:>11} {:>9.1} {:>9.1}",
            "empty Lua script", 1, e.p50_us, e.p99_us
        )?;
    }
    for check in &c.checks {
        writeln!(
            f,
            "  {:<18} {:>11} {:>9.1} {:>9.1}  {}",
            check.algorithm.name(),
            check.round_trips,
            check.latency.p50_us,
            check.latency.p99_us,
            seed::cost(check.algorithm)
                .map_or("-".to_owned(), |(p50, p99)| format!("{p50:.0} / {p99:.0}"))
        )?;
    }
    Ok(())
}
