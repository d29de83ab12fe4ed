//! Turning a limiter's verdict into a response in the configured dialects.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::StatusCode;
use wiremock::ResponseTemplate;

use super::dates::{self, DateForm};
use super::style::{Dialect, RetryAfterStyle};

/// The name given to the one policy in list-shaped IETF fields.
const POLICY_NAME: &str = "default";

/// What a limiter decided for one request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Verdict {
    /// `None` when admitted; the wait until a retry can succeed otherwise.
    pub(crate) rejected_for: Option<Duration>,
    /// The quota after this request, when the responder models one.
    pub(crate) quota: Option<QuotaState>,
}

/// A limiter's quota as the headers describe it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct QuotaState {
    pub(crate) limit: u32,
    pub(crate) remaining: u32,
    /// Until the quota grows back: all of it for a bucket or a fixed
    /// window; for a sliding log, the oldest admission's unit (it never
    /// refills all at once).
    pub(crate) reset: Duration,
    /// The time a full quota takes to come back (the policy window).
    pub(crate) window: Duration,
}

/// How responses look: hint styles, quota dialects, statuses and bodies.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    hints: Vec<RetryAfterStyle>,
    dialects: Vec<Dialect>,
    reject_status: StatusCode,
    admitted: ResponseTemplate,
}

impl Default for Shape {
    fn default() -> Self {
        Self {
            hints: Vec::new(),
            dialects: Vec::new(),
            reject_status: StatusCode::TOO_MANY_REQUESTS,
            admitted: ResponseTemplate::new(StatusCode::OK),
        }
    }
}

impl Shape {
    pub(crate) fn add_hint(&mut self, style: RetryAfterStyle) {
        if !self.hints.contains(&style) {
            self.hints.push(style);
        }
    }

    pub(crate) fn add_dialect(&mut self, dialect: Dialect) {
        if !self.dialects.contains(&dialect) {
            self.dialects.push(dialect);
            // Emit in a fixed order so overlapping IETF fields are predictable.
            self.dialects
                .sort_by_key(|d| Dialect::ALL.iter().position(|x| x == d));
        }
    }

    pub(crate) fn clear(&mut self) {
        self.hints.clear();
        self.dialects.clear();
    }

    pub(crate) fn set_reject_status(&mut self, status: StatusCode) {
        self.reject_status = status;
    }

    pub(crate) fn set_admitted(&mut self, template: ResponseTemplate) {
        self.admitted = template;
    }

    /// The response for a verdict, stamped with the current wall clock.
    pub(crate) fn render(&self, verdict: &Verdict) -> ResponseTemplate {
        self.render_at(verdict, SystemTime::now())
    }

    /// The response for a verdict taken at wall-clock `now`.
    pub(crate) fn render_at(&self, verdict: &Verdict, now: SystemTime) -> ResponseTemplate {
        let mut template = match verdict.rejected_for {
            None => self.admitted.clone(),
            Some(wait) => self.rejection(wait, verdict.quota.is_some(), now),
        };
        if let Some(quota) = verdict.quota {
            for dialect in &self.dialects {
                template = quota_fields(template, *dialect, &quota, now);
            }
        }
        if self.needs_date(verdict) {
            // Whole seconds, as the header can say no more; hyper leaves a
            // `Date` set by the application alone.
            template = template.insert_header("date", httpdate::fmt_http_date(now));
        }
        template
    }

    fn needs_date(&self, verdict: &Verdict) -> bool {
        let date_hint = verdict.rejected_for.is_some() && self.hints.iter().any(|h| h.is_date());
        let epoch_reset = verdict.quota.is_some() && self.dialects.contains(&Dialect::XRateLimit);
        date_hint || epoch_reset
    }

    fn rejection(&self, wait: Duration, has_policy: bool, now: SystemTime) -> ResponseTemplate {
        let mut template = ResponseTemplate::new(self.reject_status);
        let mut problem: Option<serde_json::Map<String, serde_json::Value>> = None;
        for style in &self.hints {
            template = match style {
                RetryAfterStyle::Seconds => {
                    template.insert_header("retry-after", ceil_secs(wait).to_string())
                }
                RetryAfterStyle::SecondsNearest => {
                    let nearest = (wait + Duration::from_millis(500)).as_secs();
                    template.insert_header("retry-after", nearest.to_string())
                }
                RetryAfterStyle::HttpDate => date_hint(template, now, wait, DateForm::ImfFixdate),
                RetryAfterStyle::HttpDateRfc850 => date_hint(template, now, wait, DateForm::Rfc850),
                RetryAfterStyle::HttpDateAsctime => {
                    date_hint(template, now, wait, DateForm::Asctime)
                }
                RetryAfterStyle::Millis => {
                    template.insert_header("retry-after-ms", ceil_millis(wait).to_string())
                }
                RetryAfterStyle::XMsMillis => {
                    template.insert_header("x-ms-retry-after-ms", ceil_millis(wait).to_string())
                }
                RetryAfterStyle::ProblemJsonMillis => {
                    let body = problem.get_or_insert_with(|| self.problem(has_policy));
                    body.insert("retry_after_ms".into(), ceil_millis(wait).into());
                    template
                }
                RetryAfterStyle::ProblemJsonSeconds => {
                    let body = problem.get_or_insert_with(|| self.problem(has_policy));
                    let secs = ceil_millis(wait) as f64 / 1000.0;
                    body.insert("retry_after".into(), secs.into());
                    template
                }
            };
        }
        if let Some(body) = problem {
            let bytes = serde_json::Value::Object(body).to_string();
            template = template.set_body_raw(bytes, "application/problem+json");
        }
        template
    }

