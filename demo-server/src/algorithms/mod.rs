//! The algorithms, twice: as Lua scripts for Redis (`*.lua`, run with
//! `EVALSHA`) and as the same maths in Rust for the embedded store and for
//! `racy-bucket`, whose read and write are separate Redis commands.
//!
//! Every check returns the same five integers,
//! `[allowed, remaining, retry_ms, reset_ms, now_ms]`
//! (see [`crate::Decision`]).

pub(crate) mod client_window;
pub mod concurrency;
pub(crate) mod fixed_window;
pub(crate) mod leaky_bucket;
pub(crate) mod sliding_log;
pub(crate) mod sliding_window;
pub(crate) mod token_bucket;

/// `[allowed, remaining, retry_ms, reset_ms, now_ms]`.
pub(crate) type Parts = [i64; 5];

/// Lua source of `token-bucket`.
pub const TOKEN_BUCKET_LUA: &str = include_str!("token_bucket.lua");
/// Lua source of `client-window`.
pub const CLIENT_WINDOW_LUA: &str = include_str!("client_window.lua");
/// Lua source of `fixed-window-lua`.
pub const FIXED_WINDOW_LUA: &str = include_str!("fixed_window.lua");
/// Lua source of `sliding-log`.
pub const SLIDING_LOG_LUA: &str = include_str!("sliding_log.lua");
/// Lua source of `sliding-window`.
pub const SLIDING_WINDOW_LUA: &str = include_str!("sliding_window.lua");
/// Lua source of `leaky-bucket`.
pub const LEAKY_BUCKET_LUA: &str = include_str!("leaky_bucket.lua");
/// Lua source of `concurrency` (taking a lease; `ZREM` gives it back).
pub const CONCURRENCY_LUA: &str = include_str!("concurrency.lua");
