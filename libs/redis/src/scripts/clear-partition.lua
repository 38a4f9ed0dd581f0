--[[
  clear-partition: drop a partition's whole hot set (not its epoch), before it is rebuilt from
  PostgreSQL (leaving PostgreSQL-only mode: entries left from before may be stale). Deletions only.

  KEYS[1] epoch     STRING  the partition owner's epoch
  KEYS[2] jobs      HASH
  KEYS[3] inflight  ZSET
  KEYS[4] classes   SET
  ARGV[1] epoch of the caller
  ARGV[2] partition key base
  Returns: number of jobs dropped; error STALE_EPOCH for a stale owner.
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('STALE_EPOCH')
end
local n = redis.call('HLEN', KEYS[2])
for _, class in ipairs(redis.call('SMEMBERS', KEYS[4])) do
  local ready = ARGV[2] .. ':ready:' .. class
  for _, tenant in ipairs(redis.call('ZRANGE', ready, 0, -1)) do
    redis.call('DEL', ARGV[2] .. ':q:' .. class .. ':' .. tenant)
  end
  redis.call('DEL', ready)
end
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
return n
