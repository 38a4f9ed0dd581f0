--[[
  lease-claim: a worker claims attempts (job, fence) of one partition before running them, and
  holds each by a lease that expires unless renewed. At most one worker holds an attempt; an
  attempt that was superseded (the reaper re-dispatched the job with a higher fence), finished, or
  whose job was cancelled or rescheduled since its dispatch is refused, so the worker discards the
  task. The tasks a worker starts together are claimed in one call per partition.

  What Redis lost does not make an attempt claimable again: an attempt it holds no key of is
  claimed only if it was dispatched under the epoch the partition was restored under, or a later
  one (restore-attempts wrote back every attempt that was still waiting then). Before the owner
  restored the partition, such a claim waits.

  KEYS[1]     leases   ZSET    job id -> lease expiry (ms), the partition's running attempts
  KEYS[2]     since    STRING  epoch the partition's attempts were restored under (restore-attempts)
  KEYS[2i+1]  attempt  STRING  "<fence>|<state>|<worker>" of job i's latest attempt (attempt.lua);
                               expires after ARGV[3] s
  KEYS[2i+2]  version  STRING  highest version of job i the delay tier has seen (a cancel raises it)
  ARGV[1] worker id
  ARGV[2] lease length, ms
  ARGV[3] TTL of the attempt keys, seconds
  ARGV[4i]   job id i
  ARGV[4i+1] fence of attempt i
  ARGV[4i+2] version of dispatched job i
  ARGV[4i+3] epoch attempt i was dispatched under
  Returns: { outcome 1, outcome 2, ... } in job order, each 'OK' (claimed; the lease runs from
  Redis TIME), 'CANCELLED' (the job moved on since dispatch), 'STALE' (a higher fence exists or
  this one was reaped), 'DONE' (already finished), 'BUSY' (another worker holds it), 'GONE' (not
  live when Redis was restored) or 'WAIT' (Redis lost the partition's state; not restored yet).

  Under OOM Redis refuses a script's first memory-growing write and lets later ones through, so a
  refused call has claimed nothing: the worker then runs those attempts unleased.
]]
-- @include version.lua
-- @include attempt.lua

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local since = redis.call('GET', KEYS[2])

local function claim(attemptKey, versionKey, id, fence, version, epoch)
  if read_version(versionKey) > tonumber(version) then
    return 'CANCELLED'
  end
  local f, state, worker = read_attempt(attemptKey)
  if not f then
    if not since then return 'WAIT' end
    if tonumber(epoch) < tonumber(since) then return 'GONE' end
  elseif f > tonumber(fence) then
    return 'STALE'
  elseif f == tonumber(fence) then
    if state == 'DONE' then return 'DONE' end
    if state == 'REAPED' then return 'STALE' end
    if state == 'RUNNING' and worker ~= ARGV[1] then return 'BUSY' end
  end
  redis.call('SET', attemptKey, fence .. '|RUNNING|' .. ARGV[1], 'EX', ARGV[3])
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), id)
  return 'OK'
end

local out = {}
for i = 1, (#KEYS - 2) / 2 do
  out[i] = claim(KEYS[2 * i + 1], KEYS[2 * i + 2], ARGV[4 * i], ARGV[4 * i + 1], ARGV[4 * i + 2], ARGV[4 * i + 3])
end
return out
