--[[
  ack: Kafka acknowledged these dispatches; forget them (the job's version key stays, so a
  replayed event of the same version cannot dispatch the job again).

  KEYS[1] jobs      HASH  job id -> dispatch record
  KEYS[2] inflight  ZSET  job id -> time popped (ms)
  KEYS[3] epoch     STRING  the partition owner's epoch
  ARGV[1] epoch of the caller
  ARGV[2..n] job ids
  Returns: number of jobs forgotten; error STALE_EPOCH for a stale owner.
]]
if redis.call('GET', KEYS[3]) ~= ARGV[1] then
  return redis.error_reply('STALE_EPOCH')
end
local n = 0
for i = 2, #ARGV do
  n = n + redis.call('ZREM', KEYS[2], ARGV[i])
  redis.call('HDEL', KEYS[1], ARGV[i])
end
return n
