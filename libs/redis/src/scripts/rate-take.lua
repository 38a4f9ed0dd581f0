--[[
  rate-take: take dispatch tokens from per-resource-class token buckets, refilled on the Redis
  server clock (never a client's), so every delay-tier instance draws from the same buckets.

  KEYS[1]    limits  HASH    class -> "ratePerSec burst"; a class without a field is unlimited
  KEYS[i+1]  bucket  STRING  "tokens last_refill_ms" of the i-th class asked for; absent = full.
                             Expires (PX) after twice the time to refill from empty, at least
                             60 s and at most 366 days: by then it would be full anyway.
  ARGV[2i-1] class i
  ARGV[2i]   tokens wanted for class i (integer >= 0)
  Returns: { granted1, ..., granted_k, wait1, ..., wait_k } in ARGV order: granted is all wanted
  for an unlimited class, else min(wanted, floor(tokens)); wait is how many ms until the class's
  bucket holds a whole token again (0: it does now, or the class is unlimited), so a caller held
  back by the limit can sleep until then; error BAD_RATE_LIMIT <class> (nothing taken) for a
  malformed limit.

  Under OOM Redis refuses a script's first memory-growing write but lets later ones through. So
  everything is read and decided first, then the only writes are SETs (memory-growing): either
  every grant is recorded, or the first SET is refused and the script fails having taken nothing.
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- "x y" -> x, y as numbers (nil for a missing key, false from redis.call, or a malformed value).
local function pair(s)
  if not s then
    return nil, nil
  end
  local a, b = string.match(s, '^(%S+) (%S+)$')
  return tonumber(a), tonumber(b)
end

-- Bucket state by key, so a class asked for twice in one call cannot be granted twice.
local buckets = {}
local order = {}
local granted = {}
local classes = #ARGV / 2
local bucket_of = {}
for i = 1, classes do
  local class = ARGV[2 * i - 1]
  local wanted = math.max(0, math.floor(tonumber(ARGV[2 * i]) or 0))
  local key = KEYS[i + 1]
  local b = buckets[key]
  if not b then
    local limit = redis.call('HGET', KEYS[1], class)
    if limit then
      local rate, burst = pair(limit)
      -- rate ~= rate is NaN.
      if not rate or not burst or rate ~= rate or rate <= 0 or rate == math.huge or burst < 1 or burst == math.huge then
        return redis.error_reply('BAD_RATE_LIMIT ' .. class)
      end
      local tokens = burst
      local stored, last = pair(redis.call('GET', key))
      if stored and last then
        tokens = math.min(burst, math.max(0, stored) + math.max(0, now - last) * rate / 1000)
      end
      b = { tokens = tokens, rate = rate, burst = burst, dirty = false }
    else
      b = { unlimited = true }
    end
    buckets[key] = b
    order[#order + 1] = key
  end
  bucket_of[i] = b
  if b.unlimited then
    granted[i] = wanted
  else
    local g = math.min(wanted, math.floor(b.tokens))
    if g > 0 then
      b.tokens = b.tokens - g
      b.dirty = true
    end
    granted[i] = g
  end
end

-- Writes last, all SETs (see above). A bucket nothing was taken from needs no write: refilling
-- later from its older state gives the same tokens.
for _, key in ipairs(order) do
  local b = buckets[key]
  if b.dirty then
    local ttl = math.min(366 * 86400000, math.max(60000, math.ceil(2000 * b.burst / b.rate)))
    redis.call('SET', key, tostring(b.tokens) .. ' ' .. string.format('%d', now), 'PX', string.format('%d', ttl))
  end
end
for i = 1, classes do
  local b = bucket_of[i]
  local wait = 0
  if not b.unlimited and b.tokens < 1 then wait = math.ceil((1 - b.tokens) * 1000 / b.rate) end
  granted[classes + i] = wait
end
return granted
