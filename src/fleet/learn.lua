-- courteous fleet: merge what one response taught into a scope's shared
-- state, so that stale readings only tighten. Shared by publish.lua and
-- reserve.lua (prepended to each; `learn` is called with the index of the
-- lesson's first argument).
-- ARGV[a] 1 if the response was a refusal (429/503), else 0
-- ARGV[a+1] pause ms after a refusal (-1: none)
-- ARGV[a+2] limit, ARGV[a+3] remaining, ARGV[a+4] window ms,
-- ARGV[a+5] reset ms (-1: unknown)
-- ARGV[a+6] kind of quota: 'c' continuous refill, 'w' window, '-' unknown
-- ARGV[a+7] interval margin (0.02 = slots 2 % wider than limit/window)
-- ARGV[a+8] age of the reading, ms: how long before this call the
--   response came (a lesson carried by the next reservation is not new)
-- The policy (interval, burst) only tightens: a reading looser than the
-- shared one (a stale answer, a process on another plan's key) is ignored
-- unless the shared policy went unconfirmed for a whole key TTL (no
-- reading as tight as it since, field `polat`): then the looser one is
-- the server's new policy and replaces it.
local function learn(now, a, ttl, headroom)
  local throttled = ARGV[a] == '1'
  local pause_ms = tonumber(ARGV[a + 1])
  local limit, remaining = tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local window, reset = tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5])
  local margin = tonumber(ARGV[a + 7])
  -- When the server said it, on Redis' clock.
  local read = now - math.max(0, tonumber(ARGV[a + 8]))

  local s = redis.call('HMGET', KEYS[1], 'tat', 'iv', 'burst', 'pause', 'kind', 'polat', 'heard')
  local tat = tonumber(s[1]) or 0
  local iv = tonumber(s[2])
  local burst = tonumber(s[3]) or 1
  local pause = tonumber(s[4]) or 0
  local kind = s[5] or '-'
  local polat = tonumber(s[6]) or 0
  local heard = math.max(tonumber(s[7]) or 0, read)
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
  if ARGV[a + 6] ~= '-' then kind = ARGV[a + 6] end

  if iv and remaining >= 0 then
    -- The server's reading as a theoretical arrival time. A fleet already
    -- pacing tolerates one slot of rounding (remaining is floored, and read
    -- a little after the server counted): only a reading at least one send
    -- tighter than ours moves the shared state.
    local synced = read + (burst - math.min(remaining, burst)) * iv
    if not first then synced = synced - iv end
    tat = math.max(tat, synced)
    if kind == 'w' and remaining == 0 and reset > 0 then
      pause = math.max(pause, read + reset)
    end
  end
  if throttled then
    -- One refusal anywhere pauses the whole fleet until its hint; then one
    -- send at the pause's end and one per interval after it.
    pause = math.max(pause, read + math.max(pause_ms, 0))
    if iv then
      local hold = math.min(math.ceil(headroom / iv), burst - 1) * iv
      tat = math.max(tat, pause + (burst - 1) * iv - hold)
    end
  end

  local function fmt(x) return string.format('%.3f', x) end
  redis.call('HSET', KEYS[1], 'seen', '1', 'tat', fmt(tat), 'burst', burst,
    'pause', fmt(pause), 'kind', kind, 'polat', fmt(polat), 'heard', fmt(heard))
  if iv then redis.call('HSET', KEYS[1], 'iv', fmt(iv)) end
  redis.call('HDEL', KEYS[1], 'probe', 'prober')
  redis.call('PEXPIRE', KEYS[1], math.ceil(math.max(0, tat - now, pause - now) + ttl))
  return iv
end
