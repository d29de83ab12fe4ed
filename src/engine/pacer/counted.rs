//! The latest count read, our sends in flight when it came, and the
//! answers of those sends that the server counted before it (see the
//! parent module's docs, points 3 and 6).
//!
//! A reading is the server's count when it took the reading's request.
//! Our sends are counted in any order, but a send that went after a
//! reading came is counted after it: only the sends in flight then can
//! have been counted before it. So an answer to one of those that reads a
//! higher count was counted before the latest reading, unless units came
//! back in between (a refill, or the quota's reset): it is older news. Any
//! other reading is the latest count. Which sends were in flight is exact
//! by their numbers: those below the next number to be sent when the
//! reading came, other than the reading's own, answered after it (each
//! answers once).
//!
//! With a stated rate (which refills the mirror anyway) or in a fixed
//! window, older news re-syncs nothing (the parent module's `sync`):
//! - **it is no base to judge others' spending from** (`sharing.rs`).
//!   Judged from a late count, the next reading's fall included our sends
//!   counted in between, neither in flight at the late count nor sent
//!   since: traced on the demo server's window opened by the first request
//!   (`ietf`, c=4), the readings `2, 4, 3, 0` (the `4` and `3` counted
//!   before the `2`) read as two units of others, the share was cut to a
//!   third and the window was paced at it;
//! - **in a fixed window, it gives a unit back.** The mirror synced from
//!   the latest count keeps back a unit for each of our sends then in
//!   flight, which the server may count after it. One answered since with
//!   a higher count was counted before: its unit is given back. On the same
//!   server, a window's last reading was `1` with one send in flight,
//!   counted long before and answered last (`3`); the mirror held `0` to
//!   the window's end, 19 of its 20 units were spent, and 100 successes
//!   took a sixth window.

/// The latest count read, and what was in flight when it came.
#[derive(Debug, Clone, Copy)]
struct Latest {
    remaining: u64,
    /// The send it answers.
    seq: Option<u64>,
    /// Sends numbered below this had gone when it came.
    sent_before: u64,
    /// Our other sends in flight when it came.
    in_flight: u32,
    /// Of those, the ones answered with a higher count since.
    counted_before: u32,
    /// Our sends admitted, ever, when it came.
    admitted: u64,
}

/// The latest count read, and our sends in flight then.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Counted {
    /// The number after the last send admitted.
    next_seq: u64,
    latest: Option<Latest>,
}

impl Counted {
    /// Send `seq` was admitted.
    pub(super) fn sent(&mut self, seq: Option<u64>) {
        if let Some(seq) = seq {
            self.next_seq = self.next_seq.max(seq.saturating_add(1));
        }
    }

    /// Whether the answer to `seq` reading `remaining` is older news than
    /// the latest count: a send in flight then, with a higher count.
    pub(super) fn older_news(&self, seq: Option<u64>, remaining: u64) -> bool {
        let (Some(latest), Some(seq)) = (self.latest, seq) else {
            return false;
        };
        seq < latest.sent_before && Some(seq) != latest.seq && remaining > latest.remaining
    }

    /// The latest count: `remaining` in the answer to `seq`, with
    /// `in_flight` other sends of ours out and `admitted` sent ever. (The
    /// caller passes no older news, unless the quota's reset has passed:
    /// its count starts again.)
    pub(super) fn read(&mut self, remaining: u64, seq: Option<u64>, in_flight: u32, admitted: u64) {
        self.latest = Some(Latest {
            remaining,
            seq,
            sent_before: self.next_seq,
            in_flight,
            counted_before: 0,
            admitted,
        });
    }

    /// In a fixed window, the answer to `seq` reads `remaining`, older news
    /// (it re-synced nothing). Counted before the latest count, it was in
    /// it: returns the latest count and the units our sends may still take
    /// from it (those in flight then and not known to be counted, and
    /// those sent since), with `admitted` sends of ours ever. `None` when
    /// the answer tells nothing new.
    pub(super) fn counted_before(
        &mut self,
        seq: Option<u64>,
        remaining: u64,
        admitted: u64,
    ) -> Option<(u64, u64)> {
        if !self.older_news(seq, remaining) {
            return None;
        }
        let latest = self.latest.as_mut()?;
        if latest.counted_before >= latest.in_flight {
            return None;
        }
        latest.counted_before += 1;
        let in_doubt = latest.in_flight - latest.counted_before;
        let sent_since = admitted.saturating_sub(latest.admitted);
        Some((
            latest.remaining,
            u64::from(in_doubt).saturating_add(sent_since),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends 0..=5 admitted; the answer to 5 reads 1 with 3, 4 in flight.
    fn latest_read() -> Counted {
        let mut counted = Counted::default();
        for seq in 0..6 {
            counted.sent(Some(seq));
        }
        counted.read(3, Some(2), 3, 6);
        counted.read(1, Some(5), 2, 6);
        counted
    }

    #[test]
    fn a_send_in_flight_answered_higher_gives_its_unit_back() {
        let mut counted = latest_read();
        assert!(counted.older_news(Some(3), 2));
        assert_eq!(counted.counted_before(Some(3), 2, 6), Some((1, 1)));
        assert_eq!(counted.counted_before(Some(4), 4, 6), Some((1, 0)));
        // Each of the two answers once: no third.
        assert_eq!(counted.counted_before(Some(4), 4, 6), None);
    }

    #[test]
    fn sends_since_hold_their_units() {
        let mut counted = latest_read();
        counted.sent(Some(6));
        assert_eq!(counted.counted_before(Some(3), 2, 7), Some((1, 2)));
        assert_eq!(counted.counted_before(Some(4), 2, 7), Some((1, 1)));
    }

    #[test]
    fn only_a_higher_count_of_a_send_then_in_flight_is_older_news() {
        let mut counted = latest_read();
        // Counted after the latest count (or equal: no news).
        assert!(!counted.older_news(Some(3), 0));
        assert!(!counted.older_news(Some(3), 1));
        assert_eq!(counted.counted_before(Some(3), 1, 6), None);
        // The latest count's own send, and one sent after it came.
        assert!(!counted.older_news(Some(5), 2));
        counted.sent(Some(6));
        assert!(!counted.older_news(Some(6), 2));
        assert_eq!(counted.counted_before(Some(6), 2, 7), None);
        assert!(!counted.older_news(None, 2));
        assert!(!Counted::default().older_news(Some(0), 2));
        assert_eq!(Counted::default().counted_before(Some(0), 2, 1), None);
    }

    #[test]
    fn a_later_count_starts_again() {
        let mut counted = latest_read();
        // Send 6, sent after the latest count came, reads higher: units
        // came back (a new window), with send 7 in flight.
        counted.sent(Some(6));
        counted.sent(Some(7));
        counted.read(19, Some(6), 1, 8);
        assert!(!counted.older_news(Some(7), 18));
        assert_eq!(counted.counted_before(Some(7), 20, 8), Some((19, 0)));
        assert_eq!(counted.counted_before(Some(7), 20, 8), None);
    }
}
