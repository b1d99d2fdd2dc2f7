import LiveControlsProtocol

/// A hold this client started, by room and control.
struct HoldKey: Hashable {
    let room: String
    let control: String
}

/// A claim this client holds, by room, control and target.
struct ClaimKey: Hashable {
    let room: String
    let control: String
    let target: String
}

/// The client's record of a hold or claim handle: the handle (weak, so dropping it ends the lease), the token that
/// tells a newer handle for the same key apart, and the task that renews the server's lease.
@MainActor
final class LeaseRecord<Handle: AnyObject> {
    weak var handle: Handle?
    let token: Int
    var renewal: Task<Void, Never>?

    init(handle: Handle, token: Int) {
        self.handle = handle
        self.token = token
    }
}

typealias WeakHold = LeaseRecord<Hold>
typealias WeakClaim = LeaseRecord<Claim>

extension LiveControlsClient {
    // MARK: holds

    /// `press`: steps once at once, then the server repeats until the hold ends. Returns the running ``Hold``
    /// (already ended when the press reached a bound).
    /// A toggle's confirming hold: `direction` nil (its `press` takes no args).
    func press(in room: Room, control: String, direction: Direction?) async throws -> Hold {
        room.lastHoldEnd[control] = nil
        let args: JSONObject = direction.map { ["direction": .string($0.rawValue)] } ?? [:]
        // Once sent, a press waits for its answer even if its task is cancelled (a finger up at once): the server may
        // hold, and only a handle that knows so releases it.
        let pressedAt = try await room.send(control: control, intent: "press", args: args, cancellable: false)
        let key = HoldKey(room: room.name, control: control)
        if let previous = holds.removeValue(forKey: key) {  // a press in the other direction replaced it
            previous.renewal?.cancel()
            previous.handle?.end("replaced")
        }
        let token = nextLease
        nextLease += 1
        let hold = Hold(room: room.name, control: control, direction: direction, client: self, token: token)
        // A joined room that has applied the press's own patch (its version reached the ack's): no hold of ours there
        // means the press ended it (a bound). Otherwise — a room resyncing, or the patch lost (a slow consumer's queue
        // dropped it; the ack still came) — the local state says nothing yet: the hold is taken as running, and the
        // snapshot that follows settles it.
        if room.status == .joined, room.version >= pressedAt,
           room.control(control)?.json["holding"]?["session"]?.stringValue != session {
            // (A toggle without confirmHoldMs switched at once: its press is over, as if confirmed.)
            hold.end(room.lastHoldEnd[control] ?? (direction == nil ? "confirmed" : "bound"))
            return hold
        }
        let record = WeakHold(handle: hold, token: token)
        holds[key] = record
        // A toggle's confirming hold has no lease: pressing again would start another one once it has switched.
        guard direction != nil else { return hold }
        let interval = configuration.holdRenewInterval
        record.renewal = Task { [weak self, weak room] in
            while true {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled, let self, let room, self.holds[key] === record, record.handle?.isActive == true
                else { return }
                _ = try? await room.send(control: control, intent: "press", args: args)  // renews the lease
            }
        }
        return hold
    }

    func releaseHold(room: String, control: String, token: Int) async {
        let key = HoldKey(room: room, control: control)
        guard let record = holds[key], record.token == token else { return }
        holds[key] = nil
        record.renewal?.cancel()
        record.handle?.end("release")
        _ = try? await request(["type": "intent", "room": .string(room), "control": .string(control),
                                "intent": "release"], room: room)
    }

    func abandonHold(room: String, control: String, token: Int) {
        let key = HoldKey(room: room, control: control)
        guard let record = holds[key], record.token == token else { return }
        holds[key] = nil
        record.renewal?.cancel()
        post(["type": "intent", "id": .string("release-\(token)"), "room": .string(room), "control": .string(control),
              "intent": "release"])
    }

    // MARK: claims

