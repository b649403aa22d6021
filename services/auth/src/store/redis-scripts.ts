/**
 * Lua scripts of the Redis session cache (redis-session-store.ts). Each runs atomically on the
 * server. Keys are built inside the scripts from `prefix` and `project` (the layout is documented
 * in shared/src/revocation/redis-revocation-checker.ts and redis-session-store.ts), so the store
 * needs a single Redis node or a cluster slot per prefix.
 *
 * A session hash holds what readers need: user_id, created_at, expires_at, aal, and revoked_at
 * (epoch ms, except the `revoked:` marker which holds seconds). Refresh tokens are not cached:
 * rotation is decided by the durable store (session-families.ts).
 */

/**
 * Shared helper: raises the data set's `applied` time (ms) to `at` (unless `appliedKey` is empty),
 * so that after a failover to a replica the rebuild knows from when the durable store must be
 * read again (redis-revocation-sync.ts). Replication keeps order: a replica that has a write of
 * time T has every write made before it.
 */
const APPLIED_FN = `
local function raiseApplied(appliedKey, at, retS)
  if appliedKey == '' then return end
  local applied = tonumber(redis.call('GET', appliedKey) or '0')
  if at > applied then redis.call('SET', appliedKey, at, 'EX', retS) end
end
`;

/**
 * Shared helper: revoke one session. The `revoked:` marker is written whether or not the hash is
 * here (keeping the earliest time), so a rebuild that read the session as live just before the
 * revocation cannot put it back (CACHE refuses a session with a marker). Returns 1 when the
 * cached session was live.
 */
const REVOKE_FN = `${APPLIED_FN}
local function revoke(prefix, project, sid, now, retS, appliedKey)
  raiseApplied(appliedKey, now, retS)
  redis.call('SET', prefix .. 'revoked:' .. project .. ':' .. sid, math.floor(now / 1000), 'EX', retS, 'NX')
  local skey = prefix .. 'sess:' .. project .. ':' .. sid
  local s = redis.call('HMGET', skey, 'user_id', 'revoked_at')
  if not s[1] or s[2] then return 0 end
  redis.call('HSET', skey, 'revoked_at', now)
  return 1
end
`;

/**
 * Puts a live session (as the durable store has it) into the cache: after a sign-in, a rotation,
 * or a rebuild. Never brings a revoked one back (a marker or `revoked_at` wins) and never moves
 * `expires_at` back (an older rotation landing after a newer one changes nothing).
 * ARGV: prefix, project, sid, user_id, created_at, expires_at, aal, now, retention_ms, retention_s,
 * applied_key, updated_at. Returns 1 when the session is cached live.
 */
export const CACHE_SCRIPT = `${APPLIED_FN}
local prefix, project, sid, uid = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local createdAt, exp, aal, now = ARGV[5], tonumber(ARGV[6]), ARGV[7], tonumber(ARGV[8])
local retMs, retS, appliedKey, updated = tonumber(ARGV[9]), tonumber(ARGV[10]), ARGV[11], tonumber(ARGV[12])
raiseApplied(appliedKey, updated, retS)
if redis.call('EXISTS', prefix .. 'revoked:' .. project .. ':' .. sid) == 1 then return 0 end
local skey = prefix .. 'sess:' .. project .. ':' .. sid
local cur = redis.call('HMGET', skey, 'revoked_at', 'expires_at')
if cur[1] then return 0 end
if cur[2] and tonumber(cur[2]) > exp then exp = tonumber(cur[2]) end
local ttl = exp - now + retMs
if ttl <= 0 then return 0 end
redis.call('HSET', skey, 'user_id', uid, 'created_at', createdAt, 'expires_at', exp, 'aal', aal)
redis.call('PEXPIRE', skey, ttl)
local ukey = prefix .. 'user:' .. project .. ':' .. uid
redis.call('SADD', ukey, sid)
if redis.call('PTTL', ukey) < ttl then redis.call('PEXPIRE', ukey, ttl) end
return 1
`;

/** ARGV: prefix, project, sid, now, retention_s, applied_key. Returns 1 when the cached session was live. */
export const REVOKE_SCRIPT = `${REVOKE_FN}
return revoke(ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6])
`;

/** ARGV: prefix, project, user_id, now, retention_s, applied_key. Returns the cached sids that were live. */
export const REVOKE_USER_SCRIPT = `${REVOKE_FN}
local live = {}
for _, sid in ipairs(redis.call('SMEMBERS', ARGV[1] .. 'user:' .. ARGV[2] .. ':' .. ARGV[3])) do
  if revoke(ARGV[1], ARGV[2], sid, tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]) == 1 then live[#live + 1] = sid end
end
return live
`;
