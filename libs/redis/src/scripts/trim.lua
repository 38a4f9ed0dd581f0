--[[
  trim: drop hot entries due after Redis TIME + window (the window shrank, e.g. under memory
  pressure). They stay SCHEDULED in PostgreSQL and the pre-loader brings them back in time; their
  version keys stay, so only a hydration (which re-reads PostgreSQL) can re-add them.

  KEYS[1] epoch    STRING  the partition owner's epoch
  KEYS[2] jobs     HASH    job id -> dispatch record
  KEYS[3] classes  SET     resource classes with queues in this partition
  ARGV[1] epoch of the caller
  ARGV[2] partition key base
  ARGV[3] window, ms
  ARGV[4] most entries dropped per call (the caller repeats until 0)
  Returns: number of entries dropped; error STALE_EPOCH for a stale owner. Deletions only: it
  works while Redis is at maxmemory.
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('STALE_EPOCH')
end
local t = redis.call('TIME')
local horizon = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[3])
local budget = tonumber(ARGV[4])
local dropped = 0
for _, class in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  local ready = ARGV[2] .. ':ready:' .. class
  for _, tenant in ipairs(redis.call('ZRANGE', ready, 0, -1)) do
    if dropped >= budget then return dropped end
    local queue = ARGV[2] .. ':q:' .. class .. ':' .. tenant
    local ids = redis.call('ZRANGEBYSCORE', queue, '(' .. horizon, '+inf', 'LIMIT', 0, budget - dropped)
    for _, id in ipairs(ids) do
      redis.call('ZREM', queue, id)
      redis.call('HDEL', KEYS[2], id)
    end
    dropped = dropped + #ids
    if redis.call('ZCARD', queue) == 0 then redis.call('ZREM', ready, tenant) end
  end
end
return dropped
