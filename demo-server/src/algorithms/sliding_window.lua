-- Sliding window counter (after seeds/004): the current and the previous
-- fixed window, the previous one weighted by how much of it still overlaps.
-- KEYS[1] hash {w = window number, cur, prev}; ARGV[1] limit, ARGV[2] window ms.
-- Returns {allowed, remaining, retry_ms, reset_ms, now_ms}; time from Redis TIME.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local index = math.floor(now / window)
local state = redis.call('HMGET', KEYS[1], 'w', 'cur', 'prev')
local stored = tonumber(state[1])
local cur = tonumber(state[2]) or 0
local prev = tonumber(state[3]) or 0
if stored == nil then
  cur, prev = 0, 0
elseif stored == index - 1 then
  cur, prev = 0, cur
elseif stored ~= index then
  cur, prev = 0, 0
end
local start = index * window
local weight = 1 - (now - start) / window
local estimate = prev * weight + cur
local allowed = 0
if estimate + 1 <= limit then
  allowed = 1
  cur = cur + 1
  estimate = estimate + 1
  redis.call('HSET', KEYS[1], 'w', index, 'cur', cur, 'prev', prev)
  redis.call('PEXPIRE', KEYS[1], start + 2 * window - now)
end
local to_end = start + window - now
local retry = 0
if allowed == 0 then
  if cur + 1 <= limit then
    -- wait until prev * weight <= limit - cur - 1 within this window
    retry = math.ceil((1 - (limit - cur - 1) / prev) * window - (now - start))
  else
    -- next window: cur becomes prev; wait until cur * weight <= limit - 1
    retry = to_end + math.ceil(math.max(0, 1 - (limit - 1) / cur) * window)
  end
  retry = math.max(1, retry)
end
local reset = 0
if cur > 0 then
  reset = to_end + window
elseif prev > 0 then
  reset = to_end
end
return {allowed, math.max(0, math.floor(limit - estimate)), retry, reset, now}
