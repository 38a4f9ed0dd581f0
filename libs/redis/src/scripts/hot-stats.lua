--[[
  hot-stats: size of a partition's hot set and its oldest due time (metrics, admin status).
  Read-only.

  KEYS[1] jobs      HASH  job id -> dispatch record (waiting and in flight)
  KEYS[2] inflight  ZSET  job id -> time popped (ms)
  KEYS[3] classes   SET   resource classes with queues in this partition
  ARGV[1] partition key base
  Returns: { jobs, inflight, oldest due ms or -1 }
]]
local oldest = -1
for _, class in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  local head = redis.call('ZRANGE', ARGV[1] .. ':ready:' .. class, 0, 0, 'WITHSCORES')
  if #head > 0 and (oldest < 0 or tonumber(head[2]) < oldest) then oldest = tonumber(head[2]) end
end
return { redis.call('HLEN', KEYS[1]), redis.call('ZCARD', KEYS[2]), oldest }
