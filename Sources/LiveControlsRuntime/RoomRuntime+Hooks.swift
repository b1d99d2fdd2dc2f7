import LiveControlsEngine
import LiveControlsProtocol

/// A hooked intent waiting for the app's backend (queue only).
struct WaitingIntent {
    let serial: Int
    let subscriber: any RoomSubscriber
    let request: IntentRequest
    let control: ControlID
    /// When it arrived (cluster mode: the forwarding node stops waiting for its answer `hookDeadlineMs` later).
    let arrived: Instant
    /// The control's own state (without claims) when the call was made; nil while the call waits for an earlier
    /// intent on the same control to be settled.
    var shown: JSONValue?
    /// Its member left meanwhile: dropped in its turn, whatever the backend says.
    var dropped = false
    /// What the backend said; nil until it answered (or the call failed).
    var outcome: IntentHookClient.Outcome?
}

/// Intent hooks (the template's `hooks.intent`, docs/PROTOCOL.md *Intent hooks*): a hooked intent from a member is
/// checked as if applied (an intent that would be refused anyway is refused at once, without a call), then waits in
/// `waitingIntents` while the backend is asked. Waiting intents are settled in the order they arrived: one whose answer
/// came waits for those before it. One control has at most one call under way — the next intent on it is asked about
/// once the one before is settled, with the state that left — so the backend always sees the state its answer will
/// apply to, unless something that is not hooked changed the control meanwhile (then `conflict`). Nothing else waits:
/// intents that are not hooked, joins, holds and timers go on, and other rooms never notice.
extension RoomRuntime {
    /// Calls one room has under way at most (one per control, and no more than this): the hooks' transport keeps 32
    /// connections to a backend, so eight rooms whose calls hang leave it room for the others.
    static let hookCallsPerRoom = 4

    /// Queue only: `request` is hooked; refuse it, or queue it and ask.
    func awaitHook(_ subscriber: any RoomSubscriber, _ request: IntentRequest, _ hook: IntentHook) {
        assertOnQueue(queue)
        let control = ControlID(request.control)
        guard waitingIntents.count < hook.maxWaiting else {
            metrics.intentOverloaded()
            let why = "\(waitingIntents.count) intents of room \(name) wait for the app's backend to allow them (the template's hooks.intent.maxWaiting); retry in a moment"
            return send(.error(ProtocolError(.overloaded, why, id: request.id, room: name)), to: subscriber)
        }
        // Refused anyway (permissions, claims, arguments, bounds): said now, and the backend is not bothered.
        var trial = room
        do {
            _ = try trial.apply(control: control, intent: request.intent, args: request.args, by: subscriber.session, requestID: request.id, at: scheduler.now())
        } catch {
            metrics.intent(refused: true)
            return send(.error(ProtocolError(error.code, error.message, id: request.id, room: name)), to: subscriber)
        }
        nextHookSerial += 1
        waitingIntents.append(WaitingIntent(serial: nextHookSerial, subscriber: subscriber, request: request, control: control,
                                            arrived: scheduler.now()))
        advanceHooks()
    }

    /// Queue only: settles the waiting intents at the head that have their outcome, then asks about those that may be
    /// asked now.
    private func advanceHooks() {
        repeat {
            while let first = waitingIntents.first, let outcome = first.outcome {
                waitingIntents.removeFirst()
                settle(first, outcome)
            }
        } while callHooks()
    }

    /// Queue only: asks about every waiting intent whose control has no earlier intent waiting. True when one of them
    /// needs no call (its member left, or its time ran out): it is settled by the next `advanceHooks` round.
    private func callHooks() -> Bool {
        guard let hook, let hookClient else { return false }
        var busy = Set<ControlID>()
        var settledWithoutCall = false
        var calling = waitingIntents.count { $0.shown != nil && $0.outcome == nil }
        let now = scheduler.now()
        for index in waitingIntents.indices {
            let waiting = waitingIntents[index]
            defer { busy.insert(waiting.control) }
            guard waiting.shown == nil, !busy.contains(waiting.control) else { continue }
            guard calling < Self.hookCallsPerRoom || waiting.dropped else { break }  // the rest wait for a call to end
            var timeoutMs = hook.timeoutMs
            if let deadline = hookDeadlineMs {
                timeoutMs = min(timeoutMs, deadline - Int((now.nanoseconds &- waiting.arrived.nanoseconds) / 1_000_000))
            }
            guard !waiting.dropped, timeoutMs > 0,
                  let (body, state) = room.hookRequest(control: waiting.control, intent: waiting.request.intent, args: waiting.request.args,
                                                       by: waiting.subscriber.session) else {
                // Settled in its turn without a call: dropped (its member left), or out of time.
                waitingIntents[index].shown = .null
                waitingIntents[index].outcome = .failed("no time was left to ask before this cluster stops waiting for an answer")
                settledWithoutCall = true
                continue
            }
            waitingIntents[index].shown = room.controlOwnState(waiting.control) ?? state
            calling += 1
            let serial = waiting.serial
            hookClient.call(hook, timeoutMs: timeoutMs, template: room.template, body: body) { [weak self] outcome in
                guard let runtime = self else { return }
                runtime.submit { runtime.hookAnswered(serial, outcome) }
            }
        }
        return settledWithoutCall && waitingIntents.first?.outcome != nil
    }

