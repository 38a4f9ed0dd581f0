--[[
  cancel: remove a job from its partition's hot set and remember the cancelling version, so an
  older event replayed later cannot bring the job back.

  KEYS[1] epoch     STRING  the partition owner's epoch
  KEYS[2] jobs      HASH    job id -> dispatch record (JSON, holds resource_class and tenant_id)
  KEYS[3] inflight  ZSET    job id -> time popped (ms)
  KEYS[4] version   STRING  highest version seen of this job
  ARGV[1] epoch of the caller
  ARGV[2] job id
  ARGV[3] version of the cancellation
  ARGV[4] TTL of the version key, seconds
  ARGV[5] partition key base (queues: <base>:q:<class>:<tenant>, ready index: <base>:ready:<class>)
  Returns: 1 removed (or remembered), 0 ignored as stale; error STALE_EPOCH for a stale owner.
  Removals come first: they free memory, and they make the version write count as a script
  already writing, which Redis does not refuse halfway under maxmemory.
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('STALE_EPOCH')
end
local id = ARGV[2]
if tonumber(redis.call('GET', KEYS[4]) or '0') >= tonumber(ARGV[3]) then
  return 0
end
local record = redis.call('HGET', KEYS[2], id)
if record then
  local r = cjson.decode(record)
  local queue = ARGV[5] .. ':q:' .. r.resource_class .. ':' .. r.tenant_id
  local ready = ARGV[5] .. ':ready:' .. r.resource_class
  redis.call('ZREM', queue, id)
  local head = redis.call('ZRANGE', queue, 0, 0, 'WITHSCORES')
  if #head == 0 then
    redis.call('ZREM', ready, r.tenant_id)
  else
    redis.call('ZADD', ready, head[2], r.tenant_id)
  end
end
redis.call('HDEL', KEYS[2], id)
redis.call('ZREM', KEYS[3], id)
redis.call('SET', KEYS[4], ARGV[3], 'EX', ARGV[4])
return 1
