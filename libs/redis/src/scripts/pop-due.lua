--[[
  pop-due: atomically take the jobs that are due by the Redis server clock (never a client's),
  at most ARGV[2] per call, moving them to the in-flight set until Kafka acknowledges their
  dispatch. In-flight entries older than ARGV[3] ms (their dispatcher died between pop and ack)
  are handed out again, so a crash never loses a job; at worst it is dispatched twice.

  KEYS[1] due       ZSET  job id -> due time (ms)
  KEYS[2] jobs      HASH  job id -> dispatch record
  KEYS[3] inflight  ZSET  job id -> time popped (ms)
  KEYS[4] epoch     STRING  the partition owner's epoch
  ARGV[1] epoch of the caller
  ARGV[2] most jobs to return
  ARGV[3] reclaim in-flight entries older than this many ms
  Returns: { now_ms, id1, record1, id2, record2, ... }; error STALE_EPOCH for a stale owner.
]]
if redis.call('GET', KEYS[4]) ~= ARGV[1] then
  return redis.error_reply('STALE_EPOCH')
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[2])
local out = { now }
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, limit)
local stale = {}
if #ids < limit then
  stale = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now - tonumber(ARGV[3]), 'LIMIT', 0, limit - #ids)
end
for _, list in ipairs({ ids, stale }) do
  for _, id in ipairs(list) do
    local record = redis.call('HGET', KEYS[2], id)
    redis.call('ZREM', KEYS[1], id)
    if record then
      redis.call('ZADD', KEYS[3], now, id)
      out[#out + 1] = id
      out[#out + 1] = record
    else
      redis.call('ZREM', KEYS[3], id)
    end
  end
end
return out
