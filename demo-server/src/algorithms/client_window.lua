-- Fixed window opened by the client's first request (per-client window, as
-- API gateways and express-rate-limit do); rejected requests are not counted.
-- KEYS[1] hash {s = window start ms, n = count}, expiring when the window ends.
-- ARGV[1] limit, ARGV[2] window ms.
-- Returns {allowed, remaining, retry_ms, reset_ms, now_ms}; time from Redis TIME.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 's', 'n')
local start = tonumber(state[1])
local count = tonumber(state[2]) or 0
if start == nil or now >= start + window then
  start = now
  count = 0
end
local reset = math.max(start + window - now, 1)
if count >= limit then
  return {0, 0, reset, reset, now}
end
count = count + 1
redis.call('HSET', KEYS[1], 's', start, 'n', count)
redis.call('PEXPIRE', KEYS[1], reset)
return {1, limit - count, 0, reset, now}
