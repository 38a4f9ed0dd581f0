--[[
  lease-reap: the partition owner takes the attempts whose lease expired (their worker died or
  stalled). A reaped attempt can no longer be renewed or released: its worker, if it wakes up,
  finds out it is a zombie. The owner then reports each as a failed attempt (the tracker retries
  it with a higher fence) and forgets it with lease-forget; until then it stays in the lease set,
  due again after ARGV[5] ms, so a crash between the two only reports it twice.

  KEYS[1] epoch    STRING  the partition owner's epoch
  KEYS[2] leases   ZSET    job id -> lease expiry (ms)
  KEYS[3] since    STRING  the epoch the partition's attempts were restored under (restore-attempts)
  ARGV[1] epoch of the caller
  ARGV[2] partition key base (attempt keys are <base>:a:<job id>)
  ARGV[3] most leases reaped per call
  ARGV[4] TTL of the attempt key, seconds
  ARGV[5] report again after this many ms unless forgotten
  Returns: { now_ms, next_ms, job id, fence, worker, ... }: Redis time, the earliest lease expiry
  left (-1: none), so the owner can come back right when it passes, then the reaped attempts;
  error STALE_EPOCH for a stale owner, or when the partition's restore mark is gone (Redis lost
  some keys but not the epoch): the owner then restores the partition, and workers' claims,
  which wait meanwhile, go on.
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('EXISTS', KEYS[3]) == 0 then
  return redis.error_reply('STALE_EPOCH')
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = { now, -1 }
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))) do
  local key = ARGV[2] .. ':a:' .. id
  local cur = redis.call('GET', key)
  local f, state, worker
  if cur then f, state, worker = string.match(cur, '^(%d+)|(%u+)|(.*)$') end
  if state == 'RUNNING' or state == 'REAPED' then
    redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), id)
    if state == 'RUNNING' then redis.call('SET', key, f .. '|REAPED|' .. worker, 'EX', ARGV[4]) end
    out[#out + 1] = id
    out[#out + 1] = f
    out[#out + 1] = worker
  else
    redis.call('ZREM', KEYS[2], id)
  end
end
local head = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if #head > 0 then out[2] = tonumber(head[2]) end
return out
