--[[
  lease-renew: the heartbeat of running attempts of one partition (a worker renews all of its
  running attempts at once, one call per partition). Extends each lease this worker still holds
  at that fence; otherwise the worker is a zombie for it (its lease expired and was reaped, or a
  newer attempt exists). Also reports a cancel (or reschedule) of a job since dispatch, so the
  worker can abort that handler within one heartbeat.

  A missing record (Redis lost its data: a restart, a flush), one of an older fence, or one its
  owner restored as QUEUED (the claim was lost with Redis's data) is not a newer attempt: the
  worker holds the attempt again, from now. A zombie is only ever told so by a record of a higher
  fence, or of its own fence finished, reaped or held by another worker.

  KEYS[1]     leases   ZSET    job id -> lease expiry (ms)
  KEYS[2i]    attempt  STRING  "<fence>|<state>|<worker>" of job i
  KEYS[2i+1]  version  STRING  highest version of job i seen by the delay tier
  ARGV[1] worker id
  ARGV[2] lease length, ms
  ARGV[3] TTL of the attempt keys, seconds
  ARGV[3i+1] job id i
  ARGV[3i+2] fence of attempt i
  ARGV[3i+3] version of dispatched job i
  Returns: { outcome 1, outcome 2, ... } in job order, each 'OK', 'CANCELLED' (lease still
  renewed: the handler is stopping) or 'ZOMBIE' (nothing changed for that attempt).
]]
-- @include version.lua
-- @include attempt.lua

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function renew(attemptKey, versionKey, id, fence, version)
  local mine = fence .. '|RUNNING|' .. ARGV[1]
  if redis.call('GET', attemptKey) ~= mine then
    local f, state = read_attempt(attemptKey)
    if f and (f > tonumber(fence) or (f == tonumber(fence) and state ~= 'QUEUED')) then
      return 'ZOMBIE'
    end
    redis.call('SET', attemptKey, mine, 'EX', ARGV[3])
  end
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), id)
  if read_version(versionKey) > tonumber(version) then
    return 'CANCELLED'
  end
  return 'OK'
end

local out = {}
for i = 1, (#KEYS - 1) / 2 do
  out[i] = renew(KEYS[2 * i], KEYS[2 * i + 1], ARGV[3 * i + 1], ARGV[3 * i + 2], ARGV[3 * i + 3])
end
return out
