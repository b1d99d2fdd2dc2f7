import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsRedis

/// Cluster mode's webhooks beyond what each room's owner sends: what a room's outbox in Redis still holds when a
/// node takes the room, and outboxes no owner will send because no node owns their room.
extension ClusterDirectory {
    /// How long a node that picked up an orphaned outbox keeps it to itself (`whsend:<room>`).
    static let outboxClaimMilliseconds = 600_000

    /// How often each node looks for orphaned outboxes.
    var outboxSweepMilliseconds: Int { max(1_000, 3 * options.leaseMilliseconds) }

    /// Link queue, as this node takes `room`: the events its outbox in Redis still holds — what the last owner had
    /// not sent, or not yet recorded as sent — to be queued first, before any the room makes here (at least once,
    /// same event ids). Deliveries to endpoints no longer configured stay in Redis, unsent.
    func leftoverWebhooks(_ room: String) throws(RedisError) -> [PendingWebhook] {
        guard let webhooks else { return [] }
        let known = Set(webhooks.endpoints.map(\.url))
        let leftover = try webhookOutbox.outbox(of: room).compactMap { pending -> PendingWebhook? in
            var pending = pending
            pending.endpoints = pending.endpoints.filter(known.contains)
            return pending.endpoints.isEmpty ? nil : pending
        }
        if !leftover.isEmpty {
            logger.info("webhook events the room's last owner had not sent are sent from here", metadata: ["room": "\(room)", "events": "\(leftover.count)"])
        }
        return leftover
    }

    /// Link queue (maintenance, every `outboxSweepMilliseconds`): the outboxes of rooms no node owns — a room whose
    /// owner was killed, or handed it back while deliveries were still failing, and that nobody has used since; a
    /// deleted room whose owner died before sending its last events — are sent from here. A claim
    /// (`whsend:<room>`, `SET NX`) keeps the other nodes from sending the same events at the same time; a room
    /// that gets an owner meanwhile is sent by it too (at least once: a receiver may see an event twice).
    func sweepOrphanedOutboxes() {
        guard let webhooks else { return }
        let now = scheduler.now()
        guard now >= nextOutboxSweep else { return }
        nextOutboxSweep = now.adding(milliseconds: outboxSweepMilliseconds)
        do throws(RedisError) {
            let rooms = try roomNames(withKey: keys.webhooks).sorted()
            guard !rooms.isEmpty else { return }
            let leases = try link.run { c throws(RedisError) in try c.pipeline(rooms.map { [Array("EXISTS".utf8), Array(keys.lease($0).utf8)] }) }
            for (room, lease) in zip(rooms, leases) where lease.integer == 0 {
                let claimed = try link.run { c throws(RedisError) in
                    try c.command(["SET", keys.outboxClaim(room), nodeID, "NX", "PX", String(Self.outboxClaimMilliseconds)])
                }
                guard claimed.text == "OK" else { continue }
                let leftover = try leftoverWebhooks(room)
                if !leftover.isEmpty {
                    logger.notice("webhook events of a room no node owns are sent from here", metadata: ["room": "\(room)", "events": "\(leftover.count)"])
                }
                webhooks.enqueue(leftover)
            }
        } catch {
            logger.warning("the webhook outboxes of rooms no node owns could not be read", metadata: ["error": "\(error.message)"])
        }
    }
}
