import LiveControlsRedis

/// The Lua scripts that make ownership safe: each runs atomically in Redis.
enum ClusterScripts {
    /// KEYS: lease, fence, state. ARGV: node, ttl ms. Takes the lease if free and returns the new fencing
    /// token (never below the `fence` the room's state was last written with, so a Redis that lost its
    /// counter cannot hand out an old token again); 0 when another node holds the lease.
    static let acquire = RedisScript("""
        if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
          local t = redis.call('INCR', KEYS[2])
          local floor = tonumber(redis.call('HGET', KEYS[3], 'fence') or '0')
          if t <= floor then t = floor + 1; redis.call('SET', KEYS[2], t) end
          return t
        end
        return 0
        """)

    /// KEYS: lease, fence. ARGV: node, ttl ms, token. Extends the lease while this node holds it with this token.
    static let renew = RedisScript("""
        if redis.call('GET', KEYS[1]) == ARGV[1] and redis.call('GET', KEYS[2]) == ARGV[3] then
          return redis.call('PEXPIRE', KEYS[1], ARGV[2])
        end
        return 0
        """)

    /// KEYS: lease, fence. ARGV: node, fence (empty: any). Gives the lease up if this node holds it — with a fence,
    /// only the lease taken with that fence (a release queued by an ownership that ended must not drop the lease this
    /// node took again since).
    static let release = RedisScript("""
        if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
        if ARGV[2] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[2] then return 0 end
        return redis.call('DEL', KEYS[1])
        """)

    /// Lua: adds the `e` webhook events at `ARGV[i]…` (id, then endpoints and event JSON) to the outbox hash
    /// `KEYS[k]`, each numbered after the ones before (the order they are sent in after a takeover).
    private static func addEvents(at i: String, key k: Int) -> String {
        """
        local e = tonumber(ARGV[\(i)])
        for j = 1, e do
          local at = \(i) + 2 * j - 1
          local seq = redis.call('HINCRBY', KEYS[\(k)], '#', 1)
          redis.call('HSET', KEYS[\(k)], ARGV[at], seq .. '\\n' .. ARGV[at + 1])
        end
        """
    }

    /// KEYS: fence, state, history, webhooks. ARGV: token, reset (1/0), channel, publication ('' for none), history
    /// entry ('' for none), history limit, previous version ('' for a reset), n, n field/value pairs, d, d fields
    /// to delete, k, k control ids written whole (their delta fields `x:<id>:1`, `:2`, … are deleted), e, e webhook
    /// events (id, record). Writes only while `token` is the room's fencing token and the
    /// stored version is the previous one (writes form a chain: one that failed fails every later one), then
    /// publishes. The room's webhook events are stored in the same step: none for a change not written, none lost
    /// for one that was. 1 when written, 0 when fenced out, -1 when the chain is broken.
    static let write = RedisScript("""
        if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
        if ARGV[2] == '1' then
          redis.call('DEL', KEYS[2], KEYS[3])
        elseif redis.call('HGET', KEYS[2], 'version') ~= ARGV[7] then
          return -1
        end
        local n = tonumber(ARGV[8])
        local i = 9
        if n > 0 then redis.call('HSET', KEYS[2], unpack(ARGV, i, i + 2 * n - 1)) end
        i = i + 2 * n
        local d = tonumber(ARGV[i])
        i = i + 1
        if d > 0 then redis.call('HDEL', KEYS[2], unpack(ARGV, i, i + d - 1)) end
        i = i + d
        local k = tonumber(ARGV[i])
        i = i + 1
        for j = 0, k - 1 do
          local s = 1
          while redis.call('HDEL', KEYS[2], 'x:' .. ARGV[i + j] .. ':' .. s) == 1 do s = s + 1 end
        end
        i = i + k
        \(addEvents(at: "i", key: 4))
        if ARGV[5] ~= '' then
          redis.call('RPUSH', KEYS[3], ARGV[5])
          redis.call('LTRIM', KEYS[3], -tonumber(ARGV[6]), -1)
        end
        if ARGV[4] ~= '' then redis.call('PUBLISH', ARGV[3], ARGV[4]) end
        return 1
        """)

    /// KEYS: fence, state. ARGV: token, version, channel, payload. Publishes a reply only while `token` is
    /// current and the room's stored version has reached `version` (what the reply shows was written).
    static let reply = RedisScript("""
        if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
        if tonumber(redis.call('HGET', KEYS[2], 'version') or '-1') < tonumber(ARGV[2]) then return -1 end
        return redis.call('PUBLISH', ARGV[3], ARGV[4])
        """)

    /// KEYS: fence. ARGV: token, channel, payload. Publishes only while `token` is the room's fencing token (a room's
    /// deletion notice, sent after the deletion's `WAIT`: never to the members of a room another node made since).
    static let publishFenced = RedisScript("""
        if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
        return redis.call('PUBLISH', ARGV[2], ARGV[3])
        """)

