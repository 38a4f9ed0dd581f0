--[[
  lease-claim: a worker claims one attempt (job, fence) before running it, and holds it by a
  lease that expires unless renewed. At most one worker holds an attempt; an attempt that was
  superseded (the reaper re-dispatched the job with a higher fence), finished, or whose job was
  cancelled or rescheduled since its dispatch is refused, so the worker discards the task.

  KEYS[1] attempt  STRING  "<fence>|<state>|<worker>" of the job's latest claimed attempt
                           (state RUNNING, DONE, RELEASED or REAPED); expires after ARGV[6] s
  KEYS[2] leases   ZSET    job id -> lease expiry (ms), the partition's running attempts
  KEYS[3] version  STRING  highest version of the job the delay tier has seen (a cancel raises it)
  ARGV[1] job id
  ARGV[2] fence of the attempt
  ARGV[3] version of the dispatched job
  ARGV[4] worker id
  ARGV[5] lease length, ms
  ARGV[6] TTL of the attempt key, seconds
  Returns: 'OK' (claimed; the lease runs from Redis TIME), 'CANCELLED' (the job moved on since
  dispatch), 'STALE' (a higher fence exists or this one was reaped), 'DONE' (already finished),
  'BUSY' (another worker holds it).
]]
local fence = tonumber(ARGV[2])
if tonumber(redis.call('GET', KEYS[3]) or '0') > tonumber(ARGV[3]) then
  return 'CANCELLED'
end
local cur = redis.call('GET', KEYS[1])
if cur then
  local f, state, worker = string.match(cur, '^(%d+)|(%u+)|(.*)$')
  f = tonumber(f)
  if f > fence then return 'STALE' end
  if f == fence then
    if state == 'DONE' then return 'DONE' end
    if state == 'REAPED' then return 'STALE' end
    if state == 'RUNNING' and worker ~= ARGV[4] then return 'BUSY' end
  end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('SET', KEYS[1], ARGV[2] .. '|RUNNING|' .. ARGV[4], 'EX', ARGV[6])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), ARGV[1])
return 'OK'