    /// An RFC 9457 problem document with the draft's problem type.
    fn problem(&self, has_policy: bool) -> serde_json::Map<String, serde_json::Value> {
        let kind = if self.reject_status == StatusCode::SERVICE_UNAVAILABLE {
            "temporary-reduced-capacity"
        } else {
            "quota-exceeded"
        };
        let mut body = serde_json::Map::new();
        body.insert(
            "type".into(),
            format!("https://iana.org/assignments/http-problem-types#{kind}").into(),
        );
        body.insert(
            "title".into(),
            self.reject_status
                .canonical_reason()
                .unwrap_or("Rejected")
                .into(),
        );
        body.insert("status".into(), self.reject_status.as_u16().into());
        if has_policy && self.dialects.contains(&Dialect::IetfList) {
            body.insert("violated-policies".into(), serde_json::json!([POLICY_NAME]));
        }
        body
    }
}

fn quota_fields(
    template: ResponseTemplate,
    dialect: Dialect,
    q: &QuotaState,
    now: SystemTime,
) -> ResponseTemplate {
    let reset = ceil_secs(q.reset);
    let window = ceil_secs(q.window).max(1);
    let legacy_policy = format!("{};w={window}", q.limit);
    match dialect {
        Dialect::IetfSeparate => separate(template, q, reset),
        Dialect::IetfSeparateLimitPolicy => separate(template, q, reset)
            .insert_header("ratelimit-limit", format!("{}, {legacy_policy}", q.limit)),
        Dialect::IetfSeparateWithPolicy => {
            separate(template, q, reset).insert_header("ratelimit-policy", legacy_policy)
        }
        Dialect::IetfDictionary => template
            .insert_header(
                "ratelimit",
                format!(
                    "limit={}, remaining={}, reset={reset}",
                    q.limit, q.remaining
                ),
            )
            .insert_header("ratelimit-policy", legacy_policy),
        Dialect::IetfList => template
            .insert_header(
                "ratelimit-policy",
                format!("\"{POLICY_NAME}\";q={};w={window}", q.limit),
            )
            .insert_header(
                "ratelimit",
                format!("\"{POLICY_NAME}\";r={};t={reset}", q.remaining),
            ),
        Dialect::XRateLimit => template
            .insert_header("x-ratelimit-limit", q.limit.to_string())
            .insert_header("x-ratelimit-remaining", q.remaining.to_string())
            .insert_header("x-ratelimit-used", (q.limit - q.remaining).to_string())
            .insert_header(
                "x-ratelimit-reset",
                ceil_secs(epoch(now) + q.reset).to_string(),
            ),
        Dialect::XRateLimitResetAfter => template
            .insert_header("x-ratelimit-limit", q.limit.to_string())
            .insert_header("x-ratelimit-remaining", q.remaining.to_string())
            .insert_header(
                "x-ratelimit-reset-after",
                format!("{:.3}", ceil_millis(q.reset) as f64 / 1000.0),
            ),
    }
}

/// `Retry-After` as the date `wait` from `now`, rounded up to the second.
fn date_hint(
    template: ResponseTemplate,
    now: SystemTime,
    wait: Duration,
    form: DateForm,
) -> ResponseTemplate {
    let at = UNIX_EPOCH + Duration::from_secs(ceil_secs(epoch(now) + wait));
    template.insert_header("retry-after", dates::format(at, form))
}

fn separate(template: ResponseTemplate, q: &QuotaState, reset: u64) -> ResponseTemplate {
    template
        .insert_header("ratelimit-limit", q.limit.to_string())
        .insert_header("ratelimit-remaining", q.remaining.to_string())
        .insert_header("ratelimit-reset", reset.to_string())
}

fn epoch(now: SystemTime) -> Duration {
    now.duration_since(UNIX_EPOCH).unwrap_or_default()
}

/// Whole seconds, rounded up: a hint must never send a client back early.
pub(crate) fn ceil_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// Whole milliseconds, rounded up.
pub(crate) fn ceil_millis(d: Duration) -> u64 {
    let millis = d.as_nanos().div_ceil(1_000_000);
    u64::try_from(millis).unwrap_or(u64::MAX)
}
