--[[
  lease-claim: a worker claims attempts (job, fence) of one partition before running them, and
  holds each by a lease that expires unless renewed. At most one worker holds an attempt; an
  attempt that was superseded (the reaper re-dispatched the job with a higher fence), finished, or
  whose job was cancelled or rescheduled since its dispatch is refused, so the worker discards the
  task. The tasks a worker starts together are claimed in one call per partition.

  KEYS[1]     leases   ZSET    job id -> lease expiry (ms), the partition's running attempts
  KEYS[2i]    attempt  STRING  "<fence>|<state>|<worker>" of job i's latest claimed attempt
                               (state RUNNING, DONE, RELEASED or REAPED); expires after ARGV[3] s
  KEYS[2i+1]  version  STRING  highest version of job i the delay tier has seen (a cancel raises it)
  ARGV[1] worker id
  ARGV[2] lease length, ms
  ARGV[3] TTL of the attempt keys, seconds
  ARGV[3i+1] job id i
  ARGV[3i+2] fence of attempt i
  ARGV[3i+3] version of dispatched job i
  Returns: { outcome 1, outcome 2, ... } in job order, each 'OK' (claimed; the lease runs from
  Redis TIME), 'CANCELLED' (the job moved on since dispatch), 'STALE' (a higher fence exists or
  this one was reaped), 'DONE' (already finished) or 'BUSY' (another worker holds it).

  Under OOM Redis refuses a script's first memory-growing write and lets later ones through, so a
  refused call has claimed nothing: the worker then runs those attempts unleased.
]]
-- @include version.lua

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function claim(attemptKey, versionKey, id, fence, version)
  if read_version(versionKey) > tonumber(version) then
    return 'CANCELLED'
  end
  local cur = redis.call('GET', attemptKey)
  if cur then
    local f, state, worker = string.match(cur, '^(%d+)|(%u+)|(.*)$')
    f = tonumber(f)
    if f > tonumber(fence) then return 'STALE' end
    if f == tonumber(fence) then
      if state == 'DONE' then return 'DONE' end
      if state == 'REAPED' then return 'STALE' end
      if state == 'RUNNING' and worker ~= ARGV[1] then return 'BUSY' end
    end
  end
  redis.call('SET', attemptKey, fence .. '|RUNNING|' .. ARGV[1], 'EX', ARGV[3])
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), id)
  return 'OK'
end

local out = {}
for i = 1, (#KEYS - 1) / 2 do
  out[i] = claim(KEYS[2 * i], KEYS[2 * i + 1], ARGV[3 * i + 1], ARGV[3 * i + 2], ARGV[3 * i + 3])
end
return out
