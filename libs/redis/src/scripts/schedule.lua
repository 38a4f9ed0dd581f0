--[[
  schedule: put a job into its partition's hot set, unless the caller's epoch is stale, a newer
  version of the job was seen (a reordered or replayed event, a cancel), or the job is due after
  the lookahead window (it then stays only in PostgreSQL until the pre-loader brings it in).

  KEYS[1] epoch     STRING  the partition owner's epoch
  KEYS[2] jobs      HASH    job id -> dispatch record (JSON)
  KEYS[3] inflight  ZSET    job id -> time popped (ms), dispatches not yet acknowledged
  KEYS[4] version   STRING  highest version seen of this job (expires after ARGV[6] s)
  KEYS[5] classes   SET     resource classes with queues in this partition
  ARGV[1] epoch of the caller
  ARGV[2] job id
  ARGV[3] due time, ms since the Unix epoch
  ARGV[4] version
  ARGV[5] dispatch record (JSON)
  ARGV[6] TTL of the version key, seconds
  ARGV[7] partition key base; the job's queue is <base>:q:<class>:<tenant>, ready index <base>:ready:<class>
  ARGV[8] resource class
  ARGV[9] tenant
  ARGV[10] lookahead window, ms: a job due later than Redis TIME + this is deferred
  ARGV[11] mode: 'event' (ignore a version already seen) or 'hydrate' (re-add a version seen but
           absent: deferred or trimmed earlier; PostgreSQL still holds it SCHEDULED)
  Returns: 1 added, 0 ignored, 2 deferred; error STALE_EPOCH for a stale owner. The first write
  is a memory-growing one, so under maxmemory Redis refuses the script before it changes anything.
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('STALE_EPOCH')
end
local id = ARGV[2]
local version = tonumber(ARGV[4])
local seen = tonumber(redis.call('GET', KEYS[4]) or '0')
if seen > version then
  return 0
end
if seen == version then
  if ARGV[11] ~= 'hydrate' or redis.call('HEXISTS', KEYS[2], id) == 1 or redis.call('ZSCORE', KEYS[3], id) then
    return 0
  end
end
local queue = ARGV[7] .. ':q:' .. ARGV[8] .. ':' .. ARGV[9]
local ready = ARGV[7] .. ':ready:' .. ARGV[8]
local function refresh_ready()
  local head = redis.call('ZRANGE', queue, 0, 0, 'WITHSCORES')
  if #head == 0 then
    redis.call('ZREM', ready, ARGV[9])
  else
    redis.call('ZADD', ready, head[2], ARGV[9])
  end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if tonumber(ARGV[3]) > now + tonumber(ARGV[10]) then
  redis.call('SET', KEYS[4], ARGV[4], 'EX', ARGV[6])
  -- An older version may still be here (a reschedule moved the job out of the window).
  redis.call('ZREM', queue, id)
  redis.call('HDEL', KEYS[2], id)
  redis.call('ZREM', KEYS[3], id)
  refresh_ready()
  return 2
end
redis.call('HSET', KEYS[2], id, ARGV[5])
redis.call('ZADD', queue, ARGV[3], id)
redis.call('SET', KEYS[4], ARGV[4], 'EX', ARGV[6])
-- A newer version supersedes an older dispatch still in flight: reclaiming that entry would
-- hand out the new record before its own due time.
redis.call('ZREM', KEYS[3], id)
redis.call('SADD', KEYS[5], ARGV[8])
refresh_ready()
return 1
