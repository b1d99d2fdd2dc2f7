import LiveControlsEngine
import LiveControlsProtocol

/// Rooms with at most this many subscribers may run a request on the caller's thread (`queue.sync`) when their
/// queue is idle: a WebSocket intent from the transport's service thread, a server API intent. Larger rooms' fan-out
/// is real work, done on the room's own queue beside the service thread's writing.
package let inlineSubscriberLimit = 128

/// What a transport calls for a room one of its subscribers has joined.
///
/// One node: the `RoomRuntime` itself. Cluster mode: a `ClusterRoomHandle`, which forwards to the room's
/// owner node and delivers what the owner publishes. Every method returns at once; the work runs on the
/// room's queue (except an inline intent, below).
package protocol RoomEndpoint: AnyObject, Sendable {
    func join(_ subscriber: any RoomSubscriber, _ request: JoinRequest)
    /// A second `join` of a joined room: a fresh snapshot.
    func resync(_ subscriber: any RoomSubscriber, id: RequestID?)
    /// The subscriber overflowed (or missed state) and has caught up: queue a fresh snapshot with
    /// `deliverResync`.
    func resyncAfterOverflow(_ subscriber: any RoomSubscriber)
    func leave(_ subscriber: any RoomSubscriber, id: RequestID?, reason: HoldEndReason)
    /// Applies an intent. With `inline`, a room whose queue has nothing waiting may run it right here on the
    /// calling thread (`queue.sync`: the room's total order holds) and returns how many subscribers it has, so
    /// the caller can tell small rooms from large ones; otherwise the intent is queued and nil returned.
    func intent(_ subscriber: any RoomSubscriber, _ request: IntentRequest, inline: Bool) -> Int?
    /// Sets the member's presence data (`presence`); answered with an `ack` when it has an id. Always queued.
    func presence(_ subscriber: any RoomSubscriber, _ request: PresenceRequest)
    /// Claims (or, `release`, gives up) a control or a part of it; answered with an `ack` when it has an id.
    func claim(_ subscriber: any RoomSubscriber, _ request: ClaimRequest)
    /// Hands `event` to the room's other members (`broadcast`); answered with an `ack` when it has an id.
    func broadcast(_ subscriber: any RoomSubscriber, _ request: BroadcastRequest)
    /// Takes back the member's user's last change (`redo`: its last undo); answered with an `ack` when it has an id.
    func undo(_ subscriber: any RoomSubscriber, _ request: UndoRequest)
    /// The room behind this endpoint stopped here for good (a failed store write, or unloaded): a join must ask
    /// the directory for the room again rather than resync with this endpoint.
    var isClosed: Bool { get }
    /// The room has more than `inlineSubscriberLimit` subscribers here (its fan-out is a crowd's); any thread.
    var isCrowded: Bool { get }
    /// Backpressure: when the room's intent queue is full, runs `resume` (on any thread) once it has drained to
    /// half, and returns true — the caller stops reading from the sender until then. False, and `resume` is
    /// dropped, when the queue is not full.
    func whenQueueDrains(_ resume: @escaping @Sendable () -> Void) -> Bool
    /// Runs `done` (on any thread) once everything queued for the room before this call has been carried out and the
    /// replies it made are queued for their subscribers (after the store made their changes durable); in cluster mode,
    /// once `subscriber`'s requests forwarded to the room's owner have their answers queued: a connection's close
    /// waits for the acks of its intents still under way.
    func afterQueuedWork(of subscriber: any RoomSubscriber, _ done: @escaping @Sendable () -> Void)
}

extension RoomEndpoint {
    /// Cluster mode's forwarding handles do not tell (their fan-out is the owner's, published through Redis).
    package var isCrowded: Bool { false }

    /// Rooms without a local queue (cluster mode's forwarding handles) never ask a sender to wait.
    package func whenQueueDrains(_ resume: @escaping @Sendable () -> Void) -> Bool { false }
}

/// The rooms of this server, whatever runs them: `RoomRegistry` (one node) or `ClusterDirectory` (Redis).
extension RoomDirectory {
    /// Cluster mode: members on other nodes must see this node's sessions leave; nothing changes.
    package func beginShutdown() {}
}

package protocol RoomDirectory: AnyObject, Sendable {
    var metrics: ServerMetrics { get }
    /// Rooms this node knows of (one node: live rooms; cluster: rooms with local activity or owned here).
    var count: Int { get }
    func start() throws
    /// A shutdown began: every connection is being closed, so leaves need not be told to the others (single node:
    /// a leave then only takes its member out; 5,000 leaves would otherwise cost 5,000 patches to thousands each).
    func beginShutdown()
    func stopAll()
    /// The room `name`, for a join. `mayCreate` says whether this session may create it from a template;
    /// `takeCreation` is asked only when the room is created (it does not exist, in the store or in Redis), last, and
    /// may refuse (the creating address's share).
    func room(named name: String, template: String?,
              mayCreate: @escaping @Sendable (_ template: String?, _ defaultTemplate: String) -> ProtocolError?,
              takeCreation: @escaping @Sendable () -> ProtocolError?) throws(ProtocolError) -> any RoomEndpoint
    /// Extra fields for `/healthz`, and whether this node is ready to serve.
    func health() -> (ready: Bool, fields: [(String, JSONValue)])
    /// The server API's way in.
    var administration: (any RoomAdministration)? { get }
    /// This node's connections, for the server API's `disconnect` (set by the transport before `start`).
    var sessions: SessionCloserSlot { get }
    /// The webhook dispatcher (nil: no webhooks configured).
    var webhooks: WebhookDispatcher? { get }
    /// Extra lines for `/metrics`.
    func metricLines() -> [String]
    /// The once-a-second sweep: unload rooms nobody has been in for `idleSeconds` (0: never). Called from the
    /// one thread that also dispatches joins (the transport's service thread).
    func unloadIdleRooms(idleSeconds: Int)
}
