--[[
  set-epoch: record a partition owner's epoch, only ever raising it. A late write of an older
  epoch (a slow former owner, a replayed offline command) cannot lower it and revive that owner.

  KEYS[1] epoch  STRING  the partition owner's epoch
  ARGV[1] the new epoch (from PostgreSQL, monotonic per partition)
  Returns: 1 if set, 0 if a higher or equal epoch was already there.
]]
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current >= tonumber(ARGV[1]) then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1])
return 1
