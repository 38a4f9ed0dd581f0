--[[
  lease-release: the attempt ended on this worker. 'DONE' when its result is durable (a
  redelivered copy of the task is then skipped); 'RELEASED' when it was given up unfinished
  (shutdown), so the redelivered task may be claimed again by the next worker.

  A missing record (Redis lost its data) or one of an older fence is not a newer attempt: the
  end is recorded as if this worker still held it. Only a record of a higher fence, or of this
  fence finished, reaped or held by another worker, makes this worker a zombie.

  KEYS[1] attempt  STRING  "<fence>|<state>|<worker>"
  KEYS[2] leases   ZSET    job id -> lease expiry (ms)
  ARGV[1] job id
  ARGV[2] fence
  ARGV[3] worker id
  ARGV[4] new state: DONE or RELEASED
  ARGV[5] TTL of the attempt key, seconds
  Returns: 'OK', or 'ZOMBIE' if this worker no longer held the attempt (nothing changed).
]]
local cur = redis.call('GET', KEYS[1])
if cur ~= ARGV[2] .. '|RUNNING|' .. ARGV[3] then
  local f = cur and tonumber(string.match(cur, '^(%d+)|')) or nil
  if f and f >= tonumber(ARGV[2]) then
    return 'ZOMBIE'
  end
end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SET', KEYS[1], ARGV[2] .. '|' .. ARGV[4] .. '|' .. ARGV[3], 'EX', ARGV[5])
return 'OK'
