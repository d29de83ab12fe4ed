use std::time::{Duration, Instant, SystemTime};

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A server whose clock shows whole second `D0 + k` from `boundary + k s`
/// on ours, answering after `leg`.
struct Server {
    boundary: Instant,
    d0: SystemTime,
    leg: Duration,
}

impl Server {
    /// The `Date` of a response stamped at `stamped` (on our clock), and
    /// when it arrives.
    fn respond(&self, stamped: Instant) -> (SystemTime, Instant) {
        let whole = stamped.duration_since(self.boundary).as_secs();
        (self.d0 + Duration::from_secs(whole), stamped + self.leg)
    }

    /// When, on our clock, the server's clock shows `at`.
    fn shows(&self, at: SystemTime) -> Instant {
        self.boundary + at.duration_since(self.d0).unwrap()
    }
}

/// The interval the clock claims for when the server showed `date` holds
/// the truth: no later than `arrived − slack`, no earlier than `width`
/// before that.
fn assert_holds(server: &Server, date: SystemTime, arrived: Instant, located: Located) {
    let latest = arrived - located.slack;
    let truth = server.shows(date);
    assert!(truth <= latest, "{truth:?} after {latest:?}");
    assert!(
        latest - truth <= located.width,
        "{:?} off, width {:?}",
        latest - truth,
        located.width
    );
}

fn round_trip(rtt: Duration) -> RoundTrip {
    let mut round_trip = RoundTrip::default();
    for _ in 0..20 {
        round_trip.observe(rtt);
    }
    round_trip
}

#[test]
fn one_response_says_only_its_date() {
    let t0 = Instant::now();
    let mut clock = ServerClock::default();
    let located = clock.observe(SystemTime::UNIX_EPOCH, t0, &RoundTrip::default());
    assert_eq!(located.slack, Duration::ZERO);
    assert_eq!(located.width, SECOND);
    assert_eq!(located.wait(ms(1_000)), ms(1_000));
    assert_eq!(located.precision(ms(2_000)), ms(2_000));
}

#[test]
fn responses_at_many_phases_locate_the_seconds_to_a_leg() {
    let t0 = Instant::now();
    let server = Server {
        boundary: t0 + ms(300),
        d0: SystemTime::UNIX_EPOCH + Duration::from_secs(2_000_000_000),
        leg: ms(2),
    };
    let rtt = round_trip(ms(4));
    let mut clock = ServerClock::default();
    let mut worst_late = Duration::ZERO;
    for i in 0..60 {
        let stamped = t0 + ms(400 + 70 * i);
        let (date, arrived) = server.respond(stamped);
        let located = clock.observe(date, arrived, &rtt);
        assert_holds(&server, date, arrived, located);
        // The server says "come back at its next second but one",
        // measured against `Date`: 2 s from its arrival.
        let at = date + Duration::from_secs(2);
        let end = arrived + located.wait(Duration::from_secs(2));
        let due = server.shows(at);
        assert!(end >= due, "response {i}: {end:?} before {due:?}");
        if i >= 15 {
            worst_late = worst_late.max(end - due);
            // Known to the round trip's allowance and the steps between
            // responses, not to a second.
            assert!(located.width < ms(100), "{:?}", located.width);
        }
    }
    // Within a leg of the truth plus the 70 ms between responses (read
    // alone, up to a second late).
    assert!(worst_late <= ms(72), "{worst_late:?}");
}

/// The server's clock shows `d0` at `t0`, and from `t0 + 1 s` on runs as
/// `after` does: the located interval holds the truth throughout.
fn assert_holds_across_a_step(t0: Instant, d0: SystemTime, after: &Server) {
    let before = Server {
        boundary: t0,
        d0,
        leg: ms(1),
    };
    let rtt = round_trip(ms(2));
    let mut clock = ServerClock::default();
    for (server, from) in [(&before, ms(10)), (after, ms(1_000))] {
        for i in 0..20 {
            let (date, arrived) = server.respond(t0 + from + ms(45 * i));
            assert_holds(server, date, arrived, clock.observe(date, arrived, &rtt));
        }
    }
}

#[test]
fn a_stepped_clock_starts_afresh_and_is_never_early() {
    let t0 = Instant::now();
    let d0 = SystemTime::UNIX_EPOCH + Duration::from_secs(2_000_000_000);
    // Stepped back 4.6 s (to another phase too).
    let after = Server {
        boundary: t0 + ms(400),
        d0: d0 - Duration::from_secs(5),
        leg: ms(1),
    };
    assert_holds_across_a_step(t0, d0, &after);
    // Stepped forward 3.3 s.
    let after = Server {
        boundary: t0 + ms(700),
        d0: d0 + Duration::from_secs(4),
        leg: ms(1),
    };
    assert_holds_across_a_step(t0, d0, &after);
}

#[test]
fn old_bounds_loosen_at_the_drift() {
    let t0 = Instant::now();
    let d0 = SystemTime::UNIX_EPOCH + Duration::from_secs(2_000_000_000);
    let mut clock = ServerClock::default();
    let rtt = round_trip(ms(2));
    clock.observe(d0, t0, &rtt);
    // An hour later to the second, on both clocks: the bound from an hour
    // ago may be off by 100 ppm of the time since, 360.05 ms.
    let hour = Duration::from_secs(3_600);
    let located = clock.observe(d0 + hour, t0 + hour + ms(500), &rtt);
    assert_eq!(located.slack, ms(500) - (hour + ms(500)).mul_f64(DRIFT));
}
