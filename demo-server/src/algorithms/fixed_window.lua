-- Fixed window, atomic (after seeds/002): rejected requests are not counted.
-- KEYS[1] hash {w = window number, n = count}
-- ARGV[1] limit, ARGV[2] window ms. Windows are aligned to the Unix epoch.
-- Returns {allowed, remaining, retry_ms, reset_ms, now_ms}; time from Redis TIME.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local index = math.floor(now / window)
local state = redis.call('HMGET', KEYS[1], 'w', 'n')
local count = 0
if tonumber(state[1]) == index then
  count = tonumber(state[2]) or 0
end
local reset = (index + 1) * window - now
if count >= limit then
  return {0, 0, reset, reset, now}
end
count = count + 1
redis.call('HSET', KEYS[1], 'w', index, 'n', count)
redis.call('PEXPIRE', KEYS[1], reset)
return {1, limit - count, 0, reset, now}
