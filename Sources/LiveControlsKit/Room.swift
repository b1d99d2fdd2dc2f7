import Observation

/// One joined room: its document at ``version``, a model per control, its members.
///
/// Patches are applied in order with version checks; a gap (or another epoch) makes the room ask for a fresh
/// snapshot. Each ``LiveControl`` changes only when a patch touches it, so a view observing one control is not
/// redrawn for changes to others.
@MainActor @Observable
public final class Room {
    public enum Status: Sendable, Equatable {
        /// `join` sent; no snapshot yet.
        case joining
        /// Current: patches are applied as they come.
        case joined
        /// The connection was lost; the room keeps its last state until the reconnect resumes it.
        case reconnecting
        /// Joined again after a reconnect with `since`: the missed patches (or a snapshot) are on their way.
        case resuming
        /// A gap was seen: a fresh snapshot is on its way.
        case resyncing
        /// Not in the room any more: left, the room was deleted, the token expired, or the client gave up.
        case left(LiveControlsError?)
    }

    public let name: String
    public internal(set) var status: Status = .joining
    /// The room's lifetime; versions compare only within one epoch.
    public private(set) var epoch: String?
    /// The version of ``state``.
    public private(set) var version = 0
    /// The session the state was seen as (a room whose members see different states needs it to resume: `since.session`).
    private(set) var seenAs: String?
    /// The whole room document (`controls` and `presence`).
    public private(set) var state: JSONValue = .null
    /// The control ids, in template order.
    public private(set) var controlIDs: [String] = []
    /// The members, in join order (empty in rooms without presence).
    public private(set) var members: [Member] = []
    /// How many of this user's changes ``undo()`` can take back here, and how many undos ``redo()`` can (the server's
    /// `undoable`; 0 in a room that records nothing). Observe them to enable Undo and Redo buttons.
    public internal(set) var canUndo = 0
    public internal(set) var canRedo = 0
    /// The last refusal the server sent about this room without a request of ours (for example `overloaded`).
    public internal(set) var lastError: LiveControlsError.Refusal?

    @ObservationIgnored weak var client: LiveControlsClient?
    @ObservationIgnored var joinName: String?
    @ObservationIgnored var template: String?
    @ObservationIgnored var models: [String: LiveControl] = [:]
    @ObservationIgnored var listeners: [Int: AsyncStream<RoomEvent>.Continuation] = [:]
    @ObservationIgnored var nextListener = 0
    /// Why this session's last hold of a control ended (from `cause.ended`), for a press whose hold ended at once.
    @ObservationIgnored var lastHoldEnd: [String: String] = [:]

    init(name: String, client: LiveControlsClient) {
        self.name = name
        self.client = client
    }

    /// The control with this id (any kind).
    public func control(_ id: String) -> LiveControl? { models[id] }

    /// Every control, in template order.
    public var controls: [LiveControl] { controlIDs.compactMap { models[$0] } }

    /// The members as people: the sessions of one `user` together (in the order of each person's first session), a
    /// session without a user alone.
    public var people: [[Member]] {
        var order: [String] = []
        var byUser: [String: [Member]] = [:]
        for member in members {
            let key = member.user.map { "u:" + $0 } ?? "s:" + member.id
            if byUser[key] == nil { order.append(key) }
            byUser[key, default: []].append(member)
        }
        return order.map { byUser[$0]! }
    }

    /// This client's own member entry.
    public var me: Member? {
        guard let session = client?.session else { return nil }
        return members.first { $0.id == session }
    }

