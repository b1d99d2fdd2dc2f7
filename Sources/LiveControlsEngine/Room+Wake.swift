import LiveControlsProtocol

/// A control's timer: a hold's tick, a lease, a countdown's end and what it runs (`then`).
extension Room {
    /// A control's timer fired: apply what is due. Always says when to wake it next.
    public mutating func wake(control id: ControlID, at now: Instant) -> RoomUpdate {
        guard var control = controls[id] else { return .none }
        let holderBefore = control.holder
        let before = control, previousChange = undoIntents.isEmpty ? nil : undoHistory.lastChange[id]
        let events = control.wake(at: now)
        var cause: JSONObject = ["kind": events.tick == nil ? "timer" : "tick", "control": .string(id.rawValue)]
        if let tick = events.tick {
            if let holderBefore { cause["session"] = .string(holderBefore.rawValue) }
            cause["tick"] = .int(tick)
        }
        // What the control asks to follow (a timer's `then`), applied as the server in the same change; refused, the
        // control's own change stands and the cause says why.
        var follower: (id: ControlID, control: any Control, events: ControlEvents)?
        if let then = events.then {
            var working = controls
            working[id] = control
            var described: JSONObject = ["control": .string(then.control.rawValue), "intent": .string(then.intent)]
            do throws(IntentError) {
                guard then.control != id, var target = working[then.control] else {
                    throw IntentError(.unknownControl, "room \(name) has no other control \"\(then.control)\"")
                }
                let followed = try target.apply(then.intent, args: IntentArgs(then.args), by: .server, at: now, room: RoomView(controls: working, clock: clock))
                try checkSize(replacing: then.control, with: target, among: working)
                follower = (then.control, target, followed)
            } catch {
                described["refused"] = .string(error.code.rawValue)
                described["message"] = .string(error.message)
            }
            cause["then"] = .object(described)
        }
        var update = commit(cause: cause, touching: follower.map { [id, $0.id] } ?? [id]) { room, _, ended in
            room.controls[id] = control
            ended.append(contentsOf: events.ended.map { (id, $0) })
            if let follower {
                room.controls[follower.id] = follower.control
                ended.append(contentsOf: follower.events.ended.map { (follower.id, $0) })
            }
            room.endClaims(reason: .lease) { $0 == id && $1.until <= now }
        }

        if !update.timers.contains(where: { $0.control == id }) {
            update.timers.append(TimerEffect(control: id, deadline: wakeDeadline(of: id)))
        }
        if let holderBefore, update.patch != nil, undoIntents[id] != nil {
            update.undoable += recordHoldStep(control: id, holder: holderBefore, before: before, previousChange: previousChange, at: now)
        }
        return update
    }
}
