--[[
  cancel: remove a job from a partition's hot set and remember the cancelling version, so an
  older event replayed later cannot bring the job back.

  KEYS[1] due       ZSET  job id -> due time (ms)
  KEYS[2] jobs      HASH  job id -> dispatch record
  KEYS[3] inflight  ZSET  job id -> time popped (ms), dispatches not yet acknowledged by Kafka
  KEYS[4] version   STRING  highest version seen of this job
  KEYS[5] epoch     STRING  the partition owner's epoch
  ARGV[1] epoch of the caller
  ARGV[2] job id
  ARGV[3] version of the cancellation
  ARGV[4] TTL of the version key, seconds
  Returns: 1 removed (or remembered), 0 ignored as stale; error STALE_EPOCH for a stale owner.
]]
if redis.call('GET', KEYS[5]) ~= ARGV[1] then
  return redis.error_reply('STALE_EPOCH')
end
local seen = tonumber(redis.call('GET', KEYS[4]) or '0')
if seen >= tonumber(ARGV[3]) then
  return 0
end
redis.call('SET', KEYS[4], ARGV[3], 'EX', ARGV[4])
redis.call('ZREM', KEYS[1], ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('HDEL', KEYS[2], ARGV[2])
return 1
