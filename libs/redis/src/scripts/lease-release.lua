--[[
  lease-release: the attempt ended on this worker. 'DONE' when its result is durable (a
  redelivered copy of the task is then skipped); 'RELEASED' when it was given up unfinished
  (shutdown), so the redelivered task may be claimed again by the next worker.

  KEYS[1] attempt  STRING  "<fence>|<state>|<worker>"
  KEYS[2] leases   ZSET    job id -> lease expiry (ms)
  ARGV[1] job id
  ARGV[2] fence
  ARGV[3] worker id
  ARGV[4] new state: DONE or RELEASED
  ARGV[5] TTL of the attempt key, seconds
  Returns: 'OK', or 'ZOMBIE' if this worker no longer held the attempt (nothing changed).
]]
if redis.call('GET', KEYS[1]) ~= ARGV[2] .. '|RUNNING|' .. ARGV[3] then
  return 'ZOMBIE'
end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SET', KEYS[1], ARGV[2] .. '|' .. ARGV[4] .. '|' .. ARGV[3], 'EX', ARGV[5])
return 'OK'
