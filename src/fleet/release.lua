-- courteous fleet: give up a probe lease, only the caller's own.
-- KEYS[1] hash: the scope's shared state. ARGV[1] the token the lease was
-- granted to (see reserve.lua). Returns 1 if released, 0 if the lease is
-- not (or no longer) this caller's: another process's probe is left alone.
if redis.call('HGET', KEYS[1], 'prober') == ARGV[1] then
  redis.call('HDEL', KEYS[1], 'probe', 'prober')
  return 1
end
return 0