    /// KEYS: fence, state, history, webhooks, tombstone. ARGV: token, channel, publication, e, e webhook events.
    /// Deletes the room's state and history only while `token` is the room's fencing token, leaves a tombstone for
    /// 10 minutes holding the deleted epoch (a node that missed the notice learns from it that this epoch was deleted,
    /// not lost), stores its last
    /// webhook events (`room.deleted`), and publishes the deletion to every node (unless the publication is '': it
    /// then goes apart, after `WAIT`). The fence stays, so a room made again under the same name never gets a token
    /// used before. 1 when deleted, 0 when fenced out.
    static let delete = RedisScript("""
        if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
        local epoch = redis.call('HGET', KEYS[2], 'epoch') or ''
        redis.call('DEL', KEYS[2], KEYS[3])
        redis.call('SET', KEYS[5], epoch, 'PX', 600000)
        \(addEvents(at: "4", key: 4))
        if ARGV[3] ~= '' then redis.call('PUBLISH', ARGV[2], ARGV[3]) end
        return 1
        """)

    /// KEYS: n state hashes, then their n leases. For each room: template, epoch, version, members (its `m:`
    /// fields), lease holder (false when none), read in one step.
    static let summaries = RedisScript("""
        local n = #KEYS / 2
        local out = {}
        for i = 1, n do
          local f = redis.call('HMGET', KEYS[i], 'template', 'epoch', 'version')
          local members = 0
          for _, field in ipairs(redis.call('HKEYS', KEYS[i])) do
            if string.sub(field, 1, 2) == 'm:' then members = members + 1 end
          end
          out[i] = {f[1], f[2], f[3], members, redis.call('GET', KEYS[n + i])}
        end
        return out
        """)

    /// KEYS: fence, state, webhooks. ARGV: token, clears (1/0), e, e webhook events. Stores webhook events that come
    /// with no change (`room.unloaded`, a gathered `room.changed`), only while `token` is current; `clears` forgets
    /// the room's unannounced changes (field `u`) in the same step. 1 when stored, 0 when fenced out.
    static let recordWebhooks = RedisScript("""
        if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
        if ARGV[2] == '1' then redis.call('HDEL', KEYS[2], 'u') end
        \(addEvents(at: "3", key: 3))
        return 1
        """)

    /// KEYS: webhooks, failed. ARGV: event id, endpoint, failed field ('' when delivered), failed record. One
    /// delivery is done: the endpoint leaves the event's list (the event goes with the last one, the hash with its
    /// last event); given up, it is kept in `failed`. Any node may record it (it is true wherever it happened).
    static let webhookDone = RedisScript("""
        local v = redis.call('HGET', KEYS[1], ARGV[1])
        if v then
          local a = string.find(v, '\\n', 1, true)
          local b = string.find(v, '\\n', a + 1, true)
          local kept = {}
          for endpoint in string.gmatch(string.sub(v, a + 1, b - 1), '[^\\t]+') do
            if endpoint ~= ARGV[2] then table.insert(kept, endpoint) end
          end
          if #kept == 0 then
            redis.call('HDEL', KEYS[1], ARGV[1])
            if redis.call('HLEN', KEYS[1]) <= 1 then redis.call('DEL', KEYS[1]) end
          else
            redis.call('HSET', KEYS[1], ARGV[1], string.sub(v, 1, a) .. table.concat(kept, '\\t') .. string.sub(v, b))
          end
        end
        if ARGV[3] ~= '' then redis.call('HSET', KEYS[2], ARGV[3], ARGV[4]) end
        return 1
        """)

    /// KEYS: webhooks, failed. ARGV: event id, n failed fields, then the event's record (the retried endpoints).
    /// Failed deliveries of one event are pending again: the node retrying them sends them, and a takeover would
    /// too. If the event is still pending for other endpoints, its record keeps its place and gains the retried
    /// ones; otherwise it is numbered after the room's other events. 1 when moved, 0 when none was failed any
    /// more (another request retried them).
    static let retryWebhook = RedisScript("""
        local n = tonumber(ARGV[2])
        local moved = 0
        for i = 1, n do moved = moved + redis.call('HDEL', KEYS[2], ARGV[2 + i]) end
        if moved == 0 then return 0 end
        local record = ARGV[3 + n]
        local v = redis.call('HGET', KEYS[1], ARGV[1])
        if v then
          local a = string.find(v, '\\n', 1, true)
          local b = string.find(v, '\\n', a + 1, true)
          local endpoints = {}
          local seen = {}
          for endpoint in string.gmatch(string.sub(v, a + 1, b - 1), '[^\\t]+') do
            table.insert(endpoints, endpoint); seen[endpoint] = true
          end
          local c = string.find(record, '\\n', 1, true)
          for endpoint in string.gmatch(string.sub(record, 1, c - 1), '[^\\t]+') do
            if not seen[endpoint] then table.insert(endpoints, endpoint) end
          end
          redis.call('HSET', KEYS[1], ARGV[1], string.sub(v, 1, a) .. table.concat(endpoints, '\\t') .. string.sub(v, b))
        else
          local seq = redis.call('HINCRBY', KEYS[1], '#', 1)
          redis.call('HSET', KEYS[1], ARGV[1], seq .. '\\n' .. record)
        end
        return 1
        """)
}
