import Foundation
import LiveControlsKit
import Observation

/// Records a room's events as they are delivered (observable, so `eventually` re-checks on each).
@MainActor @Observable
final class EventRecorder {
    private(set) var events: [RoomEvent] = []
    private(set) var version = -1
    @ObservationIgnored private var task: Task<Void, Never>?

    init(_ room: Room) {
        let stream = room.events()
        task = Task { @MainActor [weak self] in
            for await event in stream {
                self?.events.append(event)
                self?.version = event.version
            }
        }
    }

    func kinds() -> [RoomEvent.Kind] { events.map(\.kind) }
    func causes() -> [String] { events.compactMap { $0.cause?["kind"]?.stringValue } }
    func endReasons() -> [String] {
        events.flatMap { $0.cause?["ended"]?.arrayValue ?? [] }.compactMap { $0["reason"]?.stringValue }
    }
}

/// Holds back (or loses) what a connection receives, for the tests of falling behind and of gaps.
actor Gate {
    private var paused = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var patchesToDrop = 0

    func pause() { paused = true }

    func resume() {
        paused = false
        for waiter in waiters { waiter.resume() }
        waiters = []
    }

    func dropNextPatch() { patchesToDrop += 1 }

    func pass() async {
        while paused { await withCheckedContinuation { waiters.append($0) } }
    }

    func drops(_ text: String) -> Bool {
        guard patchesToDrop > 0, text.contains(#""type":"patch""#) else { return false }
        patchesToDrop -= 1
        return true
    }
}

/// The NIO transport behind a ``Gate``.
struct GatedTransport: WebSocketTransport {
    let gate = Gate()
    let inner = NIOWebSocketTransport()

    func connect(to url: URL, headers: [String: String]) async throws -> any WebSocketConnection {
        GatedConnection(inner: try await inner.connect(to: url, headers: headers), gate: gate)
    }
}

struct GatedConnection: WebSocketConnection {
    let inner: any WebSocketConnection
    let gate: Gate

    func receive() async throws -> String? {
        while let text = try await inner.receive() {
            await gate.pass()  // after the read: while paused, nothing more reaches the client, not even one message
            if await gate.drops(text) { continue }
            return text
        }
        return nil
    }

    func send(_ text: String) async throws { try await inner.send(text) }
    func close() async { await inner.close() }
}

/// A transport whose connections never open (a server that takes the TCP connection and never answers).
struct SilentTransport: WebSocketTransport {
    func connect(to url: URL, headers: [String: String]) async throws -> any WebSocketConnection {
        try await Task.sleep(for: .seconds(3600))
        throw CancellationError()
    }
}
