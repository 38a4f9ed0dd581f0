--[[
  restore-attempts: after Redis lost a partition's state, its owner writes back, from PostgreSQL,
  the attempts that were dispatched and not started (QUEUED), then marks the partition restored
  under its new epoch. From then on a task dispatched under an older epoch whose attempt Redis
  does not know is not live (finished, cancelled or superseded before the loss): the claim refuses
  it (GONE), so no finished job runs again, whatever Redis lost. Until the mark is written the
  claim says WAIT. Markers go in chunks; only the last chunk writes the mark. An attempt key that
  exists already (written since the loss) is kept.

  KEYS[1]    epoch    STRING  the partition owner's epoch
  KEYS[2]    since    STRING  the epoch under which the partition's attempts were restored
  KEYS[i+2]  attempt  STRING  "<fence>|<state>|<worker>" of job i
  ARGV[1] epoch of the caller
  ARGV[2] TTL of the attempt keys, seconds
  ARGV[3] '1' when this is the last chunk (then the partition is marked restored)
  ARGV[i+3] fence of job i's dispatched attempt
  Returns: the number of attempt keys written, -1 if the partition was restored already (nothing
  written); error STALE_EPOCH for a stale owner.
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('STALE_EPOCH')
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  return -1
end
local n = 0
for i = 3, #KEYS do
  if redis.call('SET', KEYS[i], ARGV[i + 1] .. '|QUEUED|', 'NX', 'EX', ARGV[2]) then
    n = n + 1
  end
end
if ARGV[3] == '1' then
  redis.call('SET', KEYS[2], ARGV[1])
end
return n
