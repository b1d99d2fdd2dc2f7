import LiveControlsProtocol

/// A claim that ended, and why (`cause.claimsEnded`).
struct ClaimEnd: Sendable, Equatable {
    var control: ControlID
    var claim: Claim
    var reason: ClaimEndReason

    var json: JSONValue {
        ["control": .string(control.rawValue), "target": .string(claim.target), "session": .string(claim.session.rawValue),
         "reason": .string(reason.rawValue)]
    }
}

extension Room {
    /// Claims one session may hold at once.
    public static let maxClaimsPerSession = 16

    /// `session` claims `target` of control `id` (`*`: all of it) for the control's lease, or renews its claim.
    /// Refused with `claimed` while another session holds an overlapping claim, `not_found` for a part the control
    /// does not have, `too_large` past `maxClaimsPerSession`, `rate_limited` past the member's presence rate.
    public mutating func claim(_ session: SessionID, control id: ControlID, target: String, requestID: RequestID?,
                               at now: Instant) throws(IntentError) -> RoomUpdate {
        let control = try claimable(session, id, target, at: now, rated: true)
        let until = now.adding(milliseconds: claimPolicy(id).leaseMs)
        var held = claims[id] ?? []
        if let mine = held.firstIndex(where: { $0.session == session && $0.target == target }) {
            // A renewal: nothing visible changes; only the lease moves.
            let before = wakeDeadline(of: id)
            held[mine].until = until
            claims[id] = held
            let after = wakeDeadline(of: id)
            return RoomUpdate(patch: nil, timers: before == after ? [] : [TimerEffect(control: id, deadline: after)])
        }
        if let other = held.first(where: { $0.session != session && Claim.overlap($0.target, target) }) {
            throw IntentError(.claimed, "\(describe(other, of: id)) is being edited by \(memberName(other.session))")
        }
        if target == Claim.wholeControl, let holder = control.holder, holder != session {
            throw IntentError(.claimed, "\(id) is being held by \(memberName(holder)); claim it when the hold ends")
        }
        if claimPolicy(id).exclusive, let rules = permissions[id], let roles = members[session]?.roles,
           type(of: control).intents.allSatisfy({ rules.allows($0, memberRoles: roles) == false }) {
            // An exclusive claim holds others back: only a member who may act on the control may take one.
            throw IntentError(.forbidden, "\(id) is reserved for \(rules.allRoles.joined(separator: " or ")); you cannot claim it")
        }
        let mine = claims.values.reduce(0) { $0 + $1.filter { $0.session == session }.count }
        guard mine < Self.maxClaimsPerSession else {
            throw IntentError(.tooLarge, "you hold \(Self.maxClaimsPerSession) claims in this room already; unclaim one first")
        }
        var cause: JSONObject = ["kind": "claim", "session": .string(session.rawValue), "control": .string(id.rawValue), "target": .string(target)]
        if let requestID { cause["id"] = requestID.json }
        return commit(cause: cause, touching: [id]) { room, _, _ in
            room.claims[id, default: []].append(Claim(session: session, target: target, until: until))
        }
    }

    /// `session` gives its claim on `target` of control `id` up (reason `release`, or `blur` when its field lost focus);
    /// `not_holder` when it holds none.
    public mutating func unclaim(_ session: SessionID, control id: ControlID, target: String, blur: Bool = false, requestID: RequestID?,
                                 at now: Instant) throws(IntentError) -> RoomUpdate {
        _ = try claimable(session, id, target, at: now, rated: false)  // giving a claim up is never held back
        guard let claim = claims[id]?.first(where: { $0.session == session && $0.target == target }) else {
            throw IntentError(.notHolder, "you hold no claim on \(describe(target, of: id))")
        }
        var cause: JSONObject = ["kind": "unclaim", "session": .string(session.rawValue), "control": .string(id.rawValue), "target": .string(target)]
        if let requestID { cause["id"] = requestID.json }
        return commit(cause: cause, touching: [id]) { room, _, _ in
            room.endClaims(reason: blur ? .blur : .release) { $0 == id && $1 == claim }
        }
    }

    /// The checks `claim` and `unclaim` share: a member, a control, a part it has, the member's rate.
    private mutating func claimable(_ session: SessionID, _ id: ControlID, _ target: String, at now: Instant, rated: Bool) throws(IntentError) -> any Control {
        guard members[session] != nil else { throw IntentError(.notJoined, "join room \(name) first") }
        guard let control = controls[id] else {
            throw IntentError(.unknownControl, "room \(name) has no control \"\(id)\" (it has: \(controlOrder.map(\.rawValue).joined(separator: ", ")))")
        }
        guard target == Claim.wholeControl || control.isClaimTarget(target) else {
            throw IntentError(.notFound, "\(id) has no part \"\(target)\" to claim (claim * for the whole control)")
        }
        guard !rated || members[session]!.presenceRate.take(at: now) else {
            throw IntentError(.rateLimited, "more than \(Int(PresenceLimits.perSecond)) presence updates and claims per second; this one was dropped")
        }
        return control
    }

