//! Fixed windows: a quota that comes back all at once at a boundary
//! (see the parent module's docs, point 6).
//!
//! **Recognised** by a refusal while `remaining` showed nobody else
//! spending: a continuously refilled quota mirrored from its own numbers
//! does not refuse a lone client, a window does (its units do not trickle
//! back at the policy rate). Without quota numbers, a refused probe says the
//! same (`Refill::Windowed`, in `refill.rs`).
//!
//! **Located** by the readings of the current window: each says the
//! window ends within `reset` of when it arrived (a whole-second reset is
//! rounded up, an epoch reset is measured against the local clock when that
//! agrees with `Date`), so the earliest of `received + reset` over the
//! window's readings is when it is surely over: for a window opened by our
//! own first request, that is its end plus less than one round trip. A rise
//! of `remaining` (or a reading after that instant) starts the next window.

use std::time::{Duration, Instant};

/// What the readings say about fixed windows.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Window {
    /// The quota refills at boundaries (a refusal said so).
    known: bool,
    /// The earliest instant the current window's readings guarantee it is over.
    ends_at: Option<Instant>,
    /// The last `remaining` read, to see the next window start.
    last_remaining: Option<u64>,
}

impl Window {
    /// A refusal came although nobody else was seen spending.
    pub(super) fn recognise(&mut self) {
        self.known = true;
    }

    /// Whether the quota is known to refill at boundaries.
    pub(super) fn is_known(&self) -> bool {
        self.known
    }

    /// When the current window is surely over, if a reading said.
    pub(super) fn ends_at(&self) -> Option<Instant> {
        self.ends_at
    }

    /// A reading received at `now`; returns when the current window is
    /// surely over.
    pub(super) fn read(
        &mut self,
        now: Instant,
        remaining: u64,
        reset: Option<Duration>,
    ) -> Option<Instant> {
        let rose = self.last_remaining.is_some_and(|last| remaining > last);
        self.last_remaining = Some(remaining);
        let over = self.ends_at.is_some_and(|end| now >= end);
        let end = reset.and_then(|d| now.checked_add(d));
        self.ends_at = match (self.ends_at, end) {
            _ if rose || over => end,
            (Some(known), Some(end)) => Some(known.min(end)),
            (known, end) => known.or(end),
        };
        self.ends_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_earliest_end_of_a_window_is_kept_until_the_next_one_starts() {
        let t0 = Instant::now();
        let mut window = Window::default();
        assert!(!window.is_known());
        // `t=1` at every reading of a 1 s window: the first bounds it best.
        assert_eq!(window.read(t0, 19, Some(ms(1000))), Some(t0 + ms(1000)));
        assert_eq!(
            window.read(t0 + ms(30), 18, Some(ms(1000))),
            Some(t0 + ms(1000))
        );
        // A more precise reading (an epoch reset) narrows it.
        assert_eq!(
            window.read(t0 + ms(40), 17, Some(ms(900))),
            Some(t0 + ms(940))
        );
        // A reading without a reset keeps what is known.
        assert_eq!(window.read(t0 + ms(50), 16, None), Some(t0 + ms(940)));
        // `remaining` rose: the next window, bounded afresh.
        assert_eq!(
            window.read(t0 + ms(960), 19, Some(ms(1000))),
            Some(t0 + ms(1960))
        );
        window.recognise();
        assert!(window.is_known());
        assert_eq!(window.ends_at(), Some(t0 + ms(1960)));
    }

    #[test]
    fn a_reading_after_the_end_starts_the_next_window() {
        let t0 = Instant::now();
        let mut window = Window::default();
        window.read(t0, 0, Some(ms(1000)));
        // Still 0 (others spent the new window), but the old one is over.
        assert_eq!(
            window.read(t0 + ms(1500), 0, Some(ms(1000))),
            Some(t0 + ms(2500))
        );
    }
}
