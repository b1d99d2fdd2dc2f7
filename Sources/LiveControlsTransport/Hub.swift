import CLibWebSockets
import LiveControlsRuntime
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The hand-off from room queues to the lws service thread.
///
/// Any thread may call `wake(_:)` after enqueueing frames on connections: the connections are
/// remembered and the service thread is woken with `lws_cancel_service` (the only lws call that is
/// safe off the service thread). On `EVENT_WAIT_CANCELLED` the service thread calls `drain()` and asks
/// lws for a writable callback on each. The context pointer lives under the same lock, so a wake
/// can never race `lws_context_destroy`.
///
/// On the service thread itself (an intent the room ran synchronously) there is nothing to wake:
/// `wake` remembers the connections in `ready`, and when the current `lws_service` pass returns the server
/// writes their frames straight away (`LiveControlsServer.flushReady`), without asking lws for writable
/// callbacks and a further `poll()`. A connection lws closed during the pass (its lifecycle `closed`) is
/// skipped.
final class Hub: SubscriberWaker, Sendable {
    /// `struct lws_context *`; only passed to `lws_cancel_service`, which is thread-safe.
    private struct ContextRef: @unchecked Sendable { let raw: OpaquePointer }

    private struct State {
        var context: ContextRef? = nil
        var dirty: [Connection] = []
        /// Whole fan-outs a room woke, as it handed them over: one append per fan-out under the lock; the
        /// service thread picks the connections out.
        var dirtyBatches: [[any RoomSubscriber]] = []
        var wakePending = false
        var shutdownRequested = false
        var sweepRequested = false
        /// Work to run on the service thread (server API replies), in order.
        var work: [@Sendable () -> Void] = []
    }
    private let state = Mutex(State())
    /// `pthread_self()` of the service thread while the context exists, 0 otherwise.
    private let serviceThread = Atomic<UInt>(0)
    /// The service thread's last pass used more CPU than `behindMicroseconds`, or writes wait too long for their turn
    /// (`notePass`, `WriteTurns.isBehind`).
    private let behind = Atomic<Bool>(false)
    /// A pass longer than this (CPU time of the service thread: reads, callbacks, writes; not `poll()`'s waiting)
    /// means every client waits that long for an answer: large rooms pause until passes are shorter again.
    static let behindMicroseconds = 25_000
    /// Service thread only (every access checks `onServiceThread` or runs on the service thread): connections
    /// that code on the service thread queued frames for during the current `lws_service` pass. Appended to once per
    /// delivery, so not checked for exclusive access at run time (`LiveControlsServer.writeTurns`).
    @exclusivity(unchecked) nonisolated(unsafe) private var ready: [Connection] = []

    /// Service thread, after `lws_create_context` and before `lws_context_destroy` (with nil).
    func setContext(_ context: OpaquePointer?) {
        state.withLock { $0.context = context.map(ContextRef.init) }
        serviceThread.store(context == nil ? 0 : UInt(pthread_self()), ordering: .releasing)
    }

    /// Whether the caller is the lws service thread (of a live context).
    var onServiceThread: Bool {
        let id = serviceThread.load(ordering: .acquiring)
        return id != 0 && pthread_equal(pthread_t(id), pthread_self()) != 0
    }

    func wake(_ connection: Connection) {
        wake(CollectionOfOne(connection))
    }

    /// `SubscriberWaker`: the last pass of the service thread took long (see `RoomRuntime+Pacing.swift`).
    var isBehind: Bool { behind.load(ordering: .relaxed) }

    /// Service thread, after each pass: the CPU time it took, and whether large writes wait for a later pass.
    func notePass(microseconds: Int, backlog: Bool = false) {
        let late = backlog || microseconds > Self.behindMicroseconds
        if late != behind.load(ordering: .relaxed) { behind.store(late, ordering: .relaxed) }
    }

