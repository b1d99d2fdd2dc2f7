import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsRedis
import Synchronization

/// The store of one room this node owns, for one ownership (one fencing token).
///
/// Each write runs `ClusterScripts.write`: it changes the room's state hash and history and publishes the
/// patch to every node, all only while the token is current and the stored version is the one before (a
/// chain: after a failed write no later one can land). Replies run `ClusterScripts.reply`: published only
/// while the token is current and the version they show is stored. Writes and replies are pipelined through
/// the node's `RedisLink` in submission order, so the store counts as synchronous for the room's ordering: a
/// reply submitted after a write reaches Redis after it. A failed write is reported to the room (`done`).
final class RedisRoomStore: RoomStore, @unchecked Sendable {
    let room: String
    let fence: Int64
    /// This node's id, which each publication names.
    let owner: String
    private let link: RedisLink
    private let keys: ClusterKeys
    private let historyLimit: Int
    /// Set once a write failed: later writes are refused at once.
    private let failed = Mutex(false)
    /// Room queue only: the node each member's connection is on (set by the owner after creating the runtime).
    var nodeOf: (SessionID) -> String? = { _ in nil }

    init(room: String, fence: Int64, owner: String, link: RedisLink, keys: ClusterKeys, historyLimit: Int) {
        self.room = room
        self.fence = fence
        self.owner = owner
        self.link = link
        self.keys = keys
        self.historyLimit = historyLimit
    }

    var isSynchronous: Bool { true }
    /// Controls are stored as what changed since their full state (fields `x:<id>:<seq>` beside `c:<id>`).
    var takesControlDeltas: Bool { true }

    /// Called on the room's queue; `done` runs on the link queue.
    func write(_ w: StoreWrite, done: @escaping @Sendable ((any Error)?) -> Void) {
        guard !failed.withLock({ $0 }) else { return done(ClusterStoreError.stopped) }
        var set: [(String, [UInt8])] = [("version", Array(String(w.version).utf8)), ("fence", Array(String(fence).utf8))]
        var history: [UInt8] = []
        var publication: [UInt8] = []
        var previous: [UInt8] = []
        var reset = false
        switch w.kind {
        case .reset:
            reset = true
            set += [("template", Array(w.template.utf8)), ("epoch", Array(w.epoch.utf8))]
            publication = ClusterEnvelope.publication(epoch: w.epoch, version: w.version, owner: owner, message: [])
        case let .patch(patch):
            if let views = w.views {
                // Members see it differently: every view is published, and the history keeps the whole patch with
                // who receives each op (for an owner that takes the room over).
                history = JSONWriter.encode(["type": "patch", "version": .int(patch.version), "ops": patch.storedOps, "cause": patch.cause])
                publication = ClusterEnvelope.publication(epoch: w.epoch, version: patch.version, owner: owner, views: views)
            } else {
                let message = ServerMessage.patch(room: w.room, epoch: w.epoch, version: patch.version, ops: patch.ops, cause: patch.cause).encoded()
                history = message
                publication = ClusterEnvelope.publication(epoch: w.epoch, version: patch.version, owner: owner, message: message)
            }
            previous = Array(String(patch.version - 1).utf8)
        }
        for control in w.controls { set.append(("c:" + control.id.rawValue, Array((control.kind + "\n" + control.state).utf8))) }
        // A control's changes since its full state (`Room+StoreDeltas.swift`): fields `x:<id>:<seq>`, from 1; a full
        // write of the control drops them (the script deletes `x:<id>:1`, `:2`, … while they exist).
        for delta in w.controlDeltas { set.append(("x:\(delta.id.rawValue):\(delta.seq)", Array(delta.ops.utf8))) }
        let cleared = reset ? [] : w.controls.map(\.id.rawValue)
        if let changes = w.unannouncedChanges { set.append(("u", JSONWriter.encode(changes.json))) }
        for (index, member) in w.joined.enumerated() {
            let seq = reset ? index : w.version
            let record: JSONValue = [.int(seq), member.name.map { .string($0) } ?? .null, nodeOf(member.session).map { .string($0) } ?? .null,
                                     .array(member.roles.map { .string($0) }), member.user.map { .string($0) } ?? .null]
            set.append(("m:" + member.session.rawValue, JSONWriter.encode(record)))
            if !member.data.isEmpty { set.append(("d:" + member.session.rawValue, JSONWriter.encode(.object(member.data)))) }
        }
        var delete = w.left.flatMap { ["m:" + $0.rawValue, "d:" + $0.rawValue] }
        for (session, data) in w.presence {
            if data.isEmpty { delete.append("d:" + session.rawValue) } else { set.append(("d:" + session.rawValue, JSONWriter.encode(.object(data)))) }
        }

        // Waiting for replicas, the patch is published apart, after the write's WAIT: nobody sees a change the
        // replicas may not have (a fenced publish, like a reply, and none once a write failed).
        let publishApart = link.waitReplicas > 0 && !publication.isEmpty
        var args: [[UInt8]] = [Array(String(fence).utf8), [reset ? 0x31 : 0x30], Array(keys.patches(room).utf8), publishApart ? [] : publication,
                               history, Array(String(max(1, historyLimit)).utf8), previous, Array(String(set.count).utf8)]
        for (field, value) in set { args.append(Array(field.utf8)); args.append(value) }
        args.append(Array(String(delete.count).utf8))
        for field in delete { args.append(Array(field.utf8)) }
        args.append(Array(String(cleared.count).utf8))
        for id in cleared { args.append(Array(id.utf8)) }
        args += Self.eventArguments(w.webhooks)

        link.eval(ClusterScripts.write, keys: [keys.fence(room), keys.state(room), keys.history(room), keys.webhooks(room)], args: args,
                  durable: true) { [self] result in
            let error: ClusterStoreError?
            switch result {
            case let .success(reply) where reply.integer == 1: error = nil
            case let .success(.error(message)): error = .redis(RedisError(.protocolError, message))
            case .success(.integer(-1)): error = .stopped
            case .success: error = .fencedOut
            case let .failure(redisError): error = .redis(redisError)
            }
            if error != nil { failed.withLock { $0 = true } }
            done(error)
        }
        if publishApart {
            link.eval(ClusterScripts.reply, keys: [keys.fence(room), keys.state(room)],
                      args: [Array(String(fence).utf8), Array(String(w.version).utf8), Array(keys.patches(room).utf8), publication],
                      skip: { [self] in failed.withLock { $0 } }) { _ in }
        }
    }

