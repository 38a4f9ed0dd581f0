--[[
  A job's attempt key: "<fence>|<state>|<worker>" of its latest attempt Redis knows of. State
  RUNNING (claimed, leased), DONE (its result is durable), RELEASED (given up unfinished), REAPED
  (its lease expired and the owner took it), or QUEUED: written by restore-attempts after Redis lost
  the partition's state, for an attempt PostgreSQL holds as dispatched and not started (no worker).
  Returns: fence, state, worker of the attempt, or nil when the key is absent.
]]
local function read_attempt(key)
  local cur = redis.call('GET', key)
  if not cur then
    return nil
  end
  local f, state, worker = string.match(cur, '^(%d+)|(%u+)|(.*)$')
  return tonumber(f), state, worker
end
