-- courteous fleet: reserve one send slot for a scope shared by many
-- processes, after merging the lesson this process learned since its last
-- call (`learn`, learn.lua, is prepended): one round trip per send.
-- KEYS[1] hash: the scope's shared state; KEYS[2] sorted set: members seen.
-- ARGV[1] member id, ARGV[2] probe lease ms, ARGV[3] poll ms,
-- ARGV[4] gap ms between sends leaving a pause while no rate is known,
-- ARGV[5] member window ms, ARGV[6] key TTL ms, ARGV[7] headroom ms,
-- ARGV[8] longest wait the caller accepts, in microseconds (-1: any),
-- ARGV[9] this call's token: a probe lease granted here is held under it,
-- ARGV[10] tokens of this process's calls that got no answer in time,
--   comma-separated ('' none): a probe lease one of them was granted
--   unawares is given up, so the fleet does not wait out its lease,
-- ARGV[11..19] optional: the lesson of this process's last response,
--   not yet shared (see learn.lua).
-- Returns {kind, wait_us, members, interval_us, probe}:
--   kind 0: a slot is reserved for this caller; send after wait_us.
--   kind 1: nothing is known yet and another process probes; ask again after wait_us.
--   kind 2: the next slot is further than the caller accepts (wait_us):
--     nothing is reserved (GCRA deny without update), so a caller that
--     gives up does not push everyone else's slots later.
--   probe 1: this caller probes (under its token): publish after its
--     response, whatever it says.
-- Time is Redis TIME only, in milliseconds with fractions.
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + tonumber(clock[2]) / 1000
local lease, poll, gap = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local ttl = tonumber(ARGV[6])
local headroom = tonumber(ARGV[7])
local longest = tonumber(ARGV[8])
local function too_far(at)
  return longest >= 0 and (at - now) * 1000 > longest
end

if ARGV[10] ~= '' then
  local prober = redis.call('HGET', KEYS[1], 'prober')
  if prober and string.find(',' .. ARGV[10] .. ',', ',' .. prober .. ',', 1, true) then
    redis.call('HDEL', KEYS[1], 'probe', 'prober')
  end
end
if #ARGV >= 19 then
  learn(now, 11, ttl, headroom)
end

redis.call('ZADD', KEYS[2], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[5]))
redis.call('PEXPIRE', KEYS[2], ttl)
local members = redis.call('ZCARD', KEYS[2])

local s = redis.call('HMGET', KEYS[1], 'tat', 'iv', 'burst', 'pause', 'probe', 'seen', 'heard')
local tat = tonumber(s[1]) or 0
local iv = tonumber(s[2])
local burst = tonumber(s[3]) or 1
local pause = tonumber(s[4]) or 0
local probe = tonumber(s[5]) or 0
local function fmt(x) return string.format('%.3f', x) end
local function keep(until_ms)
  redis.call('PEXPIRE', KEYS[1], math.ceil(math.max(0, until_ms - now) + ttl))
end

-- Idle: nothing granted and nothing read for a whole refill (`burst`
-- intervals), so the server's bucket is full whatever happened before, and
-- the next sends leave on cold connections. A full bucket loses the refill
-- of every moment a send spends on its way, and a burst of cold first sends
-- can all be late together (a stalled path, a host busy starting many
-- processes): one probe goes first, as at first contact, and the burst
-- follows its answer. Never while a pause holds or its queue drains (a
-- refusal puts `tat` past the pause, see learn.lua): those slots go one
-- interval apart, no burst, and the waiting processes hold slots instead
-- of asking again every poll.
local heard = tonumber(s[7])
local idle = iv and heard and now - heard >= burst * iv and tat <= now and pause <= now
if not s[6] or idle or probe > now then
  -- Nothing heard from the server yet (or not since the fleet went idle):
  -- one probe at a time, so a fleet starting together does not send blind
  -- into an empty bucket, nor a burst into a path that does not answer.
  local free = math.max(pause, probe)
  if free <= now then
    redis.call('HSET', KEYS[1], 'probe', fmt(now + lease), 'prober', ARGV[9])
    if iv then
      tat = math.max(tat, now) + iv
      redis.call('HSET', KEYS[1], 'tat', fmt(tat))
    end
    keep(math.max(now + lease, tat))
    return {0, 0, members, math.floor((iv or 0) * 1000), 1}
  end
  return {1, math.ceil(math.min(free - now, poll) * 1000), members, 0, 0}
end

local at
if iv then
  -- GCRA: a send may go once at most `burst` sends are outstanding, every
  -- slot held back by the headroom (whole intervals, less than the burst):
  -- refill is lost while a full bucket waits for sends still on their way.
  local hold = math.min(math.ceil(headroom / iv), burst - 1) * iv
  at = math.max(now, pause, tat - (burst - 1) * iv + hold)
  if too_far(at) then
    return {2, math.ceil((at - now) * 1000), members, math.floor(iv * 1000), 0}
  end
  tat = math.max(tat, at) + iv
else
  -- No rate known: go at once unless a pause is on or its queue drains;
  -- then leave `gap` apart.
  at = math.max(now, pause, tat)
  if at <= now then
    return {0, 0, members, 0, 0}
  end
  if too_far(at) then
    return {2, math.ceil((at - now) * 1000), members, 0, 0}
  end
  tat = at + gap
end
redis.call('HSET', KEYS[1], 'tat', fmt(tat), 'heard', fmt(now))
keep(tat)
return {0, math.ceil((at - now) * 1000), members, math.floor((iv or 0) * 1000), 0}