    /// Refuses an intent by `session` that writes a part someone else holds an exclusive claim on (`claimed`).
    func checkClaims(_ id: ControlID, intent: String, args: JSONObject, by session: SessionID) throws(IntentError) {
        // `release` only ends the sender's own hold: never held back, or a claim taken during a hold would trap it.
        guard let held = claims[id], !held.isEmpty, claimPolicy(id).exclusive, intent != "release" else { return }
        try checkClaims(id, reach: controls[id]!.reach(of: intent, args: IntentArgs(args)), what: intent, by: session)
    }

    /// Refuses (`claimed`) what would write `reach` of control `id` while another session holds an exclusive claim on it.
    func checkClaims(_ id: ControlID, reach: IntentReach, what: String, by session: SessionID) throws(IntentError) {
        guard let held = claims[id], !held.isEmpty, claimPolicy(id).exclusive else { return }
        guard let other = held.first(where: { $0.session != session && reach.conflicts(with: $0.target) }) else { return }
        throw IntentError(.claimed, "\(describe(other, of: id)) is being edited by \(memberName(other.session)); \(what) waits until they are done")
    }

    func claimPolicy(_ id: ControlID) -> ClaimPolicy { claimPolicies[id] ?? ClaimPolicy() }

    /// The earliest instant control `id` needs waking: its own deadline or its earliest claim's lease.
    public func wakeDeadline(of id: ControlID) -> Instant? {
        let own = controls[id]?.wakeDeadline
        guard let earliest = claims[id]?.lazy.map(\.until).filter({ $0 != Claim.restoredLease }).min() else { return own }
        return own.map { min($0, earliest) } ?? earliest
    }

    /// Ends the claims `predicate` picks (control, claim) with `reason`, noting them for the patch (`cause.claimsEnded`).
    mutating func endClaims(reason: ClaimEndReason, where predicate: (ControlID, Claim) -> Bool) {
        guard !claims.isEmpty else { return }
        for id in controlOrder {
            guard let held = claims[id] else { continue }
            let (gone, kept) = (held.filter { predicate(id, $0) }, held.filter { !predicate(id, $0) })
            claimsEnded.append(contentsOf: gone.map { ClaimEnd(control: id, claim: $0, reason: reason) })
            claims[id] = kept.isEmpty ? nil : kept
        }
    }

    /// Claims on parts a change took away (a removed list item) end with reason `removed`.
    mutating func endClaimsOnVanishedParts(of ids: [ControlID]) {
        for id in ids where claims[id] != nil {
            let control = controls[id]!
            endClaims(reason: .removed) { $0 == id && $1.target != Claim.wholeControl && !control.isClaimTarget($1.target) }
        }
    }

    /// `{"<target>": {"session", "exclusive", "leaseMs"}}`, under the control's `claims`, for the claims `held` on
    /// control `id` (`leaseMs`: how often a client renews).
    func claimsJSON(_ id: ControlID, _ held: [Claim]?) -> JSONValue {
        let policy = claimPolicy(id)
        let (exclusive, lease) = (JSONValue.bool(policy.exclusive), JSONValue.int(policy.leaseMs))
        return .object(JSONObject(pairs: (held ?? []).map {
            ($0.target, ["session": .string($0.session.rawValue), "exclusive": exclusive, "leaseMs": lease])
        }))
    }

    /// What each session is editing, in control order then claim order: `[{"control", "target"}]`.
    func editingBySession() -> [SessionID: [JSONValue]] {
        var result: [SessionID: [JSONValue]] = [:]
        guard !claims.isEmpty else { return result }
        for id in controlOrder {
            for claim in claims[id] ?? [] {
                result[claim.session, default: []].append(["control": .string(id.rawValue), "target": .string(claim.target)])
            }
        }
        return result
    }

    private func describe(_ claim: Claim, of id: ControlID) -> String { describe(claim.target, of: id) }

    private func describe(_ target: String, of id: ControlID) -> String {
        target == Claim.wholeControl ? "\(id)" : "\(id) \(target)"
    }

    func memberName(_ session: SessionID) -> String {
        members[session]?.name.map { "\($0) (\(session))" } ?? "\(session)"
    }
}
