import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsRedis

/// The store of one room this node owns, for one ownership (one fencing token).
///
/// Each write runs `ClusterScripts.write`: it changes the room's state hash and history and publishes the
/// patch to every node, all only while the token is current. Writes and replies go through the node's
/// `RedisLink` queue in submission order, so the store counts as synchronous for the room's ordering: a
/// reply submitted after a write reaches Redis after it. Once a write fails nothing more of this
/// ownership is written or published (`failed`, link queue only), and the room is told (`done` error).
final class RedisRoomStore: RoomStore, @unchecked Sendable {
    let room: String
    let fence: Int64
    private let link: RedisLink
    private let keys: ClusterKeys
    private let historyLimit: Int
    /// Link queue only.
    private var failed = false
    /// Room queue only: the node each member's connection is on (set by the owner after creating the runtime).
    var nodeOf: (SessionID) -> String? = { _ in nil }

    init(room: String, fence: Int64, link: RedisLink, keys: ClusterKeys, historyLimit: Int) {
        self.room = room
        self.fence = fence
        self.link = link
        self.keys = keys
        self.historyLimit = historyLimit
    }

    var isSynchronous: Bool { true }

    func loadRooms(historyLimit: Int) throws -> [StoredRoom] { [] }

    /// Called on the room's queue; the Redis work runs on the link queue.
    func write(_ w: StoreWrite, done: @escaping @Sendable ((any Error)?) -> Void) {
        var set: [(String, [UInt8])] = [("version", Array(String(w.version).utf8)), ("fence", Array(String(fence).utf8))]
        var delete: [String] = []
        var history: [UInt8] = []
        var publication: [UInt8] = []
        var reset = false
        switch w.kind {
        case .reset:
            reset = true
            set += [("template", Array(w.template.utf8)), ("epoch", Array(w.epoch.utf8))]
            publication = ClusterEnvelope.publication(epoch: w.epoch, version: w.version, message: [])
        case let .patch(patch):
            let message = ServerMessage.patch(room: w.room, epoch: w.epoch, version: patch.version, ops: patch.ops, cause: patch.cause).encoded()
            history = message
            publication = ClusterEnvelope.publication(epoch: w.epoch, version: patch.version, message: message)
        }
        for control in w.controls { set.append(("c:" + control.id.rawValue, Array((control.kind + "\n" + control.state).utf8))) }
        for (index, member) in w.joined.enumerated() {
            let seq = reset ? index : w.version
            let record: JSONValue = [.int(seq), member.name.map { .string($0) } ?? .null, nodeOf(member.session).map { .string($0) } ?? .null]
            set.append(("m:" + member.session.rawValue, JSONWriter.encode(record)))
        }
        delete = w.left.map { "m:" + $0.rawValue }

        var args: [[UInt8]] = [Array(String(fence).utf8), [reset ? 0x31 : 0x30], Array(keys.patches(room).utf8), publication,
                               history, Array(String(max(1, historyLimit)).utf8), Array(String(set.count).utf8)]
        for (field, value) in set { args.append(Array(field.utf8)); args.append(value) }
        args.append(Array(String(delete.count).utf8))
        for field in delete { args.append(Array(field.utf8)) }
        let scriptKeys = [keys.fence(room), keys.state(room), keys.history(room)]
        let scriptArgs = args

        link.queue.async { [self] in
            guard !failed else { return done(ClusterStoreError.stopped) }
            do throws(RedisError) {
                let reply = try link.run { c throws(RedisError) in try c.eval(ClusterScripts.write, keys: scriptKeys, args: scriptArgs) }
                if reply.integer == 1 { return done(nil) }
                failed = true
                if case let .error(message) = reply { return done(ClusterStoreError.redis(RedisError(.protocolError, message))) }
                done(ClusterStoreError.fencedOut)
            } catch {
                failed = true
                done(ClusterStoreError.redis(error))
            }
        }
    }

    /// Publishes a reply for a session on `node`, after every write submitted before it; dropped once a
    /// write of this ownership failed (the waiting node answers `unavailable` when it times out).
    func reply(_ envelope: [UInt8], to node: String) {
        link.queue.async { [self] in
            guard !failed else { return }
            _ = try? link.publish(keys.inbox(node), envelope)
        }
    }

    /// Stops this ownership's writes and replies (the lease was lost).
    func stop() {
        link.queue.async { self.failed = true }
    }
}
