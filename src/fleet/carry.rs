//! What this process still owes the fleet between two store calls on a
//! scope, carried by the next call instead of costing one of its own:
//!
//! - the **lesson** of its last response, when it did not change the
//!   shared state enough to be published at once (see
//!   `FleetGate::learn`): the next reservation merges it first, so a steady
//!   process makes one round trip per send;
//! - the tokens of its **unanswered** reservations (they missed their
//!   deadline): one may have been granted the probe lease unawares, and the
//!   next reservation gives such a lease up instead of the whole fleet
//!   waiting it out;
//! - the token of the **probe** lease it holds, so it releases only its own.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use super::lesson::Lesson;

/// Unanswered reservation tokens kept per scope (the oldest go first): a
/// probe lease (2 s by default) spans at most about 4 failed calls, since
/// the breaker stops calling after 2 failures for 1 s; twice that.
pub(crate) const MAX_UNANSWERED: usize = 8;

/// Per scope, what the next call carries.
#[derive(Debug, Default)]
pub(crate) struct Carry {
    scopes: HashMap<String, Owed>,
}

#[derive(Debug, Default)]
struct Owed {
    lesson: Option<(Lesson, Instant)>,
    unanswered: VecDeque<String>,
    probe: Option<String>,
}

impl Owed {
    fn is_empty(&self) -> bool {
        self.lesson.is_none() && self.unanswered.is_empty() && self.probe.is_none()
    }
}

/// What one reservation takes along.
#[derive(Debug, Default)]
pub(crate) struct Outgoing {
    /// The lesson not yet shared and when it was learned.
    pub(crate) lesson: Option<(Lesson, Instant)>,
    /// Tokens of unanswered reservations, comma-separated.
    pub(crate) unanswered: String,
}

impl Outgoing {
    /// The lesson and its age at `now`.
    pub(crate) fn lesson_aged(&self, now: Instant) -> Option<(Lesson, Duration)> {
        self.lesson
            .map(|(lesson, at)| (lesson, now.saturating_duration_since(at)))
    }
}

impl Carry {
    fn owed(&mut self, scope: &str) -> &mut Owed {
        self.scopes.entry(scope.to_owned()).or_default()
    }

    fn tidy(&mut self, scope: &str) {
        if self.scopes.get(scope).is_some_and(Owed::is_empty) {
            self.scopes.remove(scope);
        }
    }

    /// Keep `lesson` (learned at `at`) for the next reservation; it
    /// replaces an older one, whose reading it supersedes.
    pub(crate) fn defer(&mut self, scope: &str, lesson: Lesson, at: Instant) {
        let owed = self.owed(scope);
        if owed.lesson.is_none_or(|(_, older)| older <= at) {
            owed.lesson = Some((lesson, at));
        }
    }

    /// What a reservation on `scope` takes along (the lesson leaves; the
    /// tokens stay until the reservation is answered).
    pub(crate) fn outgoing(&mut self, scope: &str) -> Outgoing {
        let Some(owed) = self.scopes.get_mut(scope) else {
            return Outgoing::default();
        };
        let out = Outgoing {
            lesson: owed.lesson.take(),
            unanswered: owed
                .unanswered
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(","),
        };
        self.tidy(scope);
        out
    }

    /// The reservation under `token` answered: the unanswered tokens went
    /// with it; a probe lease granted to it is this process's.
    pub(crate) fn answered(&mut self, scope: &str, token: &str, probe: bool) {
        let owed = self.owed(scope);
        owed.unanswered.clear();
        if probe {
            owed.probe = Some(token.to_owned());
        }
        self.tidy(scope);
    }

    /// The reservation under `token` got no answer: remember its token, and
    /// take its lesson back unless a newer one came meanwhile.
    pub(crate) fn unanswered(&mut self, scope: &str, token: &str, out: Outgoing) {
        let owed = self.owed(scope);
        if owed.unanswered.len() >= MAX_UNANSWERED {
            owed.unanswered.pop_front();
        }
        owed.unanswered.push_back(token.to_owned());
        if let Some((lesson, at)) = out.lesson
            && owed.lesson.is_none_or(|(_, newer)| newer < at)
        {
            owed.lesson = Some((lesson, at));
        }
    }

    /// A lesson was published at once: any probe lease is over (the server
    /// spoke), and a kept lesson is superseded when this one has a reading.
    pub(crate) fn published(&mut self, scope: &str, lesson: &Lesson) {
        let owed = self.owed(scope);
        owed.probe = None;
        if lesson.reads_quota() {
            owed.lesson = None;
        }
        self.tidy(scope);
    }

    /// The token of this process's probe lease on `scope`, given up.
    pub(crate) fn take_probe(&mut self, scope: &str) -> Option<String> {
        let token = self.owed(scope).probe.take();
        self.tidy(scope);
        token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lesson(refused: bool) -> Lesson {
        Lesson::from_response(refused, &crate::signal::Signal::default(), None)
    }

    #[test]
    fn a_kept_lesson_leaves_with_the_next_reservation_and_comes_back_if_unanswered() {
        let t0 = Instant::now();
        let mut c = Carry::default();
        c.defer("s", lesson(false), t0);
        let out = c.outgoing("s");
        assert_eq!(
            out.lesson_aged(t0 + Duration::from_millis(5))
                .map(|(_, age)| age),
            Some(Duration::from_millis(5))
        );
        assert!(c.outgoing("s").lesson.is_none(), "it left");
        c.unanswered("s", "t1", out);
        let again = c.outgoing("s");
        assert!(again.lesson.is_some(), "an unanswered call loses nothing");
        assert_eq!(again.unanswered, "t1");
        c.answered("s", "t2", false);
        assert!(c.scopes.is_empty(), "nothing left owed");
    }

    #[test]
    fn a_newer_lesson_wins_and_unanswered_tokens_are_capped() {
        let t0 = Instant::now();
        let mut c = Carry::default();
        c.defer("s", lesson(false), t0 + Duration::from_millis(2));
        c.defer("s", lesson(true), t0);
        assert!(
            !c.outgoing("s").lesson.unwrap().0.refused(),
            "the older one is dropped"
        );
        for i in 0..20 {
            c.unanswered("s", &format!("t{i}"), Outgoing::default());
        }
        let out = c.outgoing("s");
        assert_eq!(out.unanswered.split(',').count(), MAX_UNANSWERED);
        assert!(out.unanswered.ends_with("t19"));
    }

    #[test]
    fn only_a_probe_granted_to_this_process_is_released() {
        let mut c = Carry::default();
        c.answered("s", "mine", false);
        assert_eq!(c.take_probe("s"), None);
        c.answered("s", "mine", true);
        assert_eq!(c.take_probe("s").as_deref(), Some("mine"));
        assert_eq!(c.take_probe("s"), None, "given up once");
        c.answered("s", "again", true);
        c.published("s", &lesson(false));
        assert_eq!(c.take_probe("s"), None, "a published answer ends the lease");
    }
}
