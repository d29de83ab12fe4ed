//! Running a step of a request within its deadline.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::Poll;

use tokio::time::{Instant, Sleep};

/// Runs `fut` until it completes or `deadline` passes (`None`: it is
/// dropped by the caller, cancelling it). `fut` is polled first, so an
/// answer ready at the deadline is kept. `timer` is made the first time
/// `fut` has to wait (a request answered at once never makes one, nor
/// needs a runtime's timer) and is kept for the request's later steps.
pub(super) fn within<'a, F: Future>(
    deadline: Option<Instant>,
    timer: &'a mut Option<Pin<Box<Sleep>>>,
    mut fut: Pin<&'a mut F>,
) -> impl Future<Output = Option<F::Output>> + 'a {
    poll_fn(move |cx| {
        if let Poll::Ready(out) = fut.as_mut().poll(cx) {
            return Poll::Ready(Some(out));
        }
        let Some(deadline) = deadline else {
            return Poll::Pending;
        };
        let timer = timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        timer.as_mut().poll(cx).map(|()| None)
    })
}
