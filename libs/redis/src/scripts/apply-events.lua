--[[
  apply-events: job events of one partition (one, or a consumer batch's) in one call, unless the
  caller's epoch is stale. A schedule puts a job into the hot set; a cancel removes it and
  remembers the cancelling version, so an older event replayed later cannot bring it back.
  Versions make the order of events irrelevant, so schedules go first: their first write is a
  memory-growing one, which Redis refuses under maxmemory before the script changed anything;
  cancels, which free memory and must pass, come after.

  KEYS[1] epoch     STRING  the partition owner's epoch
  KEYS[2] jobs      HASH    job id -> dispatch record (JSON)
  KEYS[3] inflight  ZSET    job id -> time popped (ms)
  KEYS[4] classes   SET     resource classes with queues in this partition
  KEYS[4+i] version STRING  highest version seen of event i's job, marked once retired (see
                            includes/version.lua)
  ARGV[1] epoch of the caller
  ARGV[2] TTL of the version keys, seconds
  ARGV[3] partition key base (queues: <base>:q:<class>:<tenant>, ready index: <base>:ready:<class>)
  ARGV[4] lookahead window, ms: a job due later than Redis TIME + this is deferred
  ARGV[5] mode of the schedules: 'event' ignores a version already seen; 'hydrate' re-adds a version
          seen but not held (deferred or trimmed earlier, or some of its entries lost; PostgreSQL
          still holds it SCHEDULED), never one retired by an acknowledged dispatch
  then 7 per event i, from ARGV[6 + 7*(i-1)]: kind ('S' schedule, 'C' cancel), job id, version,
  due time (ms), dispatch record (JSON), resource class, tenant (the last four empty for a cancel)
  Returns: one integer per event, in order: schedule 1 added, 0 ignored, 2 deferred; cancel
  1 removed, 0 ignored; error STALE_EPOCH for a stale owner (nothing applied).
]]
-- @include version.lua

-- Redis TIME in ms: the clock every due decision uses.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The tenant's place in its class's ready index: its queue's earliest due time, or none.
local function refresh_ready(queue, ready, tenant)
  local head = redis.call('ZRANGE', queue, 0, 0, 'WITHSCORES')
  if #head == 0 then
    redis.call('ZREM', ready, tenant)
  else
    redis.call('ZADD', ready, head[2], tenant)
  end
end

-- Whether the job will be dispatched from here: in flight, or waiting with its record, its place
-- in its tenant's queue and its tenant in the class's ready index (a partial loss may take any).
local function held(p, e, queue, ready)
  if redis.call('ZSCORE', p.inflight, e.id) then
    return true
  end
  return redis.call('HEXISTS', p.jobs, e.id) == 1 and redis.call('ZSCORE', queue, e.id) ~= false
    and redis.call('ZSCORE', ready, e.tenant) ~= false
end

--[[
  Puts a job into the hot set, unless a newer version was seen (a reordered or replayed event, a
  cancel), or it is due after now + window (then it stays only in PostgreSQL until the pre-loader
  brings it in). p: jobs, inflight, classes, base, ttl, now, window (the partition's); e: version_key,
  id, due, version, record, class, tenant, mode ('event' ignores a version already seen; 'hydrate'
  re-adds a version seen but absent: deferred or trimmed earlier, never a retired one: that read
  of PostgreSQL predates the dispatch that retired it). Returns 1 added, 0 ignored, 2 deferred.
  Its first write is a memory-growing one, so under maxmemory Redis refuses the script before
  anything changed.
]]
local function schedule_job(p, e)
  local seen, retired = read_version(e.version_key)
  local version = tonumber(e.version)
  if seen > version then
    return 0
  end
  local queue = p.base .. ':q:' .. e.class .. ':' .. e.tenant
  local ready = p.base .. ':ready:' .. e.class
  if seen == version then
    if retired or e.mode ~= 'hydrate' or held(p, e, queue, ready) then
      return 0
    end
  end
  if tonumber(e.due) > p.now + p.window then
    redis.call('SET', e.version_key, e.version, 'EX', p.ttl)
    -- An older version may still be here (a reschedule moved the job out of the window).
    redis.call('ZREM', queue, e.id)
    redis.call('HDEL', p.jobs, e.id)
    redis.call('ZREM', p.inflight, e.id)
    refresh_ready(queue, ready, e.tenant)
    return 2
  end
  redis.call('HSET', p.jobs, e.id, e.record)
  redis.call('ZADD', queue, e.due, e.id)
  redis.call('SET', e.version_key, e.version, 'EX', p.ttl)
  -- A newer version supersedes an older dispatch still in flight: reclaiming that entry would
  -- hand out the new record before its own due time.
  redis.call('ZREM', p.inflight, e.id)
  redis.call('SADD', p.classes, e.class)
  refresh_ready(queue, ready, e.tenant)
  return 1
end

--[[
  Removes a job from the hot set and remembers the cancelling version, so an older event replayed
  later cannot bring the job back. p: jobs, inflight, base, ttl; e: version_key, id, version.
  Returns 1 removed (or remembered), 0 ignored as stale. Removals come first: they free memory,
  and they make the version write count as a script already writing, which Redis does not refuse
  halfway under maxmemory.
]]
local function cancel_job(p, e)
  if read_version(e.version_key) >= tonumber(e.version) then
    return 0
  end
  local record = redis.call('HGET', p.jobs, e.id)
  if record then
    local r = cjson.decode(record)
    local queue = p.base .. ':q:' .. r.resource_class .. ':' .. r.tenant_id
    redis.call('ZREM', queue, e.id)
    refresh_ready(queue, p.base .. ':ready:' .. r.resource_class, r.tenant_id)
  end
  redis.call('HDEL', p.jobs, e.id)
  redis.call('ZREM', p.inflight, e.id)
  redis.call('SET', e.version_key, e.version, 'EX', p.ttl)
  return 1
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('STALE_EPOCH')
end
local p = { jobs = KEYS[2], inflight = KEYS[3], classes = KEYS[4], base = ARGV[3], ttl = ARGV[2],
            now = now_ms(), window = tonumber(ARGV[4]) }
local n = #KEYS - 4
local out = {}
for pass = 1, 2 do
  for i = 1, n do
    local a = 6 + 7 * (i - 1)
    local kind = ARGV[a]
    if pass == 1 and kind == 'S' then
      out[i] = schedule_job(p, { version_key = KEYS[4 + i], id = ARGV[a + 1], version = ARGV[a + 2],
                                 due = ARGV[a + 3], record = ARGV[a + 4], class = ARGV[a + 5],
                                 tenant = ARGV[a + 6], mode = ARGV[5] })
    elseif pass == 2 and kind == 'C' then
      out[i] = cancel_job(p, { version_key = KEYS[4 + i], id = ARGV[a + 1], version = ARGV[a + 2] })
    end
  end
end
return out
