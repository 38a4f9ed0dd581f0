--[[
  schedule: put a job into a partition's hot set, unless its owner epoch is stale or a newer (or
  the same) version of the job was already seen (a redelivered or reordered event, a cancel).

  KEYS[1] due      ZSET  job id -> due time (ms)
  KEYS[2] jobs     HASH  job id -> dispatch record (JSON)
  KEYS[3] version  STRING  highest version seen of this job (expires after ARGV[6] s)
  KEYS[4] epoch    STRING  the partition owner's epoch
  KEYS[5] inflight ZSET  job id -> time popped (ms)
  ARGV[1] epoch of the caller
  ARGV[2] job id
  ARGV[3] due time, ms since the epoch
  ARGV[4] version
  ARGV[5] dispatch record (JSON)
  ARGV[6] TTL of the version key, seconds
  Returns: 1 added, 0 ignored as stale; error STALE_EPOCH if the caller no longer owns the partition.
]]
if redis.call('GET', KEYS[4]) ~= ARGV[1] then
  return redis.error_reply('STALE_EPOCH')
end
local seen = tonumber(redis.call('GET', KEYS[3]) or '0')
if seen >= tonumber(ARGV[4]) then
  return 0
end
redis.call('SET', KEYS[3], ARGV[4], 'EX', ARGV[6])
-- A newer version supersedes an older dispatch still in flight: reclaiming that entry would
-- hand out the new record before its own due time.
redis.call('ZREM', KEYS[5], ARGV[2])
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[5])
return 1
