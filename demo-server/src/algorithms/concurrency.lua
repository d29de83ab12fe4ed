-- Concurrency limit, atomic: drop expired leases, count, take one if free.
-- KEYS[1] sorted set: lease id -> expiry ms
-- ARGV[1] limit (requests in service), ARGV[2] lease lifetime ms (the
-- policy's window: a lease whose answer never left expires then),
-- ARGV[3] lease id, ARGV[4] the hint for a refusal, ms.
-- Returns {allowed, remaining, retry_ms, reset_ms, now_ms}; time from Redis TIME.
-- The lease is given back with ZREM when the answer leaves.
local limit = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = clock[1] * 1000 + clock[2] / 1000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local busy = redis.call('ZCARD', KEYS[1])
if busy >= limit then
  return {0, 0, tonumber(ARGV[4]), 0, math.floor(now)}
end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[3])
redis.call('PEXPIRE', KEYS[1], ttl)
return {1, limit - busy - 1, 0, 0, math.floor(now)}
