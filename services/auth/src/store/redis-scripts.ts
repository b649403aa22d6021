/**
 * Lua scripts of the Redis SessionStore. Each runs atomically on the server. Keys are built
 * inside the scripts from `prefix` and `project` (the layout is documented in
 * shared/src/revocation/redis-revocation-checker.ts and redis-session-store.ts), so the store
 * needs a single Redis node or a cluster slot per prefix.
 *
 * A session hash holds: user_id, created_at, expires_at, current, parent, grace, rotated_at,
 * aal (absent on sessions made before it existed: 1), revoked_at (epoch ms, except the `revoked:` marker which holds seconds).
 */

/**
 * Shared helper: revoke one session if live. Returns 1 when it was live. Every revocation also
 * raises the data set's `applied` time (ms) to `now` (unless `appliedKey` is empty: a store
 * without a durable log), so that after a failover to a replica the replay knows from when the
 * durable log must be read again (redis-revocation-sync.ts).
 */
const REVOKE_FN = `
local function revoke(prefix, project, sid, now, retS, appliedKey)
  if appliedKey ~= '' then
    local applied = tonumber(redis.call('GET', appliedKey) or '0')
    if now > applied then redis.call('SET', appliedKey, now, 'EX', retS) end
  end
  local skey = prefix .. 'sess:' .. project .. ':' .. sid
  local s = redis.call('HMGET', skey, 'user_id', 'revoked_at')
  if not s[1] or s[2] then return 0 end
  redis.call('HSET', skey, 'revoked_at', now)
  redis.call('HDEL', skey, 'grace')
  redis.call('SET', prefix .. 'revoked:' .. project .. ':' .. sid, math.floor(now / 1000), 'EX', retS)
  return 1
end
`;

/** ARGV: prefix, project, sid, user_id, hash, now, expires_at, retention_ms, aal */
export const CREATE_SCRIPT = `
local prefix, project, sid, uid, hash = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local now, exp, retMs = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local ttl = exp - now + retMs
local skey = prefix .. 'sess:' .. project .. ':' .. sid
redis.call('HSET', skey, 'user_id', uid, 'created_at', now, 'expires_at', exp, 'current', hash, 'aal', ARGV[9])
redis.call('PEXPIRE', skey, ttl)
redis.call('SET', prefix .. 'rt:' .. project .. ':' .. hash, sid, 'PX', ttl)
local ukey = prefix .. 'user:' .. project .. ':' .. uid
redis.call('SADD', ukey, sid)
if redis.call('PTTL', ukey) < ttl then redis.call('PEXPIRE', ukey, ttl) end
return 1
`;

/**
 * ARGV: prefix, project, presented, next, grace, now, next_expires_at, grace_ms, retention_ms, retention_s, applied_key
 * Returns {outcome, sid, user_id, created_at, expires_at, aal[, grace]}.
 */
export const ROTATE_SCRIPT = `${REVOKE_FN}
local prefix, project, presented, nexth, grace = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local now, nextExp, graceMs = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local retMs, retS, appliedKey = tonumber(ARGV[9]), tonumber(ARGV[10]), ARGV[11]
local sid = redis.call('GET', prefix .. 'rt:' .. project .. ':' .. presented)
if not sid then return {'invalid'} end
local skey = prefix .. 'sess:' .. project .. ':' .. sid
local s = redis.call('HMGET', skey, 'user_id', 'created_at', 'expires_at', 'current', 'parent', 'grace', 'rotated_at', 'revoked_at', 'aal')
if not s[1] or s[8] or tonumber(s[3]) <= now then return {'invalid'} end
local aal = s[9] or '1'
if s[4] == presented then
  local ttl = nextExp - now + retMs
  redis.call('HSET', skey, 'current', nexth, 'parent', presented, 'grace', grace, 'rotated_at', now, 'expires_at', nextExp)
  redis.call('PEXPIRE', skey, ttl)
  redis.call('SET', prefix .. 'rt:' .. project .. ':' .. nexth, sid, 'PX', ttl)
  local ukey = prefix .. 'user:' .. project .. ':' .. s[1]
  if redis.call('PTTL', ukey) < ttl then redis.call('PEXPIRE', ukey, ttl) end
  return {'rotated', sid, s[1], s[2], tostring(nextExp), aal}
end
if s[5] == presented and s[6] and s[7] and (now - tonumber(s[7])) <= graceMs then
  return {'grace', sid, s[1], s[2], s[3], aal, s[6]}
end
revoke(prefix, project, sid, now, retS, appliedKey)
return {'reused', sid, s[1], s[2], s[3], aal}
`;

/** ARGV: prefix, project, sid, now, retention_s, applied_key. Returns 1 when the session was live. */
export const REVOKE_SCRIPT = `${REVOKE_FN}
return revoke(ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6])
`;

/**
 * ARGV: prefix, project, hash, now, retention_s, applied_key. Returns false for an unknown token,
 * else {sid, 0|1 as REVOKE}.
 */
export const REVOKE_BY_HASH_SCRIPT = `${REVOKE_FN}
local sid = redis.call('GET', ARGV[1] .. 'rt:' .. ARGV[2] .. ':' .. ARGV[3])
if not sid then return false end
return {sid, revoke(ARGV[1], ARGV[2], sid, tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6])}
`;

/** ARGV: prefix, project, user_id, now, retention_s, applied_key. Returns the sids that were live. */
export const REVOKE_USER_SCRIPT = `${REVOKE_FN}
local live = {}
for _, sid in ipairs(redis.call('SMEMBERS', ARGV[1] .. 'user:' .. ARGV[2] .. ':' .. ARGV[3])) do
  if revoke(ARGV[1], ARGV[2], sid, tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]) == 1 then live[#live + 1] = sid end
end
return live
`;
