//! Mock servers that limit as real APIs do, headers, statuses and bodies
//! as their documentation shows them.

mod anthropic;
mod aws;
mod azure;
mod discord;
mod format;
mod gitlab;
mod google;
mod meter;
mod openai;
mod reddit;
mod shopify;
mod x;

pub use anthropic::AnthropicApi;
pub use aws::AwsApi;
pub use azure::AzureApi;
pub use discord::DiscordApi;
pub use gitlab::GitLabApi;
pub use google::GoogleApi;
pub use openai::OpenAiApi;
pub use reddit::RedditApi;
pub use shopify::ShopifyApi;
pub use x::XApi;

/// `received`, `admitted` and `rejected` for a mock with `quotas: Quotas`.
macro_rules! counter_methods {
    ($ty:ident) => {
        impl $ty {
            /// Requests answered so far, by every clone of this mock.
            pub fn received(&self) -> u64 {
                self.quotas.counters.received()
            }

            /// Requests admitted so far, by every clone of this mock.
            pub fn admitted(&self) -> u64 {
                self.quotas.counters.admitted()
            }

            /// Requests refused so far, by every clone of this mock.
            pub fn rejected(&self) -> u64 {
                self.quotas.counters.rejected()
            }
        }
    };
}
pub(crate) use counter_methods;
