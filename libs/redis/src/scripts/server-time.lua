--[[
  server-time: the Redis server's clock in milliseconds.

  Every "now" decision in Kairos is made on Redis TIME inside a script, never on a client's
  clock; this script lets a process read that same clock (lateness metrics, skew checks).

  KEYS: none
  ARGV: none
  Returns: integer, milliseconds since the Unix epoch per redis.call('TIME').
]]
local t = redis.call('TIME')
return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
