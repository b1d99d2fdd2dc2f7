import Foundation

extension LiveControlsClient {
    /// Connects, reads until the connection ends, and reconnects with backoff until closed or given up.
    func run() async {
        var attempt = 0
        var connectedOnce = false
        while !Task.isCancelled {
            var failure: String
            var disconnectedByServer = false
            do {
                try await connectAndRead()
                failure = "no welcome from the server in time"  // the stream ended without an error: our close
            } catch let LiveControlsError.connectFailed(why) {
                failure = why  // said once: connectFailed(failure) below adds "cannot connect:" again
            } catch {
                failure = "\(error)"
                // 4001: the server API disconnected this session; the protocol says not to reconnect on one's own.
                disconnectedByServer = (error as? WebSocketClosed)?.code == 4001
            }
            guard !Task.isCancelled else { return }
            let wasConnected = connectionState == .connected
            connectedOnce = connectedOnce || wasConnected
            connectionLost(failure)
            if !connectedOnce {
                // The first connection never opened: say so to connect()'s callers and stop.
                connectionState = .closed
                failWaiters(.connectFailed(failure))
                return
            }
            attempt = wasConnected ? 1 : attempt + 1
            if disconnectedByServer || configuration.maxReconnectAttempts.map({ attempt > $0 }) == true {
                connectionState = .closed
                failWaiters(.connectFailed(failure))
                for room in rooms.values { room.markLeft(.connectionLost(failure)) }
                return
            }
            connectionState = .reconnecting(attempt: attempt, lastError: failure)
            try? await Task.sleep(for: backoff(attempt: attempt))
        }
    }

    /// The delay before reconnect attempt `attempt` (1-based): the first delay doubled per attempt, capped, ±20 %.
    func backoff(attempt: Int) -> Duration {
        let base = configuration.reconnectDelay * (1 << min(attempt - 1, 16))
        let capped = min(base, configuration.maxReconnectDelay)
        return capped * Double.random(in: 0.8...1.2)
    }

    /// One connection's life: open, `welcome`, join the rooms again (resuming), then handle every message.
    private func connectAndRead() async throws {
        let headers = ["Sec-WebSocket-Protocol": protocolName]
        let socket = try await withTimeout(configuration.connectTimeout, "no connection within the time-out") {
            try await self.transport.connect(to: self.url, headers: headers)
        }
        let (outgoing, continuation) = AsyncStream<String>.makeStream()
        self.socket = socket
        self.outgoing = continuation
        // One writer per connection: messages leave in the order they were queued.
        let writer = Task {
            for await text in outgoing {
                do { try await socket.send(text) } catch { break }
            }
        }
        defer { writer.cancel() }
        var welcomed = false
        let limit = configuration.connectTimeout
        let welcomeTimer = Task {  // cancelled by the welcome
            try? await Task.sleep(for: limit)
            if !Task.isCancelled { await socket.close() }
        }
        defer { welcomeTimer.cancel() }
        do {
            while let text = try await socket.receive() {
                let message = await Incoming.parse(text)
                guard !Task.isCancelled else { break }  // closed by the client: nothing more is applied
                guard let message else { throw LiveControlsError.protocolViolation("a message that is not a JSON object") }
                if !welcomed {
                    guard message.type == "welcome", let session = message.object["session"]?.stringValue else {
                        throw LiveControlsError.protocolViolation("the first message is not welcome")
                    }
                    welcomed = true
                    welcomeTimer.cancel()
                    if let serverTime = message.object["serverTime"]?.intValue {
                        serverClockOffset = Double(serverTime) / 1000 - Date().timeIntervalSince1970
                    }
                    welcome(session: session)
                    continue
                }
                handle(message)
            }
        } catch {
            await socket.close()  // a violation leaves the socket open: close it before reconnecting
            throw error
        }
    }

    /// `welcome`: connected; rooms held before a reconnect are joined again with `since`.
    private func welcome(session: String) {
        self.session = session
        connectionState = .connected
        let waiters = connectWaiters
        connectWaiters = [:]
        for waiter in waiters.values { waiter.resume() }
        for room in rooms.values where room.status != .joining {
            if case .left = room.status { continue }
            rejoin(room, resuming: true)
        }
    }

    /// Sends `join` for a room this client holds (after a reconnect, a gap or a stopped room). With `resuming`,
    /// `since` names the version held, so only the missed patches come (or a snapshot when they cannot). A refusal
    /// that may pass (`unavailable` while a cluster fails over, `overloaded`, a rate or room limit) or no answer in
    /// time is tried again after a backoff; any other refusal ends the room (`status` `.left(error)`).
    func rejoin(_ room: Room, resuming: Bool, attempt: Int = 1) {
        guard connectionState == .connected else { return }
        room.status = resuming ? .resuming : .resyncing
        Task {
            do {
                _ = try await request(joinMessage(for: room, since: resuming), room: room.name)
            } catch let error as LiveControlsError {
                switch error {
                case let .refused(refusal) where Self.passes(refusal.code):
                    break
                case .timedOut:
                    break
                case .refused:
                    endLeases(in: room.name, reason: "refused")
                    room.markLeft(error)
                    forget(room)
                    return
                default:
                    return  // the connection went: the next welcome joins again
                }
                try? await Task.sleep(for: backoff(attempt: attempt))
                guard rooms[room.name] === room, room.status == .resuming || room.status == .resyncing else { return }
                rejoin(room, resuming: resuming, attempt: attempt + 1)
            } catch {}
        }
    }

    /// Refusals a later try may not get.
    static func passes(_ code: ErrorCode?) -> Bool {
        [.unavailable, .overloaded, .rateLimited, .roomLimit, .internalError].contains { $0 == code }
    }

    /// The connection ended: requests in flight fail, holds and claims end (the server ended them too).
    func connectionLost(_ why: String) {
        socket = nil
        outgoing?.finish()
        outgoing = nil
        session = nil
        failPending(.connectionLost(why))
        for room in rooms.values where room.status != .joining {
            if case .left = room.status { continue }
            room.status = .reconnecting
        }
        endLeases(reason: "disconnect")
    }

}

/// Runs `operation`, failing with ``LiveControlsError/connectFailed(_:)`` after `limit`.
func withTimeout<T: Sendable>(_ limit: Duration, _ what: String, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw LiveControlsError.connectFailed(what)
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw LiveControlsError.connectFailed(what) }
        return first
    }
}
