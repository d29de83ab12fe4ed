-- Token bucket, atomic: read, refill, take, write, expire in one script.
-- KEYS[1] string: struct.pack('dd', tokens, last update ms)
-- ARGV[1] capacity, ARGV[2] window ms (time to refill from empty)
-- Returns {allowed, remaining, retry_ms, reset_ms, now_ms}; time from Redis TIME.
-- One GET and one SET PX (not HMGET + HSET + PEXPIRE): fewer calls per check.
-- A rejection writes nothing: refill is linear below capacity, so recomputing
-- from the stored state later gives the same tokens.
local cap = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local rate = cap / window
local clock = redis.call('TIME')
local now = clock[1] * 1000 + clock[2] / 1000
local tokens, ts = cap, now
local stored = redis.call('GET', KEYS[1])
if stored then
  tokens, ts = struct.unpack('dd', stored)
end
if now > ts then
  tokens = math.min(cap, tokens + (now - ts) * rate)
  ts = now
end
if tokens < 1 then
  return {0, 0, math.ceil((1 - tokens) / rate), math.ceil((cap - tokens) / rate), math.floor(now)}
end
tokens = tokens - 1
redis.call('SET', KEYS[1], struct.pack('dd', tokens, ts), 'PX', window + 1000)
return {1, math.floor(tokens), 0, math.ceil((cap - tokens) / rate), math.floor(now)}