    /// The room's messages as they are applied: snapshots, resumes, patches (with their `cause`) and refusals.
    /// Each call returns a new stream; it ends when the room is left.
    public func events() -> AsyncStream<RoomEvent> {
        let (stream, continuation) = AsyncStream<RoomEvent>.makeStream(bufferingPolicy: .unbounded)
        let key = nextListener
        nextListener += 1
        listeners[key] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { @MainActor in self?.listeners[key] = nil }
        }
        return stream
    }

    func publish(_ kind: RoomEvent.Kind, _ message: JSONObject) {
        guard !listeners.isEmpty else { return }
        let event = RoomEvent(kind: kind, message: message, version: version, state: state)
        for listener in listeners.values { listener.yield(event) }
    }

    /// Not in the room any more: the status says why, and the event streams end.
    func markLeft(_ error: LiveControlsError?) {
        status = .left(error)
        for listener in listeners.values { listener.finish() }
        listeners = [:]
    }

    // MARK: applying messages

    /// Applies a `snapshot`, `resumed` or `patch`; false when the room must resync (a gap, another epoch, a patch
    /// that does not apply).
    func receive(_ message: Incoming) -> Bool {
        switch message.type {
        case "snapshot":
            guard let epoch = message["epoch"]?.stringValue, let version = message["version"]?.intValue,
                  let state = message["state"], state.objectValue != nil else { return false }
            self.epoch = epoch
            self.version = version
            self.state = state
            seenAs = client?.session
            status = .joined
            refresh(controls: nil, presence: true, replacing: true)
            client?.reconcileLeases(in: self)
            publish(.snapshot, message.object)
            return true
        case "resumed":
            guard message["epoch"]?.stringValue == epoch, message["from"]?.intValue == version else { return false }
            seenAs = client?.session
            status = .joined
            publish(.resumed, message.object)
            return true
        case "patch":
            guard message["epoch"]?.stringValue == epoch, message["version"]?.intValue == version + 1 else {
                return status == .resyncing || status == .joining  // a snapshot is on its way anyway
            }
            return apply(message)
        default:
            return true
        }
    }

    private func apply(_ message: Incoming) -> Bool {
        guard let opsJSON = message["ops"]?.arrayValue,
              let ops = try? opsJSON.map({ json throws(PatchError) in try PatchOp(json: json) }),
              let next = try? state.applying(ops) else { return false }
        state = next
        version += 1
        var touched = Set<String>()
        var presence = false
        var all = false
        for op in ops {
            let tokens = op.path.tokens
            switch tokens.first {
            case nil: all = true; presence = true
            case "controls": if tokens.count >= 2 { touched.insert(tokens[1]) } else { all = true }
            case "presence": presence = true
            default: break
            }
        }
        refresh(controls: all ? nil : touched, presence: presence, replacing: false)
        let cause = message["cause"]?.objectValue ?? [:]
        client?.leasesEnded(in: self, cause: cause)
        publish(.patch, message.object)
        return true
    }

    /// Brings the control models (nil: all) and the members in line with ``state``.
    private func refresh(controls touched: Set<String>?, presence: Bool, replacing: Bool) {
        let controls = state["controls"]?.objectValue ?? [:]
        let ids = controls.map(\.key)
        if ids != controlIDs { controlIDs = ids }
        for (id, json) in controls where touched?.contains(id) ?? true {
            if let model = models[id] {
                if !replacing || model.json != json { model.json = json }
            } else {
                models[id] = LiveControl(id: id, json: json, room: self)
            }
        }
        if models.count != ids.count {
            let live = Set(ids)
            models = models.filter { live.contains($0.key) }
        }
        if presence {
            let next = (state["presence"]?.objectValue ?? [:]).map { Member(session: $0.key, json: $0.value) }
            if next != members { members = next }
        }
    }

    // MARK: requests

    /// Sends an intent and returns the room's version after it (its patch, if any, is already applied).
    @discardableResult
    public func send(control: String, intent: String, args: JSONObject = [:]) async throws -> Int {
        try await send(control: control, intent: intent, args: args, cancellable: true)
    }

    func send(control: String, intent: String, args: JSONObject, cancellable: Bool) async throws -> Int {
        guard let client else { throw LiveControlsError.notConnected }
        var message: JSONObject = ["type": "intent", "room": .string(name), "control": .string(control),
                                   "intent": .string(intent)]
        if !args.isEmpty { message["args"] = .object(args) }
        let ack = try await client.request(message, room: name, cancellable: cancellable)
        return ack["version"]?.intValue ?? version
    }

    /// Hands `event` to the room's other members as is (`broadcast`): not state, not stored. Throws the server's refusal
    /// (`rate_limited`, `too_large`, `forbidden`). Others see it as a ``RoomEvent`` of kind `.broadcast`.
    public func broadcast(_ event: JSONValue) async throws {
        guard let client else { throw LiveControlsError.notConnected }
        _ = try await client.request(["type": "broadcast", "room": .string(name), "event": event], room: name)
    }

    /// Takes back this user's last change in the room (its other devices' too): what it changed goes back, what others
    /// changed since stays. Throws the server's refusal: `conflict` when someone changed that part since (its
    /// ``LiveControlsError/Refusal/by`` names them), `nothingToUndo`. Returns the room's version after it.
    @discardableResult
    public func undo() async throws -> Int { try await takeBack("undo") }

    /// Takes back this user's last undo in the room (as ``undo()``).
    @discardableResult
    public func redo() async throws -> Int { try await takeBack("redo") }

    private func takeBack(_ type: String) async throws -> Int {
        guard let client else { throw LiveControlsError.notConnected }
        let ack = try await client.request(["type": .string(type), "room": .string(name)], room: name)
        return ack["version"]?.intValue ?? version
    }

    /// Merges `data` into this session's presence data (`null` removes a field).
    public func setPresence(_ data: JSONObject) async throws {
        guard let client else { throw LiveControlsError.notConnected }
        _ = try await client.request(["type": "presence", "room": .string(name), "data": .object(data)], room: name)
    }

    /// Leaves the room: this session's holds and claims in it end, its patches stop. While the client is not
    /// connected the room is given up at once (the server ended the session when the connection went) and is not
    /// joined again on the reconnect.
    public func leave() async throws {
        guard let client else { return }
        guard client.connectionState == .connected else {
            client.endLeases(in: name, reason: "leave")
            markLeft(nil)
            client.forget(self)
            return
        }
        // Not tied to the caller's task (as `Hold.release`): a cancelled task still leaves.
        let name = self.name
        _ = try await Task { try await client.request(["type": "leave", "room": .string(name)], room: name) }.value
    }
}

/// What a ``Room`` applied, in order: for logs, animations and command-line tools.
public struct RoomEvent: Sendable {
    public enum Kind: Sendable, Equatable {
        /// A `snapshot`: the state replaced.
        case snapshot
        /// A `resumed`: the missed patches follow.
        case resumed
        /// A `patch`, applied; its `cause` says why (``RoomEvent/cause``).
        case patch
        /// An `error` about this room.
        case error(LiveControlsError.Refusal)
        /// Another member's `broadcast` (``RoomEvent/broadcast``): not state; the room's version is unchanged.
        case broadcast
    }

    public var kind: Kind
    /// The message as the server sent it.
    public var message: JSONObject
    /// The room's version and state once the message was applied.
    public var version: Int
    public var state: JSONValue

    /// A patch's `cause` (`kind`, `session`, `control`, `intent`, `ended`…); nil for other messages.
    public var cause: JSONObject? { message["cause"]?.objectValue }

    /// A broadcast's sender (its session, or `server`), name and event; nil for other messages.
    public var broadcast: (from: String, name: String?, event: JSONValue)? {
        guard kind == .broadcast, let from = message["from"]?.stringValue else { return nil }
        return (from, message["name"]?.stringValue, message["event"] ?? .null)
    }
}
