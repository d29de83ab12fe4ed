//! A quota the server enforces but never announces, declared by the user
//! or a preset ([`Config::declared_quota`](super::Config::declared_quota);
//! Discord's global 50 requests a second): at most `L` requests in any
//! span of `w`.
//!
//! **Model.** A log of our own sends: a send at `now` goes when fewer than
//! `L` of ours went in `(now − w − m, now]`, else it waits until the
//! oldest of the last `L` leaves that span:
//!
//! ```text
//! wait = s[n − L] + w + m − now        s: our send instants, n of them
//! ```
//!
//! "`L` per `w`" read so is the strictest of its meanings: a token bucket
//! of `L` refilled over `w`, a fixed window of `w` on any grid and a
//! sliding log of `w` all admit such a schedule. (A GCRA, as governor's,
//! admits `L` at once and then one every `w / L`: up to `2L − 1` in one
//! fixed window.)
//!
//! **Margin.** The server counts a send when it arrives, a leg after it
//! went; legs vary. `m` is the measured spread of the scope's round trips
//! (`round_trip.rs`, `4·RTTVAR`), so two sends `w + m` apart at our end
//! are at least `w` apart at the server's.
//!
//! A refused send holds its place in the log: the server may have counted
//! it. Nothing here is learned; the declaration is the limit.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::time::later;

/// A declared quota's log of sends.
#[derive(Debug, Clone)]
pub(crate) struct DeclaredLog {
    limit: usize,
    window: Duration,
    /// Our latest sends, at most `limit` of them, oldest first.
    sent: VecDeque<Instant>,
}

impl DeclaredLog {
    /// At most `limit` (at least one) sends in any `window`.
    pub(crate) fn new(limit: u32, window: Duration) -> Self {
        let limit = usize::try_from(limit.max(1)).unwrap_or(usize::MAX);
        Self {
            limit,
            window,
            sent: VecDeque::new(),
        }
    }

    /// How long until a send may go at `now`, allowing `margin` (`None`:
    /// now).
    pub(crate) fn wait(&self, now: Instant, margin: Duration) -> Option<Duration> {
        if self.sent.len() < self.limit {
            return None;
        }
        let oldest = *self.sent.front()?;
        let free = later(oldest, self.window.saturating_add(margin));
        (free > now).then(|| free - now)
    }

    /// A send went at `now`.
    pub(crate) fn take(&mut self, now: Instant) {
        if self.sent.len() == self.limit {
            self.sent.pop_front();
        }
        self.sent.push_back(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn at_most_the_limit_in_any_window() {
        let t0 = Instant::now();
        let mut log = DeclaredLog::new(3, Duration::from_secs(1));
        for i in 0..3 {
            assert_eq!(log.wait(t0 + MS * i, Duration::ZERO), None);
            log.take(t0 + MS * i);
        }
        // The fourth waits for the first to leave the window.
        let at = t0 + MS * 10;
        assert_eq!(log.wait(at, Duration::ZERO), Some(MS * 990));
        // Then the fifth for the second.
        log.take(t0 + Duration::from_secs(1));
        assert_eq!(
            log.wait(t0 + Duration::from_secs(1), Duration::ZERO),
            Some(MS)
        );
    }

    #[test]
    fn the_margin_spaces_sends_at_the_servers_end() {
        let t0 = Instant::now();
        let mut log = DeclaredLog::new(1, Duration::from_secs(1));
        log.take(t0);
        let wait = log.wait(t0, MS * 30).expect("full");
        assert_eq!(wait, Duration::from_millis(1_030));
    }

    #[test]
    fn hostile_declarations_neither_panic_nor_block_for_ever() {
        let t0 = Instant::now();
        let mut zero = DeclaredLog::new(0, Duration::MAX);
        assert_eq!(zero.wait(t0, Duration::MAX), None, "a limit of 0 is 1");
        zero.take(t0);
        let wait = zero.wait(t0, Duration::MAX).expect("full");
        assert!(wait > Duration::ZERO);
    }
}
