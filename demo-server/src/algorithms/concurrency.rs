//! Concurrency limit maths, mirroring `concurrency.lua`: leases by id, each
//! expiring `window` after it was taken unless given back first.
//!
//! A concurrency limiter cannot know when a request in service will end, so
//! a refusal's hint is a fixed [`RETRY_MS`] (`Retry-After: 1`, what the
//! servers of issue 32's first row send) and `reset` is zero.

use super::Parts;

/// The hint of a refusal, milliseconds.
pub const RETRY_MS: u64 = 1000;

/// Leases in service: `(id, expires at ms)`.
pub(crate) type Leases = Vec<(u64, f64)>;

/// Drop expired leases, then take one for `id` if fewer than `limit` are held.
pub(crate) fn take(leases: &mut Leases, limit: u64, window_ms: u64, id: u64, now_ms: f64) -> Parts {
    leases.retain(|&(_, expires)| expires > now_ms);
    let busy = leases.len() as u64;
    let now = now_ms.floor() as i64;
    if busy >= limit {
        return [0, 0, RETRY_MS as i64, 0, now];
    }
    leases.push((id, now_ms + window_ms as f64));
    [1, (limit - busy - 1) as i64, 0, 0, now]
}

/// Give the lease `id` back (nothing if it expired or was never taken).
pub(crate) fn release(leases: &mut Leases, id: u64) {
    leases.retain(|&(held, _)| held != id);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_the_limit_until_a_lease_comes_back_or_expires() {
        let mut leases = Leases::new();
        assert_eq!(take(&mut leases, 2, 30_000, 1, 0.0)[..2], [1, 1]);
        assert_eq!(take(&mut leases, 2, 30_000, 2, 0.0)[..2], [1, 0]);
        assert_eq!(take(&mut leases, 2, 30_000, 3, 0.0)[..3], [0, 0, 1000]);
        release(&mut leases, 1);
        release(&mut leases, 99);
        assert_eq!(take(&mut leases, 2, 30_000, 4, 0.0)[0], 1);
        assert_eq!(take(&mut leases, 2, 30_000, 5, 0.0)[0], 0);
        // Leases never given back expire after the window.
        assert_eq!(take(&mut leases, 2, 30_000, 6, 30_000.0)[..2], [1, 1]);
    }
}