    /// A reply for a session on `node` that shows the room at `version`: published after every write submitted
    /// before it, and only if that version was written by this ownership's token.
    func reply(_ envelope: [UInt8], to node: String, showing version: Int) {
        link.eval(ClusterScripts.reply, keys: [keys.fence(room), keys.state(room)],
                  args: [Array(String(fence).utf8), Array(String(version).utf8), Array(keys.inbox(node).utf8), envelope],
                  skip: { [self] in failed.withLock { $0 } }) { _ in }
    }

    /// A broadcast for every node's members of the room but `except`: on the room's channel, after every write submitted
    /// before it, and only while this ownership holds the room.
    func publishBroadcast(_ message: [UInt8], except: SessionID?, epoch: String, showing version: Int) {
        link.eval(ClusterScripts.reply, keys: [keys.fence(room), keys.state(room)],
                  args: [Array(String(fence).utf8), Array(String(version).utf8), Array(keys.patches(room).utf8),
                         ClusterEnvelope.broadcast(owner: owner, except: except, epoch: epoch, version: version, message: message)],
                  skip: { [self] in failed.withLock { $0 } }) { _ in }
    }

    /// An error reply: it shows no state, so it needs no fence (the room may be stopping).
    func replyUnfenced(_ envelope: [UInt8], to node: String) {
        link.publish(keys.inbox(node), envelope)
    }

    /// Deletes the room (after every write submitted before) and tells every node: their members of the room get
    /// `room_deleted` and are no longer in it. Fenced like a write; `done` on the link queue. Waiting for replicas,
    /// the notice is published apart, after the deletion's `WAIT`, only if that succeeded, and fenced (`done` then
    /// follows it): nobody is told of a deletion the replicas may not have (a failover could bring the room back).
    func deleteRoom(named name: String, webhooks: [PendingWebhook], done: @escaping @Sendable ((any Error)?) -> Void) {
        guard !failed.withLock({ $0 }) else { return done(ClusterStoreError.stopped) }
        let message = ServerMessage.error(RoomRuntime.deletedError(room)).encoded()
        let notice = ClusterEnvelope.deletion(owner: owner, message: message)
        let publishApart = link.waitReplicas > 0
        let deleted = Mutex(false)
        link.eval(ClusterScripts.delete, keys: [keys.fence(room), keys.state(room), keys.history(room), keys.webhooks(room), keys.deleted(room)],
                  args: [Array(String(fence).utf8), Array(keys.patches(room).utf8), publishApart ? [] : notice] + Self.eventArguments(webhooks),
                  durable: true) { [self] result in
            let error: ClusterStoreError?
            switch result {
            case let .success(reply) where reply.integer == 1: error = nil
            case let .success(.error(message)): error = .redis(RedisError(.protocolError, message))
            case .success: error = .fencedOut
            case let .failure(redisError): error = .redis(redisError)
            }
            // Nothing more is written for this ownership either way.
            failed.withLock { $0 = true }
            deleted.withLock { $0 = error == nil }
            if !publishApart || error != nil { done(error) }
        }
        guard publishApart else { return }
        link.eval(ClusterScripts.publishFenced, keys: [keys.fence(room)], args: [Array(String(fence).utf8), Array(keys.patches(room).utf8), notice],
                  skip: { !deleted.withLock { $0 } }) { _ in
            // The deletion stands whatever became of its notice (a member not told finds out on its next request).
            if deleted.withLock({ $0 }) { done(nil) }
        }
    }

    /// Stores events that come with no change (`room.unloaded`, a gathered `room.changed`), fenced, in order with the
    /// writes; `clearsUnannounced` forgets the room's unannounced changes in the same step.
    func recordWebhooks(_ webhooks: [PendingWebhook], room: String, clearsUnannounced: Bool, done: @escaping @Sendable ((any Error)?) -> Void) {
        let args = [Array(String(fence).utf8), [clearsUnannounced ? 0x31 : 0x30]] + Self.eventArguments(webhooks)
        link.eval(ClusterScripts.recordWebhooks, keys: [keys.fence(room), keys.state(room), keys.webhooks(room)], args: args,
                  durable: true) { result in
            switch result {
            case let .success(reply) where reply.integer == 1: done(nil)
            case let .success(.error(message)): done(ClusterStoreError.redis(RedisError(.protocolError, message)))
            case .success: done(ClusterStoreError.fencedOut)
            case let .failure(error): done(ClusterStoreError.redis(error))
            }
        }
    }

    /// The webhook events of a script's arguments: their count, then each one's id and record.
    private static func eventArguments(_ webhooks: [PendingWebhook]) -> [[UInt8]] {
        let stored = webhooks.filter { !$0.endpoints.isEmpty }
        var args: [[UInt8]] = [Array(String(stored.count).utf8)]
        for webhook in stored {
            args.append(Array(webhook.event.id.utf8))
            args.append(RedisWebhookStore.record(webhook))
        }
        return args
    }

    /// Refuses every later write (the lease was lost).
    func stop() {
        failed.withLock { $0 = true }
    }
}
