import LiveControlsEngine
import LiveControlsProtocol

/// What the service thread calls for a room a connection has joined (`Connection.joined`).
///
/// One node: the `RoomRuntime` itself. Cluster mode: a `ClusterRoom`, which forwards to the room's owner
/// node and delivers what the owner publishes. Every method returns at once; the work runs elsewhere.
protocol RoomEndpoint: AnyObject, Sendable {
    func join(_ connection: Connection, _ request: JoinRequest)
    /// A second `join` of a joined room: a fresh snapshot.
    func resync(_ connection: Connection, id: RequestID?)
    /// The connection overflowed and has caught up: queue a fresh snapshot with `enqueueResync`.
    func resyncAfterOverflow(_ connection: Connection)
    func leave(_ connection: Connection, id: RequestID?, reason: HoldEndReason)
    func intent(_ connection: Connection, _ request: IntentRequest)
}

/// Where a room sends one session's messages: a local `Connection`, or in cluster mode a
/// `RemoteSession` whose frames travel through Redis to the node the session is connected to.
protocol RoomSubscriber: AnyObject, Sendable {
    var session: SessionID { get }
    /// Queues a frame; true when the caller must wake the connection through the `Hub`.
    func enqueue(_ frame: Frame) -> Bool
}

extension Connection: RoomSubscriber {}

/// The rooms of this server, whatever runs them: `RoomRegistry` (one node) or `ClusterDirectory` (Redis).
protocol RoomDirectory: AnyObject, Sendable {
    var metrics: ServerMetrics { get }
    /// Rooms this node knows of (one node: live rooms; cluster: rooms with local activity or owned here).
    var count: Int { get }
    func start() throws
    func stopAll()
    /// The room `name`, for a join. `mayCreate` says whether this session may create it from a template.
    func room(named name: String, template: String?,
              mayCreate: @escaping @Sendable (_ template: String?, _ defaultTemplate: String) -> ProtocolError?) throws(ProtocolError) -> any RoomEndpoint
    /// Extra fields for `/healthz`, and whether this node is ready to serve.
    func health() -> (ready: Bool, fields: [(String, JSONValue)])
    /// Extra lines for `/metrics`.
    func metricLines() -> [String]
    /// The once-a-second sweep (service thread): unload rooms nobody has been in for `idleSeconds` (0: never).
    func unloadIdleRooms(idleSeconds: Int)
}
