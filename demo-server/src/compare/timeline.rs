//! The SVG timeline: requests per 100 ms for each client, one lane per
//! client, allowed and rejected in different colours. Hand-written SVG.
//!
//! Bar height is logarithmic in the number of requests in the bin, shared by
//! every lane (a client sending 1,000 requests per 100 ms must not look like
//! one sending 2); within a bar, the green part is the allowed share and the
//! red part the rejected share.

use std::fmt::Write as _;
use std::time::Duration;

/// Width of one bin.
pub const BIN: Duration = Duration::from_millis(100);

const LABEL_WIDTH: f64 = 330.0;
const PLOT_WIDTH: f64 = 720.0;
const RIGHT_MARGIN: f64 = 20.0;
const TOP: f64 = 78.0;
const LANE_HEIGHT: f64 = 40.0;
const LANE_GAP: f64 = 10.0;
const AXIS_HEIGHT: f64 = 34.0;
const ALLOWED: &str = "#2e8b57";
const REJECTED: &str = "#d9534f";

/// One client's requests: when each was answered (since the lane's start) and
/// whether it was allowed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lane {
    /// Bold label on the left (the client).
    pub label: String,
    /// Smaller line under the label (e.g. sent / 429s / elapsed).
    pub note: String,
    /// `(time since the lane's first request, allowed)`.
    pub requests: Vec<(Duration, bool)>,
}

/// Allowed and rejected requests in one bin.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bin {
    /// Answered 2xx.
    pub allowed: u64,
    /// Everything else (429s).
    pub rejected: u64,
}

impl Bin {
    /// All requests in the bin.
    pub fn total(&self) -> u64 {
        self.allowed + self.rejected
    }
}

/// Requests per [`BIN`], from time zero to the last request.
pub fn bins(requests: &[(Duration, bool)]) -> Vec<Bin> {
    let n = requests
        .iter()
        .map(|(t, _)| bin_index(*t) + 1)
        .max()
        .unwrap_or(0);
    let mut out = vec![Bin::default(); n];
    for &(t, allowed) in requests {
        let bin = &mut out[bin_index(t)];
        if allowed {
            bin.allowed += 1;
        } else {
            bin.rejected += 1;
        }
    }
    out
}

fn bin_index(t: Duration) -> usize {
    (t.as_nanos() / BIN.as_nanos()) as usize
}

/// Escape text for SVG content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The whole picture.
pub fn render(title: &str, subtitle: &str, lanes: &[Lane]) -> String {
    let binned: Vec<Vec<Bin>> = lanes.iter().map(|l| bins(&l.requests)).collect();
    let bin_count = binned.iter().map(Vec::len).max().unwrap_or(0).max(10);
    let busiest = binned
        .iter()
        .flatten()
        .map(Bin::total)
        .max()
        .unwrap_or(0)
        .max(1);
    let bin_width = PLOT_WIDTH / bin_count as f64;
    let width = LABEL_WIDTH + PLOT_WIDTH + RIGHT_MARGIN;
    let plot_bottom = TOP + lanes.len() as f64 * (LANE_HEIGHT + LANE_GAP);
    let height = plot_bottom + AXIS_HEIGHT;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="Helvetica, Arial, sans-serif">"#
    );
    let _ = writeln!(
        svg,
        r##"<rect x="0" y="0" width="{width:.0}" height="{height:.0}" fill="#ffffff"/>"##
    );
    let _ = writeln!(
        svg,
        r#"<text x="16" y="24" font-size="16" font-weight="bold">{}</text>"#,
        escape(title)
    );
    let _ = writeln!(
        svg,
        r##"<text x="16" y="44" font-size="12" fill="#444">{}</text>"##,
        escape(subtitle)
    );
    legend(&mut svg, busiest);
    grid(&mut svg, bin_count, bin_width, plot_bottom);
    for (i, (lane, bins)) in lanes.iter().zip(&binned).enumerate() {
        let top = TOP + i as f64 * (LANE_HEIGHT + LANE_GAP);
        lane_svg(&mut svg, lane, bins, top, bin_width, busiest);
    }
    svg.push_str("</svg>\n");
    svg
}