    /// `SubscriberWaker`: rooms wake the subscribers their fan-out asked for. Only this transport's
    /// connections ever ask (a cluster's remote sessions publish through Redis themselves); anything else is
    /// ignored.
    func wake(_ subscriber: any RoomSubscriber) {
        if let connection = Self.connection(subscriber) { wake(connection) }
    }

    func wake(_ subscribers: [any RoomSubscriber]) {
        guard !subscribers.isEmpty else { return }
        if onServiceThread {
            for subscriber in subscribers { if let connection = Self.connection(subscriber) { ready.append(connection) } }
            return
        }
        state.withLock { s in
            s.dirtyBatches.append(subscribers)
            Self.signal(&s)
        }
    }

    /// Under the lock: wakes the service thread unless a wake-up is already on its way.
    private static func signal(_ s: inout State) {
        guard !s.wakePending, let context = s.context else { return }
        s.wakePending = true
        lws_cancel_service(context.raw)
    }

    /// The subscriber as this transport's `Connection` (a final class: one metadata compare, no runtime cast
    /// call — this runs once per delivery of every fan-out).
    @inline(__always)
    static func connection(_ subscriber: any RoomSubscriber) -> Connection? {
        let object = subscriber as AnyObject
        return ObjectIdentifier(type(of: object)) == ObjectIdentifier(Connection.self) ? unsafeDowncast(object, to: Connection.self) : nil
    }

    func wake<C: Collection>(_ connections: C) where C.Element == Connection {
        guard !connections.isEmpty else { return }
        if onServiceThread {
            ready.append(contentsOf: connections)
            return
        }
        state.withLock { s in
            s.dirty.append(contentsOf: connections)
            Self.signal(&s)
        }
    }

    /// Service thread, after an `lws_service` pass: whether `drainReady` has anything to hand out.
    var hasReady: Bool { !ready.isEmpty }

    /// Service thread: hands each connection `wake` collected during this pass to `body`, in order
    /// (also any that `body` itself adds), and empties the list, keeping its storage.
    func drainReady(_ body: (Connection) -> Void) {
        var i = 0
        while i < ready.count {
            body(ready[i])
            i += 1
        }
        ready.removeAll(keepingCapacity: true)
    }

    /// Asks the service thread to begin a graceful shutdown.
    func requestShutdown() {
        state.withLock { s in
            s.shutdownRequested = true
            if let context = s.context { lws_cancel_service(context.raw) }
        }
    }

    /// Runs `work` on the service thread (any thread may call; never inline, even from the service thread): how a
    /// server API reply that a room produced reaches its HTTP connection. Dropped if the service thread has
    /// stopped.
    func perform(_ work: @escaping @Sendable () -> Void) {
        state.withLock { s in
            s.work.append(work)
            // One wake-up for a run of work (a shutdown's close barriers: one per connection and room): while work
            // waits, a wake-up is already on its way.
            if s.work.count == 1, let context = s.context { lws_cancel_service(context.raw) }
        }
    }

    /// Asks the service thread for its periodic sweep (slow consumers).
    func requestSweep() {
        state.withLock { s in
            s.sweepRequested = true
            if let context = s.context { lws_cancel_service(context.raw) }
        }
    }

    /// Service thread: the connections to make writable, the work `perform` handed over (in order), and whether
    /// shutdown or a sweep was asked for — all under one lock.
    func drain() -> (connections: [Connection], batches: [[any RoomSubscriber]], work: [@Sendable () -> Void], shutdown: Bool, sweep: Bool) {
        state.withLock { s in
            let taken = s.dirty
            let batches = s.dirtyBatches
            let work = s.work
            s.dirty = []
            s.dirtyBatches = []
            if !work.isEmpty { s.work = [] }
            s.wakePending = false
            let sweep = s.sweepRequested
            s.sweepRequested = false
            return (taken, batches, work, s.shutdownRequested, sweep)
        }
    }
}
