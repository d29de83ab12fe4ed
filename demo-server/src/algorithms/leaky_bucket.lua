-- Leaky bucket as a meter, atomic: read, drain, add, write, expire in one script.
-- KEYS[1] string: struct.pack('dd', level, last update ms)
-- ARGV[1] size, ARGV[2] window ms (time to drain from full)
-- Returns {allowed, remaining, retry_ms, reset_ms, now_ms}; time from Redis TIME.
-- remaining is size - level rounded up (the `used/size` header's used is
-- size - remaining); reset is the time until the bucket is empty.
local size = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local rate = size / window
local clock = redis.call('TIME')
local now = clock[1] * 1000 + clock[2] / 1000
local level, ts = 0, now
local stored = redis.call('GET', KEYS[1])
if stored then
  level, ts = struct.unpack('dd', stored)
end
if now > ts then
  level = math.max(0, level - (now - ts) * rate)
  ts = now
end
if level + 1 > size then
  return {0, 0, math.ceil((level + 1 - size) / rate), math.ceil(level / rate), math.floor(now)}
end
level = level + 1
redis.call('SET', KEYS[1], struct.pack('dd', level, ts), 'PX', window + 1000)
return {1, size - math.ceil(level), 0, math.ceil(level / rate), math.floor(now)}
