--[[
  ack: these dispatches are settled (claimed and sent, expired, or refused by the claim because
  PostgreSQL had moved past their version): each popped version is retired. Its entries go from
  every structure (record, in-flight, and a queue entry a late re-add may have put back, so no
  entry is left that a later cancel, which finds a job by its record, could not remove), and its
  version key is marked retired, so neither a replayed event nor a stale hydration of that version
  brings it back. A record of a newer version (the job was rescheduled meanwhile) is kept.

  KEYS[1] jobs      HASH    job id -> dispatch record
  KEYS[2] inflight  ZSET    job id -> time popped (ms)
  KEYS[3] epoch     STRING  the partition owner's epoch
  KEYS[3+i] version STRING  job i's version key (includes/version.lua)
  ARGV[1] epoch of the caller
  ARGV[2] TTL of the version keys, seconds (a marker written where the key had expired)
  ARGV[3] partition key base (queues: <base>:q:<class>:<tenant>, ready index: <base>:ready:<class>)
  ARGV[4..] pairs: job id i, version of its dispatched record
  Returns: number of jobs taken out of flight; error STALE_EPOCH for a stale owner.
  Deletions come first and the markers after, each through pcall: under maxmemory the ack still
  settles every job (a marker refused only leaves the claim, which PostgreSQL refuses, to stop a
  stale re-add).
]]
-- @include version.lua

if redis.call('GET', KEYS[3]) ~= ARGV[1] then
  return redis.error_reply('STALE_EPOCH')
end
local n = 0
local retire = {}
for i = 4, #ARGV - 1, 2 do
  local id = ARGV[i]
  local version = tonumber(ARGV[i + 1])
  local record = redis.call('HGET', KEYS[1], id)
  local r = record and cjson.decode(record)
  if not r or r.version <= version then
    n = n + redis.call('ZREM', KEYS[2], id)
    if r then
      local queue = ARGV[3] .. ':q:' .. r.resource_class .. ':' .. r.tenant_id
      local ready = ARGV[3] .. ':ready:' .. r.resource_class
      if redis.call('ZREM', queue, id) == 1 then
        local head = redis.call('ZRANGE', queue, 0, 0, 'WITHSCORES')
        if #head == 0 then
          redis.call('ZREM', ready, r.tenant_id)
        else
          redis.call('ZADD', ready, head[2], r.tenant_id)
        end
      end
      redis.call('HDEL', KEYS[1], id)
    end
  end
  local key = KEYS[4 + (i - 4) / 2]
  if read_version(key) <= version then
    retire[#retire + 1] = { key, version }
  end
end
for _, kv in ipairs(retire) do
  if redis.call('EXISTS', kv[1]) == 1 then
    redis.pcall('SET', kv[1], kv[2] .. '|D', 'KEEPTTL')
  else
    redis.pcall('SET', kv[1], kv[2] .. '|D', 'EX', ARGV[2])
  end
end
return n