    /// Queue only: the backend answered about intent `serial` (or failed to).
    private func hookAnswered(_ serial: Int, _ outcome: IntentHookClient.Outcome) {
        assertOnQueue(queue)
        guard let index = waitingIntents.firstIndex(where: { $0.serial == serial }) else { return }  // refused meanwhile
        waitingIntents[index].outcome = outcome
        advanceHooks()
    }

    private func settle(_ waiting: WaitingIntent, _ outcome: IntentHookClient.Outcome) {
        let (subscriber, request) = (waiting.subscriber, waiting.request)
        // Its member left (or its connection closed) meanwhile: dropped, as a queued intent of a closed connection is.
        guard !waiting.dropped, room.isMember(subscriber.session), !refusedAsAbandoned(subscriber, id: request.id) else { return }
        if let deadline = hookDeadlineMs, scheduler.now().nanoseconds &- waiting.arrived.nanoseconds >= UInt64(deadline) * 1_000_000 {
            // Cluster mode: the member's node has stopped waiting and answered `unavailable`; applying it now would
            // do what the client was told was not done (and its retry would do it twice).
            metrics.intent(refused: true)
            return send(.error(ProtocolError(.unavailable, "the app's backend did not answer in time for this cluster; the intent was not applied — retry",
                                             id: request.id, room: name)), to: subscriber)
        }
        var args = request.args
        switch outcome {
        case let .answered(.deny(code, message)):
            metrics.intent(refused: true)
            let words = message ?? "the app's backend refused this intent" + (code.map { " (\($0))" } ?? "")
            return send(.error(ProtocolError(.denied, words, id: request.id, room: name, reason: code)), to: subscriber)
        case let .failed(why):
            // A call the server's own stop cut short is no answer to apply by (`onError` is about the backend).
            guard hook?.onError == .allow, why != "stopped" else {
                metrics.intent(refused: true)
                logger.warning("intent hook failed; intent refused", metadata: ["control": "\(request.control)", "intent": "\(request.intent)", "error": "\(why)"])
                let words = "the app's backend, which allows this intent, did not answer (\(why)); it was not applied — retry in a moment"
                return send(.error(ProtocolError(.unavailable, words, id: request.id, room: name)), to: subscriber)
            }
            logger.warning("intent hook failed; intent applied (onError: allow)", metadata: ["control": "\(request.control)", "error": "\(why)"])
        case let .answered(.allow(newArgs)):
            if let newArgs { args = newArgs }
        }
        // Applied (allowed, or the call failed and onError is allow) only to the state the backend saw (or would have).
        guard room.controlOwnState(waiting.control) == waiting.shown else {
            metrics.intent(refused: true)
            let words = "control \(request.control) changed while the app's backend decided about this intent; it was not applied — look at the new state and send it again"
            return send(.error(ProtocolError(.conflict, words, id: request.id, room: name)), to: subscriber)
        }
        applyIntent(subscriber, request, args: args)
    }

    /// Queue only: `session` left (`told`: by its own `leave`, so its connection is open and waits for answers). Its
    /// waiting intents are dropped in their turn, whatever the backend says; a leaving member is told so now.
    func dropWaitingIntents(of session: SessionID, told: Bool) {
        guard !waitingIntents.isEmpty else { return }
        for index in waitingIntents.indices where waitingIntents[index].subscriber.session == session && !waitingIntents[index].dropped {
            waitingIntents[index].dropped = true
            guard told else { continue }
            let waiting = waitingIntents[index]
            let error = ProtocolError(.notJoined, "you left room \(name) before the app's backend answered about this intent; it was not applied",
                                      id: waiting.request.id, room: name)
            send(.error(error), to: waiting.subscriber)
        }
    }

    /// Queue only: every waiting intent is refused with `unavailable` (`why`): the server is shutting down, or the room
    /// stopped acting here. Answers that come later are dropped.
    func refuseWaitingIntents(_ why: String) {
        assertOnQueue(queue)
        let refused = waitingIntents
        waitingIntents.removeAll()
        for waiting in refused {
            metrics.intent(refused: true)
            let frame = Frame.make(.error(ProtocolError(.unavailable, why, id: waiting.request.id, room: name)))
            if waiting.subscriber.deliver(frame) { waker.wake(waiting.subscriber) }
        }
    }

    /// At SIGTERM (any thread): hooked intents still waiting are refused (`unavailable`) before connections close.
    func beginShutdownOfHooks() {
        guard hook != nil else { return }
        submit { self.refuseWaitingIntents("the server is shutting down, so this intent, still waiting for the app's backend, was not applied; send it again once reconnected") }
    }
}