fn legend(svg: &mut String, busiest: u64) {
    let y = 58.0;
    let _ = writeln!(
        svg,
        r#"<rect x="16" y="{:.0}" width="12" height="12" fill="{ALLOWED}"/><text x="34" y="{:.0}" font-size="12">allowed (200)</text>"#,
        y,
        y + 10.0
    );
    let _ = writeln!(
        svg,
        r#"<rect x="130" y="{:.0}" width="12" height="12" fill="{REJECTED}"/><text x="148" y="{:.0}" font-size="12">rejected (429)</text>"#,
        y,
        y + 10.0
    );
    let _ = writeln!(
        svg,
        r##"<text x="260" y="{:.0}" font-size="12" fill="#444">bar height: requests per {} ms, log scale (full lane = {busiest})</text>"##,
        y + 10.0,
        BIN.as_millis()
    );
}

fn grid(svg: &mut String, bin_count: usize, bin_width: f64, plot_bottom: f64) {
    let bins_per_second = (1000 / BIN.as_millis()) as usize;
    for bin in (0..=bin_count).step_by(bins_per_second) {
        let x = LABEL_WIDTH + bin as f64 * bin_width;
        let _ = writeln!(
            svg,
            r##"<line x1="{x:.1}" y1="{TOP:.0}" x2="{x:.1}" y2="{plot_bottom:.0}" stroke="#dddddd" stroke-width="1"/>"##
        );
        let _ = writeln!(
            svg,
            r##"<text x="{x:.1}" y="{:.0}" font-size="11" text-anchor="middle" fill="#444">{} s</text>"##,
            plot_bottom + 14.0,
            bin / bins_per_second
        );
    }
    let _ = writeln!(
        svg,
        r##"<text x="{:.0}" y="{:.0}" font-size="11" text-anchor="middle" fill="#444">time since the client's first request</text>"##,
        LABEL_WIDTH + PLOT_WIDTH / 2.0,
        plot_bottom + 28.0
    );
}

/// Height of a bar of `total` requests when the busiest bin fills the lane.
fn bar_height(total: u64, busiest: u64) -> f64 {
    if total == 0 {
        return 0.0;
    }
    let scale = ((busiest + 1) as f64).log10().max(f64::MIN_POSITIVE);
    (LANE_HEIGHT * ((total + 1) as f64).log10() / scale).clamp(1.5, LANE_HEIGHT)
}

fn lane_svg(svg: &mut String, lane: &Lane, bins: &[Bin], top: f64, bin_width: f64, busiest: u64) {
    let bottom = top + LANE_HEIGHT;
    let _ = writeln!(
        svg,
        r##"<text x="16" y="{:.0}" font-size="12" font-weight="bold">{}</text><text x="16" y="{:.0}" font-size="11" fill="#444">{}</text>"##,
        top + 16.0,
        escape(&lane.label),
        top + 32.0,
        escape(&lane.note)
    );
    let _ = writeln!(
        svg,
        r##"<line x1="{LABEL_WIDTH:.0}" y1="{bottom:.1}" x2="{:.0}" y2="{bottom:.1}" stroke="#999999" stroke-width="1"/>"##,
        LABEL_WIDTH + PLOT_WIDTH
    );
    let width = (bin_width - 1.0).max(1.0);
    for (i, bin) in bins.iter().enumerate() {
        let total = bin.total();
        if total == 0 {
            continue;
        }
        let x = LABEL_WIDTH + i as f64 * bin_width;
        let height = bar_height(total, busiest);
        let allowed_height = height * bin.allowed as f64 / total as f64;
        if bin.allowed > 0 {
            let _ = writeln!(
                svg,
                r#"<rect class="allowed" x="{x:.1}" y="{:.2}" width="{width:.1}" height="{allowed_height:.2}" fill="{ALLOWED}"><title>{} ms: {} allowed</title></rect>"#,
                bottom - allowed_height,
                i as u128 * BIN.as_millis(),
                bin.allowed
            );
        }
        if bin.rejected > 0 {
            let _ = writeln!(
                svg,
                r#"<rect class="rejected" x="{x:.1}" y="{:.2}" width="{width:.1}" height="{:.2}" fill="{REJECTED}"><title>{} ms: {} rejected</title></rect>"#,
                bottom - height,
                height - allowed_height,
                i as u128 * BIN.as_millis(),
                bin.rejected
            );
        }
    }
}
