--[[
  A job's version key: "<v>" once an event or hydration of version v was seen, "<v>|D" once v was
  retired from the hot set by an acknowledged dispatch (claimed and sent, or refused by the claim
  because PostgreSQL had moved on). A retired version never comes back: a hydration that read it
  from PostgreSQL before its dispatch must not re-add it, however late its write lands.
  Returns: the version (0 when the key is absent), and whether it is retired.
]]
local function read_version(key)
  local raw = redis.call('GET', key)
  if not raw then
    return 0, false
  end
  local v, mark = string.match(raw, '^(%d+)(.*)$')
  return tonumber(v), mark == '|D'
end
