//! [`Azure`]: Azure Resource Manager.

use super::{Settings, adapters, by_status};

/// Azure Resource Manager (`management.azure.com`), as its "Understand
/// how Azure Resource Manager throttles requests" documentation describes
/// it:
///
/// - `429` is throttled, for `Retry-After` (refined by `retry-after-ms` or
///   `x-ms-retry-after-ms`, as azure-core reads them);
/// - `x-ms-ratelimit-remaining-subscription-{reads,writes,deletes}` and
///   `x-ms-ratelimit-remaining-resource` are read as quotas (remaining
///   counts only: Azure sends no limit or reset with them);
/// - everything else as [`Response::by_status`](crate::classify::Response::by_status).
///
/// For Azure OpenAI, use [`OpenAi`](super::OpenAi).
///
/// ```
/// let client = courteous::preset::Azure.client().build();
/// # let _ = client;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Azure;

by_status!(Azure);

impl Settings for Azure {}

adapters!(Azure, "Azure Resource Manager");
