-- Token bucket, atomic: read, refill, take, write, expire in one script.
-- KEYS[1] bucket hash {t = tokens, ts = last update ms}
-- ARGV[1] capacity, ARGV[2] window ms (time to refill from empty)
-- Returns {allowed, remaining, retry_ms, reset_ms, now_ms}; time from Redis TIME.
local cap = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local rate = cap / window
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + tonumber(clock[2]) / 1000
local state = redis.call('HMGET', KEYS[1], 't', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil or ts == nil then
  tokens = cap
  ts = now
end
if now > ts then
  tokens = math.min(cap, tokens + (now - ts) * rate)
  ts = now
end
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 't', string.format('%.6f', tokens), 'ts', string.format('%.3f', ts))
redis.call('PEXPIRE', KEYS[1], window + 1000)
local retry = 0
if allowed == 0 then
  retry = math.ceil((1 - tokens) / rate)
end
local reset = math.ceil((cap - tokens) / rate)
return {allowed, math.floor(tokens), retry, reset, math.floor(now)}
