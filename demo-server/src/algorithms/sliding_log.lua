-- Sliding log: a sorted set of the admitted requests of the last window.
-- KEYS[1] zset (score = time ms), ARGV[1] limit, ARGV[2] window ms,
-- ARGV[3] unique member for this request.
-- Returns {allowed, remaining, retry_ms, reset_ms, now_ms}; time from Redis TIME.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = clock[1] * 1000 + clock[2] / 1000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(window))
  return {1, limit - count - 1, 0, math.ceil(window), math.floor(now)}
end
-- Full: the oldest entry frees the next slot, the newest the whole quota.
local oldest = tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]) or now
local newest = tonumber(redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2]) or now
local retry = math.max(1, math.ceil(oldest + window - now))
local reset = math.max(0, math.ceil(newest + window - now))
return {0, 0, retry, reset, math.floor(now)}
