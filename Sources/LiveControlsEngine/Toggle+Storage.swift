import LiveControlsProtocol

extension Toggle: StorableControl {
    public static let stateKeys: Set<String> = ["on", "confirming"]

    /// `{label, on, confirmHoldMs?, confirming?: {session, to, deadline, until}}`.
    public var storedState: JSONValue {
        var o: JSONObject = ["label": .string(label), "on": .bool(on)]
        o.setIfPresent("confirmHoldMs", confirmHoldMs.map { .int($0) })
        o.setIfPresent("confirming", confirming.map { c in
            ["session": c.session.storedState, "to": .bool(c.to), "deadline": c.deadline.storedState, "until": .int(c.until)]
        })
        return .object(o)
    }

    public init(storedState: JSONValue) throws(StoredStateError) {
        let s = StoredValue(storedState)
        let confirm = try s.optionalInt("confirmHoldMs")
        if let confirm, !(1...Self.maxConfirmHoldMs).contains(confirm) { throw s.error("confirmHoldMs \(confirm) is outside 1…\(Self.maxConfirmHoldMs)") }
        var confirming: Confirming?
        if let c = s["confirming"] {
            guard confirm != nil else { throw c.error("a toggle without confirmHoldMs holds no confirmation") }
            confirming = Confirming(session: try SessionID(stored: try c.required("session")), to: try c.bool("to"),
                                    deadline: try Instant(stored: try c.required("deadline")), until: try c.int("until"))
        }
        self.init(label: try s.string("label"), on: try s.bool("on"), confirmHoldMs: confirm, confirming: confirming)
    }
}
