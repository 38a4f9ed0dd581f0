--[[
  rate-refund: give back tokens taken by rate-take but not used (the dispatcher popped fewer jobs
  of a class than it was granted), never filling a bucket above its burst.

  KEYS[1]    limits  HASH    class -> "ratePerSec burst"; a class without a field is unlimited
  KEYS[i+1]  bucket  STRING  "tokens last_refill_ms" of the i-th class (as in rate-take.lua)
  ARGV[2i-1] class i
  ARGV[2i]   tokens to give back for class i (integer >= 0)
  Returns: number of buckets changed. Unlimited classes, absent (that is, full) buckets and
  malformed limits are left alone: a refund only ever errs on the side of fewer tokens.

  As in rate-take.lua, everything is decided first and the only writes are SETs: under OOM the
  first one is refused and nothing changes (the tokens are lost, not duplicated), or all succeed.
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

local buckets = {}
local order = {}
for i = 1, #ARGV / 2 do
  local class = ARGV[2 * i - 1]
  local count = math.max(0, math.floor(tonumber(ARGV[2 * i]) or 0))
  local key = KEYS[i + 1]
  local b = buckets[key]
  if not b then
    b = { skip = true }
    local rate, burst = pair(redis.call('HGET', KEYS[1], class))
    -- rate == rate excludes NaN.
    if rate and burst and rate == rate and rate > 0 and rate < math.huge and burst >= 1 and burst < math.huge then
      local stored, last = pair(redis.call('GET', key))
      if stored and last then
        local tokens = math.min(burst, math.max(0, stored) + math.max(0, now - last) * rate / 1000)
        b = { tokens = tokens, rate = rate, burst = burst, dirty = false }
      end
    end
    buckets[key] = b
    order[#order + 1] = key
  end
  if not b.skip and count > 0 and b.tokens < b.burst then
    b.tokens = math.min(b.burst, b.tokens + count)
    b.dirty = true
  end
end

local changed = 0
for _, key in ipairs(order) do
  local b = buckets[key]
  if b.dirty then
    local ttl = math.min(366 * 86400000, math.max(60000, math.ceil(2000 * b.burst / b.rate)))
    redis.call('SET', key, tostring(b.tokens) .. ' ' .. string.format('%d', now), 'PX', string.format('%d', ttl))
    changed = changed + 1
  end
end
return changed