    func claim(in room: Room, control: String, target: String) async throws -> Claim {
        let message: JSONObject = ["type": "claim", "room": .string(room.name), "control": .string(control),
                                   "target": .string(target)]
        _ = try await request(message, room: room.name, cancellable: false)  // as a press: the answer is waited for
        let key = ClaimKey(room: room.name, control: control, target: target)
        holdsOrClaimsReplaced(key)
        let token = nextLease
        nextLease += 1
        let claim = Claim(room: room.name, control: control, target: target, client: self, token: token)
        let record = WeakClaim(handle: claim, token: token)
        claims[key] = record
        let leaseMs = room.control(control)?.claims[target]?.leaseMs ?? 30_000
        let interval = Duration.milliseconds(max(leaseMs / 3, 100))
        record.renewal = Task { [weak self] in
            while true {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled, let self, self.claims[key] === record, record.handle?.isActive == true
                else { return }
                _ = try? await self.request(message, room: key.room)  // claiming again renews the lease
            }
        }
        return claim
    }

    private func holdsOrClaimsReplaced(_ key: ClaimKey) {
        guard let previous = claims.removeValue(forKey: key) else { return }
        previous.renewal?.cancel()
        previous.handle?.end("replaced")
    }

    func unclaim(room: String, control: String, target: String, reason: Claim.Reason, token: Int) async {
        let key = ClaimKey(room: room, control: control, target: target)
        guard let record = claims[key], record.token == token else { return }
        claims[key] = nil
        record.renewal?.cancel()
        record.handle?.end(reason.rawValue)
        _ = try? await request(["type": "unclaim", "room": .string(room), "control": .string(control),
                                "target": .string(target), "reason": .string(reason.rawValue)], room: room)
    }

    func abandonClaim(room: String, control: String, target: String, token: Int) {
        let key = ClaimKey(room: room, control: control, target: target)
        guard let record = claims[key], record.token == token else { return }
        claims[key] = nil
        record.renewal?.cancel()
        post(["type": "unclaim", "room": .string(room), "control": .string(control), "target": .string(target)])
    }

    // MARK: ends the server reports

    /// A patch's `cause.ended` / `cause.claimsEnded` entries for this session end the matching handles.
    func leasesEnded(in room: Room, cause: JSONObject) {
        guard let session else { return }
        for entry in cause["ended"]?.arrayValue ?? [] where entry["session"]?.stringValue == session {
            guard let control = entry["control"]?.stringValue else { continue }
            let reason = entry["reason"]?.stringValue ?? "ended"
            room.lastHoldEnd[control] = reason
            if let record = holds.removeValue(forKey: HoldKey(room: room.name, control: control)) {
                record.renewal?.cancel()
                record.handle?.end(reason)
            }
        }
        for entry in cause["claimsEnded"]?.arrayValue ?? [] where entry["session"]?.stringValue == session {
            guard let control = entry["control"]?.stringValue, let target = entry["target"]?.stringValue else { continue }
            if let record = claims.removeValue(forKey: ClaimKey(room: room.name, control: control, target: target)) {
                record.renewal?.cancel()
                record.handle?.end(entry["reason"]?.stringValue ?? "ended")
            }
        }
    }

    /// After a snapshot (a resync, a slow consumer's catch-up, a failed resume) the patches that ended holds or
    /// claims may never have come: a handle whose hold or claim the new state no longer shows has ended.
    func reconcileLeases(in room: Room) {
        guard let session else { return }
        for (key, record) in holds where key.room == room.name
            && room.control(key.control)?.json["holding"]?["session"]?.stringValue != session {
            holds[key] = nil
            record.renewal?.cancel()
            record.handle?.end(room.lastHoldEnd[key.control] ?? "ended")
        }
        for (key, record) in claims where key.room == room.name && room.control(key.control)?.claims[key.target]?.session != session {
            claims[key] = nil
            record.renewal?.cancel()
            record.handle?.end("ended")
        }
    }

    /// Ends every handle (of one room, or all): the connection or the room is gone, and the server ended them.
    func endLeases(in room: String? = nil, reason: String) {
        for (key, record) in holds where room == nil || key.room == room {
            holds[key] = nil
            record.renewal?.cancel()
            record.handle?.end(reason)
        }
        for (key, record) in claims where room == nil || key.room == room {
            claims[key] = nil
            record.renewal?.cancel()
            record.handle?.end(reason)
        }
    }
}
