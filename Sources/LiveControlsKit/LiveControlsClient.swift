import Foundation
import Observation

/// A connection to a LiveControls server: joins rooms, sends intents, keeps every joined ``Room`` current, and
/// reconnects with backoff, resuming each room from the version it holds.
///
/// Everything observable lives on the main actor, so SwiftUI views read it directly:
/// ```swift
/// let client = LiveControlsClient(url: URL(string: "ws://localhost:8080/ws")!, name: "Ann")
/// let room = try await client.join("demo")
/// try await room.stepper("quantity")?.next()
/// ```
@MainActor @Observable
public final class LiveControlsClient {
    /// Where the connection is.
    public enum ConnectionState: Sendable, Equatable {
        /// Not connected yet (``connect()`` or ``join(_:name:template:)`` connects).
        case idle
        /// Opening the first connection.
        case connecting
        /// Connected; `welcome` named this session.
        case connected
        /// The connection was lost; the next attempt starts after a backoff. Rooms keep their last state.
        case reconnecting(attempt: Int, lastError: String)
        /// Closed by ``close()``, or given up (see ``Configuration/maxReconnectAttempts``).
        case closed
    }

    /// Timing and limits of a client.
    public struct Configuration: Sendable {
        /// How long a request (join, intent, presence, claim, leave) waits for its reply.
        public var requestTimeout: Duration = .seconds(10)
        /// How long opening a connection and reading `welcome` may take.
        public var connectTimeout: Duration = .seconds(10)
        /// The first reconnect delay; it doubles on each failed attempt up to ``maxReconnectDelay``, with ±20 % jitter.
        public var reconnectDelay: Duration = .milliseconds(250)
        public var maxReconnectDelay: Duration = .seconds(8)
        /// Attempts after a lost connection before the client gives up (nil: never).
        public var maxReconnectAttempts: Int? = nil
        /// How often a ``Hold`` presses again to renew the server's lease (`maxHoldMs`, 30 s by default).
        public var holdRenewInterval: Duration = .seconds(10)

        public init() {}
    }

    public let url: URL
    /// The token sent with every `join` (nil on an open server).
    public var token: String?
    /// The display name sent with every `join` (a join may name another).
    public var name: String?
    public let configuration: Configuration

    /// Where the connection is; observable.
    public internal(set) var connectionState: ConnectionState = .idle
    /// This connection's session id (from `welcome`); a reconnect is a new session.
    public internal(set) var session: String?
    /// The server's clock minus this machine's, in seconds, as of the last `welcome` (its `serverTime` against the time
    /// it arrived: off by at most that message's one-way delay); 0 before the first.
    public internal(set) var serverClockOffset: TimeInterval = 0
    /// The rooms joined (or being joined) by name.
    public internal(set) var rooms: [String: Room] = [:]

    @ObservationIgnored let transport: any WebSocketTransport
    @ObservationIgnored var socket: (any WebSocketConnection)?
    @ObservationIgnored var outgoing: AsyncStream<String>.Continuation?
    @ObservationIgnored var pending: [String: Pending] = [:]
    @ObservationIgnored var nextRequest = 1
    @ObservationIgnored var runTask: Task<Void, Never>?
    /// `connect()` calls waiting for the connection, by a number (a cancelled one is taken out).
    @ObservationIgnored var connectWaiters: [Int: CheckedContinuation<Void, any Error>] = [:]
    @ObservationIgnored var nextWaiter = 1
    @ObservationIgnored var holds: [HoldKey: WeakHold] = [:]
    @ObservationIgnored var claims: [ClaimKey: WeakClaim] = [:]
    @ObservationIgnored var nextLease = 1

    /// A request waiting for its reply: resumed with the reply message or a failure.
    struct Pending {
        let room: String?
        let reply: (Result<JSONObject, any Error>) -> Void
        let timeout: Task<Void, Never>
    }

    public init(url: URL, token: String? = nil, name: String? = nil, configuration: Configuration = Configuration(),
                transport: any WebSocketTransport = NIOWebSocketTransport()) {
        self.url = url
        self.token = token
        self.name = name
        self.configuration = configuration
        self.transport = transport
    }

