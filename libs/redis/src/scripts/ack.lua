--[[
  ack: Kafka acknowledged these dispatches; forget them (the job's version key stays, so a
  replayed event of the same version cannot dispatch the job again).

  KEYS[1] jobs      HASH  job id -> dispatch record
  KEYS[2] inflight  ZSET  job id -> time popped (ms)
  KEYS[3] epoch     STRING  the partition owner's epoch
  ARGV[1] epoch of the caller
  ARGV[2..n] pairs: job id, version of the dispatched record
  Returns: number of jobs forgotten; error STALE_EPOCH for a stale owner.
  A record of a newer version (the job was rescheduled meanwhile) is kept.
]]
if redis.call('GET', KEYS[3]) ~= ARGV[1] then
  return redis.error_reply('STALE_EPOCH')
end
local n = 0
for i = 2, #ARGV - 1, 2 do
  local id = ARGV[i]
  local record = redis.call('HGET', KEYS[1], id)
  if record and cjson.decode(record).version <= tonumber(ARGV[i + 1]) then
    n = n + redis.call('ZREM', KEYS[2], id)
    redis.call('HDEL', KEYS[1], id)
  end
end
return n
