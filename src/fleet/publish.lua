-- courteous fleet: publish what one response taught at once (a refusal's
-- pause, a probe's answer, a reading that changes the shared state), merged
-- by `learn` (learn.lua, prepended) so that stale readings only tighten.
-- KEYS[1] hash: the scope's shared state.
-- ARGV[1] key TTL ms, ARGV[2] headroom ms (see reserve.lua),
-- ARGV[3..11] the lesson (see learn.lua).
-- Returns {now_ms, interval_us}.
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + tonumber(clock[2]) / 1000
local iv = learn(now, 3, tonumber(ARGV[1]), tonumber(ARGV[2]))
return {math.floor(now), math.floor((iv or 0) * 1000)}
