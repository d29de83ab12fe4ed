//! The SVG timeline is built from request events: bins of 100 ms, one lane
//! per client, allowed and rejected in different colours, log-scaled heights.

use std::time::Duration;

use demo_server::compare::timeline::{Bin, Lane, bins, escape, render};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Attribute `name` of every element whose text starts with `prefix`.
fn attributes(svg: &str, prefix: &str, name: &str) -> Vec<f64> {
    svg.match_indices(prefix)
        .map(|(i, _)| {
            let rest = &svg[i..];
            let key = format!(" {name}=\"");
            let start = rest.find(&key).expect("attribute") + key.len();
            let end = start + rest[start..].find('"').unwrap();
            rest[start..end].parse().expect("number")
        })
        .collect()
}

#[test]
fn requests_fall_into_100_ms_bins() {
    let requests = [
        (ms(0), true),
        (ms(99), false),
        (ms(100), true),
        (ms(350), false),
        (ms(399), false),
    ];
    assert_eq!(
        bins(&requests),
        vec![
            Bin {
                allowed: 1,
                rejected: 1
            },
            Bin {
                allowed: 1,
                rejected: 0
            },
            Bin {
                allowed: 0,
                rejected: 0
            },
            Bin {
                allowed: 0,
                rejected: 2
            },
        ]
    );
    assert!(bins(&[]).is_empty());
}

#[test]
fn one_rect_per_coloured_part_of_each_bin() {
    let polite = Lane {
        label: "polite".into(),
        note: "sent 3".into(),
        requests: vec![(ms(0), true), (ms(120), true), (ms(250), true)],
    };
    let naive = Lane {
        label: "naive".into(),
        note: "sent 6".into(),
        requests: vec![
            (ms(0), true),
            (ms(10), false),
            (ms(20), false),
            (ms(130), false),
            (ms(140), false),
            (ms(260), true),
        ],
    };
    let svg = render("title", "subtitle", &[polite, naive]);
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.trim_end().ends_with("</svg>"));
    // polite: 3 allowed parts; naive: allowed in bins 0 and 2, rejected in bins 0 and 1.
    assert_eq!(svg.matches("<rect class=\"allowed\"").count(), 5);
    assert_eq!(svg.matches("<rect class=\"rejected\"").count(), 2);
    assert!(svg.contains(">polite</text>") && svg.contains(">naive</text>"));
    assert!(svg.contains("0 ms: 2 rejected"));
}

#[test]
fn busier_bins_are_taller_and_the_busiest_fills_the_lane() {
    let lane = |n: u64, allowed: bool| Lane {
        label: format!("{n}"),
        note: String::new(),
        requests: (0..n).map(|i| (ms(i % 100), allowed)).collect(),
    };
    let svg = render(
        "t",
        "s",
        &[lane(1, true), lane(1000, false), lane(10, true)],
    );
    let allowed = attributes(&svg, "<rect class=\"allowed\"", "height");
    let rejected = attributes(&svg, "<rect class=\"rejected\"", "height");
    assert_eq!((allowed.len(), rejected.len()), (2, 1));
    let (one, ten, thousand) = (allowed[0], allowed[1], rejected[0]);
    assert!(one < ten && ten < thousand, "{one} < {ten} < {thousand}");
    assert!(
        (thousand - 40.0).abs() < 0.01,
        "the busiest bin fills the lane: {thousand}"
    );
    // Log scale: 10 requests are far more visible than 1 % of the lane.
    assert!(ten > 40.0 * 0.25, "{ten}");
}

#[test]
fn a_mixed_bin_is_split_by_share() {
    let mut requests: Vec<_> = (0..3).map(|_| (ms(5), true)).collect();
    requests.push((ms(6), false));
    let svg = render(
        "t",
        "s",
        &[Lane {
            label: "mixed".into(),
            note: String::new(),
            requests,
        }],
    );
    let allowed = attributes(&svg, "<rect class=\"allowed\"", "height")[0];
    let rejected = attributes(&svg, "<rect class=\"rejected\"", "height")[0];
    assert!(
        (allowed / rejected - 3.0).abs() < 0.05,
        "{allowed} vs {rejected}"
    );
}

#[test]
fn labels_are_escaped() {
    assert_eq!(escape("a<b & \"c\"\u{7}"), "a&lt;b &amp; &quot;c&quot; ");
    let svg = render(
        "<script>",
        "s",
        &[Lane {
            label: "x</text><script>".into(),
            note: "&".into(),
            requests: vec![(ms(1), true)],
        }],
    );
    assert!(!svg.contains("<script>"));
    assert!(svg.contains("x&lt;/text&gt;&lt;script&gt;"));
}
