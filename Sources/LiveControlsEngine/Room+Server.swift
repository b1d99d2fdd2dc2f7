import LiveControlsProtocol

/// One intent the server itself applies (through its API), not a member of the room.
public struct ServerIntent: Sendable, Equatable {
    public var control: ControlID
    public var intent: String
    public var args: JSONObject

    public init(control: ControlID, intent: String, args: JSONObject = JSONObject()) {
        self.control = control
        self.intent = intent
        self.args = args
    }
}

/// A refused list of server intents: which one (0-based) was refused, and why. Nothing was applied.
public struct ServerIntentError: Error, Equatable, Sendable {
    public var index: Int
    public var error: IntentError
}

extension SessionID {
    /// Who acts for intents the server applies: a hold the API starts shows this session as its holder (it is
    /// never a member, so it has no presence), and only the API can release it (or its lease ends it).
    public static let server = SessionID("server")
}

extension Room {
    /// Applies `intents` in order, all or nothing, as the server: either every one is applied and the room
    /// moves on by one version (one patch, `cause` `{"kind": "server", "intents": [{control, intent}…]}`), or one is
    /// refused and the room is exactly as it was. Each intent sees the effect of those before it (a form's `set`
    /// then its `finish`). An empty list, or one that changes nothing visible, gives no patch.
    public mutating func applyAsServer(_ intents: [ServerIntent], at now: Instant) throws(ServerIntentError) -> RoomUpdate {
        var working = controls
        var touched: [ControlID] = []
        var ended: [(ControlID, HoldEnd)] = []
        var described: [JSONValue] = []
        for (index, intent) in intents.enumerated() {
            guard var control = working[intent.control] else {
                throw ServerIntentError(index: index, error: IntentError(.unknownControl,
                    "room \(name) has no control \"\(intent.control)\" (it has: \(controlOrder.map(\.rawValue).joined(separator: ", ")))"))
            }
            let events: ControlEvents
            do throws(IntentError) {
                events = try control.apply(intent.intent, args: IntentArgs(intent.args), by: .server, at: now, room: RoomView(controls: working, clock: clock))
                try checkSize(replacing: intent.control, with: control, among: working)
            } catch {
                throw ServerIntentError(index: index, error: error)
            }
            working[intent.control] = control
            if !touched.contains(intent.control) { touched.append(intent.control) }
            ended.append(contentsOf: events.ended.map { (intent.control, $0) })
            // Each intent as the cause names it, with what its control adds (a text's `splices`).
            var entry: JSONObject = ["control": .string(intent.control.rawValue), "intent": .string(intent.intent)]
            if let detail = events.detail { for (key, value) in detail { entry[key] = value } }
            described.append(.object(entry))
        }
        let cause: JSONObject = ["kind": "server", "intents": .array(described)]
        let order = controlOrder.filter { touched.contains($0) }
        return commit(cause: cause, touching: order) { room, _, endedOut in
            for id in order { room.controls[id] = working[id] }
            endedOut.append(contentsOf: ended)
        }
    }

    /// Every control back to its state in `template` (the one the room was made from), in one patch
    /// (`cause` `{"kind": "reset"}`); running holds and claims end with reason `reset`. Members stay; the version goes on.
    public mutating func reset(to template: RoomTemplate) -> RoomUpdate {
        var fresh = Dictionary(uniqueKeysWithValues: template.controls.map { ($0.id, $0.control) })
        for id in controlOrder where fresh[id] != nil { fresh[id]!.succeed(controls[id]!) }
        let ids = controlOrder.filter { fresh[$0] != nil }
        let holders = ids.compactMap { id in controls[id]!.holder.map { (id, $0) } }
        return commit(cause: ["kind": "reset"], touching: ids) { room, _, ended in
            room.endClaims(reason: .reset) { _, _ in true }
            for id in ids { room.controls[id] = fresh[id] }
            ended.append(contentsOf: holders.map { ($0.0, HoldEnd(session: $0.1, reason: .reset)) })
        }
    }

    /// A room made with initial values (`applyAsServer` on a new room): the result is where it starts, at
    /// version 0 with no history, as if the template had said so.
    public mutating func startHere() {
        version = 0
        history = ChangeHistory(limit: history.limit)
    }

    /// The members in join order, each with its name, roles, the controls it holds, what it is editing
    /// (`[{"control", "target"}]`) and its presence data.
    public var memberList: [(session: SessionID, member: Member, holding: [ControlID], editing: [JSONValue])] {
        let holdings = holdingsBySession(), editing = editingBySession()
        return memberOrder.map { ($0, members[$0]!, (holdings[$0] ?? []).map(ControlID.init), editing[$0] ?? []) }
    }
}
