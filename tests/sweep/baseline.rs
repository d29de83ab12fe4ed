//! A sweep against an earlier one (`COURTEOUS_SWEEP_BASELINE`): the
//! per-case lines an earlier run printed (`COURTEOUS_SWEEP_CASES_OUT=1`),
//! read back, and each case of this run set beside its seed's. Prints the
//! cases that crossed into or out of bounds, refusals and cases above 2×
//! before and after, and the cases that changed most: the yardstick a
//! change of the engine is judged by (`docs/sweep.md`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::judge::Result;

/// What an earlier run printed of one case.
#[derive(Debug, Clone, Copy)]
struct Before {
    sent: u64,
    refused: u64,
    elapsed: f64,
    ratio: f64,
    within: bool,
    /// Beyond the gross bounds (printed since the baseline tool; read
    /// from the ratio and the refusals in older output, which did not say
    /// whether a case finished).
    gross: bool,
}

/// Reads the case lines of an earlier run's output, by seed.
fn read(text: &str) -> BTreeMap<u64, Before> {
    text.lines().filter_map(parse).collect()
}

/// One case line: `Case { seed: N, .. } floor F sent S refused R elapsed E
/// ratio X within B identified K gross G`.
fn parse(line: &str) -> Option<(u64, Before)> {
    let rest = line.strip_prefix("Case { seed: ")?;
    let seed = rest.split(',').next()?.trim().parse().ok()?;
    let tail = &line[line.rfind("} floor ")? + 2..];
    let fields: Vec<&str> = tail.split_whitespace().collect();
    let value = |name: &str| {
        let at = fields.iter().position(|field| *field == name)?;
        fields.get(at + 1).copied()
    };
    let sent: u64 = value("sent")?.parse().ok()?;
    let refused: u64 = value("refused")?.parse().ok()?;
    let ratio: f64 = value("ratio")?.parse().ok()?;
    let gross = value("gross").map_or_else(
        || ratio > 2.0 || refused as f64 > 0.10 * sent.max(1) as f64,
        |gross| gross == "true",
    );
    Some((
        seed,
        Before {
            sent,
            refused,
            elapsed: value("elapsed")?.parse().ok()?,
            ratio,
            within: value("within")? == "true",
            gross,
        },
    ))
}

/// A ratio as the case lines print it (to hundredths), so that a ratio is
/// compared with an earlier one at the same precision.
fn printed(ratio: f64) -> f64 {
    (ratio * 100.0).round() / 100.0
}

/// This run beside the earlier one's `text`, for the seeds both ran.
pub fn compare(results: &[Result], text: &str) -> String {
    let before = read(text);
    let pairs: Vec<(&Result, Before)> = results
        .iter()
        .filter_map(|result| Some((result, *before.get(&result.case.seed)?)))
        .collect();
    let count = |f: &dyn Fn(&(&Result, Before)) -> bool| pairs.iter().filter(|p| f(p)).count();
    let sum = |f: &dyn Fn(&(&Result, Before)) -> u64| pairs.iter().map(f).sum::<u64>();
    let seeds = |f: &dyn Fn(&(&Result, Before)) -> bool| {
        pairs
            .iter()
            .filter(|p| f(p))
            .map(|(result, _)| result.case.seed.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let changed: Vec<&(&Result, Before)> = pairs
        .iter()
        // Elapsed times are printed to the millisecond.
        .filter(|(result, b)| {
            result.outcome.sent != b.sent
                || (result.outcome.elapsed * 1e3).round() != (b.elapsed * 1e3).round()
        })
        .collect();
    // Ratios printed to hundredths; a job within the burst has a ratio of
    // zero: such cases are left out of the mean.
    let logs: Vec<f64> = changed
        .iter()
        .filter(|(result, b)| b.ratio > 0.0 && result.ratio() > 0.0)
        .map(|(result, b)| (result.ratio() / b.ratio).ln())
        .collect();
    let mean = logs.iter().sum::<f64>() / logs.len().max(1) as f64;
    let mut out = String::new();
    let _ = writeln!(out, "against the baseline ({} seeds in both):", pairs.len());
    let _ = writeln!(
        out,
        "  within {} -> {}; gross {} -> {}; refused {} -> {}; above 2x {} -> {}",
        count(&|(_, b)| b.within),
        count(&|(result, _)| result.within_bounds()),
        count(&|(_, b)| b.gross),
        count(&|(result, _)| result.gross()),
        sum(&|(_, b)| b.refused),
        sum(&|(result, _)| result.outcome.refused),
        count(&|(_, b)| b.ratio > 2.0),
        count(&|(result, _)| printed(result.ratio()) > 2.0),
    );
    let _ = writeln!(
        out,
        "  won: [{}]",
        seeds(&|(result, b)| !b.within && result.within_bounds())
    );
    let _ = writeln!(
        out,
        "  lost: [{}]",
        seeds(&|(result, b)| b.within && !result.within_bounds())
    );
    let _ = writeln!(
        out,
        "  changed {}; their ratios' geometric mean {:+.1} %; better by 10 % or more {}, worse {}",
        changed.len(),
        (mean.exp() - 1.0) * 100.0,
        changed
            .iter()
            .filter(|(result, b)| result.ratio() < b.ratio * 0.9)
            .count(),
        changed
            .iter()
            .filter(|(result, b)| result.ratio() > b.ratio * 1.1)
            .count(),
    );
    let mut most = changed.clone();
    most.sort_by(|x, y| {
        let moved = |(result, b): &&(&Result, Before)| {
            (result.ratio().max(0.01) / b.ratio.max(0.01)).ln().abs()
        };
        moved(y).total_cmp(&moved(x))
    });
    for (result, b) in most.iter().take(15) {
        let _ = writeln!(
            out,
            "  seed {} {} {}: {:.2}x -> {:.2}x, sent {} -> {}, refused {} -> {}",
            result.case.seed,
            result.case.kind.name(),
            result.case.style.name(),
            b.ratio,
            result.ratio(),
            b.sent,
            result.outcome.sent,
            b.refused,
            result.outcome.refused,
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_line_is_read_back() {
        let line = "Case { seed: 96, kind: FixedWindowAligned, style: XRateLimitEpoch, \
                    change: None, tokens: None } floor 450.164 sent 14 refused 4 elapsed \
                    451.789 ratio 1.00 within false identified FixedWindow";
        let (seed, before) = parse(line).expect("a case line");
        assert_eq!(seed, 96);
        assert_eq!((before.sent, before.refused), (14, 4));
        assert!((before.elapsed - 451.789).abs() < 1e-9);
        assert!((before.ratio - 1.0).abs() < 1e-9);
        assert!(!before.within);
        assert!(before.gross, "4 refused of 14: more than 10 %");
        let printed = format!("{line} gross false");
        assert!(!parse(&printed).expect("a case line").1.gross);
        assert!(parse("| token bucket | ietf | 37 |").is_none());
    }
}
