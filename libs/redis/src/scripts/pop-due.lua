--[[
  pop-due: atomically take the jobs due by the Redis server clock (never a client's) and move
  them to the in-flight set until their dispatch is acknowledged.

  Release is per resource class, in the order given (the caller puts `critical` first), each
  class up to its own limit (batch size or rate-limit tokens), so no class waits behind another.
  Within a class, tenants are served round-robin in order of their oldest due job, at most
  ARGV[5] * weight jobs per tenant per pass, so one tenant's backlog delays another tenant's job
  by a bounded number of passes rather than by the size of the backlog.
  In-flight entries older than ARGV[4] ms (their dispatcher died between pop and ack) are handed
  out again, so a crash never loses a job; the PostgreSQL claim then keeps it from going out twice.

  KEYS[1] epoch     STRING  the partition owner's epoch
  KEYS[2] jobs      HASH    job id -> dispatch record
  KEYS[3] inflight  ZSET    job id -> time popped (ms)
  ARGV[1] epoch of the caller
  ARGV[2] partition key base (queues <base>:q:<class>:<tenant>, ready index <base>:ready:<class>
          scored by the tenant's oldest due time)
  ARGV[3] lead, ms: release jobs due up to now + lead (pre-dispatch; 0 = on time)
  ARGV[4] reclaim in-flight entries older than this many ms
  ARGV[5] quantum: jobs per tenant per pass at weight 1
  ARGV[6] most tenants considered per class per call
  ARGV[7] most reclaimed entries per call
  ARGV[8] n = number of classes, then n pairs: class, limit
  then m = number of weighted tenants, then m pairs: tenant, weight (others weigh 1)
  Returns: { now_ms, reclaim_ms, n, next_1, ..., next_n, id1, record1, id2, record2, ... }:
  next_c is the due time (ms) of class c's earliest job still waiting after this pop (-1: none),
  reclaim_ms the time the oldest in-flight entry becomes reclaimable (-1: none), so the caller
  can sleep until the partition's next deadline without another round trip; error STALE_EPOCH
  for a stale owner.
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('STALE_EPOCH')
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local horizon = now + tonumber(ARGV[3])
local quantum = tonumber(ARGV[5])
local max_tenants = tonumber(ARGV[6])
local jobs = {}

local n = tonumber(ARGV[8])
local weights = {}
local wbase = 9 + 2 * n
for i = 1, tonumber(ARGV[wbase]) do
  weights[ARGV[wbase + 2 * i - 1]] = tonumber(ARGV[wbase + 2 * i])
end

local function take(id)
  local record = redis.call('HGET', KEYS[2], id)
  if record then
    -- The memory-growing write first: under maxmemory the script fails before changing anything.
    redis.call('ZADD', KEYS[3], now, id)
    jobs[#jobs + 1] = id
    jobs[#jobs + 1] = record
    return true
  end
  return false
end

for c = 0, n - 1 do
  local class = ARGV[9 + 2 * c]
  local remaining = tonumber(ARGV[10 + 2 * c])
  local ready = ARGV[2] .. ':ready:' .. class
  local tenants = {}
  if remaining > 0 then
    tenants = redis.call('ZRANGEBYSCORE', ready, '-inf', horizon, 'LIMIT', 0, max_tenants)
  end
  while remaining > 0 and #tenants > 0 do
    local more = {}
    for _, tenant in ipairs(tenants) do
      if remaining <= 0 then break end
      local queue = ARGV[2] .. ':q:' .. class .. ':' .. tenant
      -- At least one job per pass, whole numbers only: a zero or fractional share would never
      -- finish the loop (and a negative LIMIT means "all").
      local share = math.min(remaining, math.max(1, math.floor(quantum * (weights[tenant] or 1))))
      local ids = redis.call('ZRANGEBYSCORE', queue, '-inf', horizon, 'LIMIT', 0, share)
      for _, id in ipairs(ids) do
        if take(id) then remaining = remaining - 1 end
        redis.call('ZREM', queue, id)
      end
      local head = redis.call('ZRANGE', queue, 0, 0, 'WITHSCORES')
      if #head == 0 then
        redis.call('ZREM', ready, tenant)
      else
        redis.call('ZADD', ready, head[2], tenant)
        if #ids == share and tonumber(head[2]) <= horizon then more[#more + 1] = tenant end
      end
    end
    tenants = more
  end
end

local stale = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now - tonumber(ARGV[4]), 'LIMIT', 0, tonumber(ARGV[7]))
for _, id in ipairs(stale) do
  if not take(id) then redis.call('ZREM', KEYS[3], id) end
end

-- The partition's next deadlines, read after the pop: each class's earliest waiting job (its
-- ready index is scored by each tenant's oldest due time) and the oldest in-flight entry.
local function head_score(key)
  local head = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if #head == 0 then return -1 end
  return tonumber(head[2])
end
local oldest = head_score(KEYS[3])
local out = { now, oldest < 0 and -1 or oldest + tonumber(ARGV[4]), n }
for c = 0, n - 1 do
  out[#out + 1] = head_score(ARGV[2] .. ':ready:' .. ARGV[9 + 2 * c])
end
for _, v in ipairs(jobs) do out[#out + 1] = v end
return out
