--[[
  lease-renew: a running attempt's heartbeat. Extends the lease if this worker still holds this
  fence; otherwise the worker is a zombie (its lease expired and was reaped, or a newer attempt
  exists). Also reports a cancel (or reschedule) of the job since dispatch, so the worker can
  abort the handler within one heartbeat.

  A missing record (Redis lost its data: a restart, a flush) or one of an older fence is not a
  newer attempt: the worker holds the attempt again, from now. A zombie is only ever told so by
  a record of a higher fence, or of its own fence finished, reaped or held by another worker.

  KEYS[1] attempt  STRING  "<fence>|<state>|<worker>"
  KEYS[2] leases   ZSET    job id -> lease expiry (ms)
  KEYS[3] version  STRING  highest version of the job seen by the delay tier
  ARGV[1] job id
  ARGV[2] fence
  ARGV[3] version of the dispatched job
  ARGV[4] worker id
  ARGV[5] lease length, ms
  ARGV[6] TTL of the attempt key, seconds
  Returns: 'OK', 'CANCELLED' (lease still renewed: the handler is stopping) or 'ZOMBIE'.
]]
local fence = tonumber(ARGV[2])
local mine = ARGV[2] .. '|RUNNING|' .. ARGV[4]
local cur = redis.call('GET', KEYS[1])
if cur ~= mine then
  local f = cur and tonumber(string.match(cur, '^(%d+)|')) or nil
  if f and f >= fence then
    return 'ZOMBIE'
  end
  redis.call('SET', KEYS[1], mine, 'EX', ARGV[6])
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), ARGV[1])
if tonumber(redis.call('GET', KEYS[3]) or '0') > tonumber(ARGV[3]) then
  return 'CANCELLED'
end
return 'OK'
