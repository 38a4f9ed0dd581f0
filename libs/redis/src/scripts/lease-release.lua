--[[
  lease-release: attempts of one partition ended on this worker (those finishing together are
  released in one call per partition). 'DONE' when an attempt's result is durable (a redelivered
  copy of the task is then skipped); 'RELEASED' when it was given up unfinished (shutdown), so the
  redelivered task may be claimed again by the next worker.

  A missing record (Redis lost its data), one of an older fence, or one the owner restored as
  QUEUED (the claim was lost with Redis's data) is not a newer attempt: the end is recorded as if
  this worker still held it. Only a record of a higher fence, or of this
  fence finished, reaped or held by another worker, makes this worker a zombie.

  KEYS[1]    leases   ZSET    job id -> lease expiry (ms)
  KEYS[i+1]  attempt  STRING  "<fence>|<state>|<worker>" of job i
  ARGV[1] worker id
  ARGV[2] TTL of the attempt keys, seconds
  ARGV[3i]   job id i
  ARGV[3i+1] fence of attempt i
  ARGV[3i+2] new state of attempt i: DONE or RELEASED
  Returns: { outcome 1, outcome 2, ... } in job order, each 'OK', or 'ZOMBIE' if this worker no
  longer held that attempt (nothing changed for it).
]]
-- @include attempt.lua

local function release(attemptKey, id, fence, state)
  if redis.call('GET', attemptKey) ~= fence .. '|RUNNING|' .. ARGV[1] then
    local f, state = read_attempt(attemptKey)
    if f and (f > tonumber(fence) or (f == tonumber(fence) and state ~= 'QUEUED')) then
      return 'ZOMBIE'
    end
  end
  redis.call('ZREM', KEYS[1], id)
  redis.call('SET', attemptKey, fence .. '|' .. state .. '|' .. ARGV[1], 'EX', ARGV[2])
  return 'OK'
end

local out = {}
for i = 1, #KEYS - 1 do
  out[i] = release(KEYS[i + 1], ARGV[3 * i], ARGV[3 * i + 1], ARGV[3 * i + 2])
end
return out