    /// Connects (once); returns when the server's `welcome` arrived. Throws ``LiveControlsError/connectFailed(_:)``
    /// when the first connection cannot be opened, and `CancellationError` when the calling task is cancelled while it
    /// waits (the client goes on connecting). Later losses reconnect on their own.
    public func connect() async throws {
        try Task.checkCancellation()
        switch connectionState {
        case .connected: return
        case .closed, .idle:
            connectionState = .connecting
            let task = Task { await self.run() }
            runTask = task
        case .connecting, .reconnecting:
            break
        }
        let number = nextWaiter
        nextWaiter += 1
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { connectWaiters[number] = $0 }
        } onCancel: {
            Task { @MainActor [weak self] in self?.connectWaiters.removeValue(forKey: number)?.resume(throwing: CancellationError()) }
        }
    }

    /// Joins a room (connecting first if needed) and returns it once its snapshot arrived. Joining a room this
    /// client already joined returns the same ``Room``.
    public func join(_ room: String, name: String? = nil, template: String? = nil) async throws -> Room {
        try await connect()
        if let existing = rooms[room], existing.status == .joined { return existing }
        let created = rooms[room] == nil
        let model = rooms[room] ?? Room(name: room, client: self)
        model.joinName = name ?? self.name
        model.template = template
        if created {
            model.status = .joining
            rooms[room] = model
        }
        // A room held already (resuming or resyncing after a reconnect or a gap) keeps its status until this
        // join's snapshot replaces its state; a failure then leaves it to the rejoin under way.
        // Once sent, a join waits for its answer even if its task is cancelled: the server makes the session a member
        // either way, and the model must say so.
        do {
            _ = try await request(joinMessage(for: model, since: false), room: room, cancellable: false)
            return model
        } catch {
            if created, rooms[room] === model, model.status == .joining { rooms[room] = nil }
            throw error
        }
    }

    /// Closes the connection; every room is left (the server ends this session's holds and claims).
    public func close() async {
        runTask?.cancel()
        runTask = nil
        connectionState = .closed
        let socket = self.socket
        self.socket = nil
        outgoing?.finish()
        outgoing = nil
        failPending(.connectionLost("the client closed the connection"))
        failWaiters(.connectFailed("the client closed the connection"))
        for room in rooms.values {
            if case .left = room.status { continue }  // keeps why it was left (a 4001, a refusal)
            room.markLeft(nil)
        }
        endLeases(reason: "disconnect")
        await socket?.close()
    }

    // MARK: requests

    /// Sends a request with a fresh id and returns its reply (`ack`, `snapshot`, `resumed` or `left`); a refusal
    /// throws ``LiveControlsError/refused(_:)``. A task cancelled before the request is sent gets `CancellationError`
    /// and nothing is sent. Once sent, a `cancellable` request stops waiting when its task is cancelled (it may or may
    /// not take effect, as after a time-out); one that starts what the client tracks (a join, a press, a claim) waits
    /// for its answer, so the client knows what the server did.
    func request(_ message: JSONObject, room: String?, cancellable: Bool = true) async throws -> JSONObject {
        try Task.checkCancellation()
        guard connectionState == .connected, let outgoing else { throw LiveControlsError.notConnected }
        let id = "k\(nextRequest)"
        nextRequest += 1
        var message = message
        message["id"] = .string(id)
        let timeout = configuration.requestTimeout
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let timer = Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    if !Task.isCancelled { self?.resolve(id, .failure(LiveControlsError.timedOut)) }
                }
                pending[id] = Pending(room: room, reply: { continuation.resume(with: $0) }, timeout: timer)
                outgoing.yield(JSONWriter.string(.object(message)))
            }
        } onCancel: {
            // Runs on the cancelling thread: the pending entry is the main actor's (set before this hop can run).
            guard cancellable else { return }
            Task { @MainActor [weak self] in self?.resolve(id, .failure(CancellationError())) }
        }
    }

    /// Sends a message that expects no reply (a best-effort release or unclaim); dropped when not connected.
    func post(_ message: JSONObject) {
        outgoing?.yield(JSONWriter.string(.object(message)))
    }

    func resolve(_ id: String, _ result: Result<JSONObject, any Error>) {
        guard let entry = pending.removeValue(forKey: id) else { return }
        entry.timeout.cancel()
        entry.reply(result)
    }

    func failPending(_ error: LiveControlsError) {
        let all = pending
        pending = [:]
        for entry in all.values {
            entry.timeout.cancel()
            entry.reply(.failure(error))
        }
    }

    /// Fails the requests waiting on one room's replies.
    func failPending(room: String, _ error: LiveControlsError) {
        for (id, entry) in pending where entry.room == room {
            pending[id] = nil
            entry.timeout.cancel()
            entry.reply(.failure(error))
        }
    }

    func failWaiters(_ error: LiveControlsError) {
        let waiters = connectWaiters
        connectWaiters = [:]
        for waiter in waiters.values { waiter.resume(throwing: error) }
    }

    func joinMessage(for room: Room, since: Bool) -> JSONObject {
        var join: JSONObject = ["type": "join", "room": .string(room.name)]
        if let name = room.joinName { join["name"] = .string(name) }
        if let template = room.template { join["template"] = .string(template) }
        if let token { join["token"] = .string(token) }
        if since, let epoch = room.epoch {
            var resume: JSONObject = ["epoch": .string(epoch), "version": .int(room.version)]
            if let seenAs = room.seenAs { resume["session"] = .string(seenAs) }
            join["since"] = .object(resume)
        }
        return join
    }

    func forget(_ room: Room) {
        if rooms[room.name] === room { rooms[room.name] = nil }
    }
}

extension LiveControlsClient {
    /// The local moment of a server time (ms since 1970, as states name moments: a toggle's `holding.until`).
    public func localDate(ofServerTime milliseconds: Int) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000 - serverClockOffset)
    }

    /// The server's time now, as this client reckons it (ms since 1970).
    public var serverTimeNow: Int { Int(((Date().timeIntervalSince1970 + serverClockOffset) * 1000).rounded()) }
}
