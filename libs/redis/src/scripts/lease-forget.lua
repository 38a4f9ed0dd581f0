--[[
  lease-forget: reaped attempts were reported; drop them from the lease set. Only an attempt still
  recorded as reaped at that fence is dropped: a newer attempt of the job keeps its lease.

  KEYS[1] leases  ZSET  job id -> lease expiry (ms)
  ARGV[1] partition key base (attempt keys are <base>:a:<job id>)
  ARGV[2..n] pairs: job id, fence
  Returns: number of leases dropped.
]]
local n = 0
for i = 2, #ARGV - 1, 2 do
  local cur = redis.call('GET', ARGV[1] .. ':a:' .. ARGV[i])
  if cur and string.match(cur, '^(%d+)|REAPED|') == ARGV[i + 1] then
    n = n + redis.call('ZREM', KEYS[1], ARGV[i])
  end
end
return n
