-- courteous fleet: publish what one response taught, merged so that stale
-- readings only tighten.
-- KEYS[1] hash: the scope's shared state.
-- ARGV[1] 1 if the response was a refusal (429/503), else 0
-- ARGV[2] pause ms after a refusal (-1: none)
-- ARGV[3] limit, ARGV[4] remaining, ARGV[5] window ms, ARGV[6] reset ms (-1: unknown)
-- ARGV[7] kind of quota: 'c' continuous refill, 'w' window, '-' unknown
-- ARGV[8] interval margin (0.02 = slots 2 % wider than limit/window)
-- ARGV[9] key TTL ms, ARGV[10] headroom ms (see reserve.lua)
-- The policy (interval, burst) only tightens: a reading looser than the
-- shared one (a stale answer, a process on another plan's key) is ignored
-- unless the shared policy went unconfirmed for a whole key TTL (no
-- reading as tight as it since, field `polat`): then the looser one is
-- the server's new policy and replaces it.
-- Returns {now_ms, interval_us}.
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + tonumber(clock[2]) / 1000
local throttled = ARGV[1] == '1'
local pause_ms = tonumber(ARGV[2])
local limit, remaining = tonumber(ARGV[3]), tonumber(ARGV[4])
local window, reset = tonumber(ARGV[5]), tonumber(ARGV[6])
local margin, ttl = tonumber(ARGV[8]), tonumber(ARGV[9])
local headroom = tonumber(ARGV[10])

local s = redis.call('HMGET', KEYS[1], 'tat', 'iv', 'burst', 'pause', 'kind', 'polat')
local tat = tonumber(s[1]) or 0
local iv = tonumber(s[2])
local burst = tonumber(s[3]) or 1
local pause = tonumber(s[4]) or 0
local kind = s[5] or '-'
local polat = tonumber(s[6]) or 0
local first = iv == nil

if limit > 0 and window > 0 then
  local read_iv = window / limit * (1 + margin)
  if first or now - polat > ttl then
    iv, burst = read_iv, limit
  else
    iv, burst = math.max(iv, read_iv), math.min(burst, limit)
  end
  if iv <= read_iv and burst >= limit then
    -- The shared policy is this reading's: confirmed now.
    polat = now
  end
end
if ARGV[7] ~= '-' then kind = ARGV[7] end

if iv and remaining >= 0 then
  -- The server's reading as a theoretical arrival time. A fleet already
  -- pacing tolerates one slot of rounding (remaining is floored, and read
  -- a little after the server counted): only a reading at least one send
  -- tighter than ours moves the shared state.
  local synced = now + (burst - math.min(remaining, burst)) * iv
  if not first then synced = synced - iv end
  tat = math.max(tat, synced)
  if kind == 'w' and remaining == 0 and reset > 0 then
    pause = math.max(pause, now + reset)
  end
end
if throttled then
  -- One refusal anywhere pauses the whole fleet until its hint; then one
  -- send at the pause's end and one per interval after it.
  pause = math.max(pause, now + math.max(pause_ms, 0))
  if iv then
    local hold = math.min(math.ceil(headroom / iv), burst - 1) * iv
    tat = math.max(tat, pause + (burst - 1) * iv - hold)
  end
end

local function fmt(x) return string.format('%.3f', x) end
redis.call('HSET', KEYS[1], 'seen', '1', 'tat', fmt(tat), 'burst', burst,
  'pause', fmt(pause), 'kind', kind, 'polat', fmt(polat))
if iv then redis.call('HSET', KEYS[1], 'iv', fmt(iv)) end
redis.call('HDEL', KEYS[1], 'probe')
redis.call('PEXPIRE', KEYS[1], math.ceil(math.max(0, tat - now, pause - now) + ttl))
return {math.floor(now), math.floor((iv or 0) * 1000)}
