import LiveControlsEngine
import LiveControlsProtocol

/// The requests one `ClusterRoom` forwarded to the room's owner and still waits on, as a value (the room's queue
/// owns it). Each is answered once: by its reply, or here, early — `unavailable` when it timed out, its owner
/// changed or stopped, or the subscriber reconnected — after which a reply that still comes is recognised and
/// dropped. An early answer is remembered for `rememberAnsweredMilliseconds` (a reply lost for good never comes).
struct ClusterRequests {
    /// One forwarded request.
    struct Pending {
        var connection: any RoomSubscriber
        var id: RequestID?
        var isJoin: Bool
        /// A snapshot this node asked for on the session's behalf (overflow, gap, new epoch).
        var isResync: Bool
        var isLeave = false
        var deadline: Instant
        /// The owner node it went to (once the link knows): if another owner publishes, it gets no answer.
        var owner: String? = nil
    }

    /// How long a request answered early is remembered, so that its late reply is dropped.
    static let rememberAnsweredMilliseconds = 60_000

    /// Waiting for their reply, by token.
    private var waiting: [Int: Pending] = [:]
    /// Answered early, by token, with when.
    private var answeredEarly: [Int: Instant] = [:]

    /// Waits for a connection's requests waiting when each began to be answered (or dropped): its close.
    private var barriers: [(tokens: Set<Int>, done: @Sendable () -> Void)] = []

    /// Nothing waits for a reply.
    var isEmpty: Bool { waiting.isEmpty }

    /// Answers early the requests overdue at `now` (the room's sweep tells them `unavailable`): past their deadline
    /// while the owner has been silent for longer than `timeoutMilliseconds` (while it keeps answering, a backlog is
    /// progress); or past it by another time-out whatever was heard (a reply lost while the room stays busy: a join
    /// sent to an owner that was replaced, a reply a stopped owner dropped), so every request, and a close waiting
    /// on one, ends.
    mutating func answerOverdue(now: Instant, lastHeard: Instant, timeoutMilliseconds: Int) -> [Pending] {
        let timeout = UInt64(timeoutMilliseconds) * 1_000_000
        let silent = now.nanoseconds - min(now.nanoseconds, lastHeard.nanoseconds) > timeout
        let cutoff = silent ? now : Instant(nanoseconds: now.nanoseconds - min(now.nanoseconds, timeout))
        guard waiting.values.contains(where: { $0.deadline < cutoff }) else { return [] }
        return answerEarly(now: now) { $0.deadline < cutoff }
    }

    /// Runs `done` (through `takeSettled`) once every request of `connection` waiting now has its answer (joins
    /// aside: a closing connection's join needs no answer); false, and `done` is the caller's to run at once, when
    /// none waits.
    mutating func whenAnswered(of connection: any RoomSubscriber, _ done: @escaping @Sendable () -> Void) -> Bool {
        let tokens = Set(waiting.filter { $0.value.connection === connection && !$0.value.isJoin }.keys)
        guard !tokens.isEmpty else { return false }
        barriers.append((tokens, done))
        return true
    }

    /// The barriers whose requests have all been answered or dropped since, removed: the caller runs them once the
    /// answers are queued for their connections.
    mutating func takeSettled() -> [@Sendable () -> Void] {
        guard !barriers.isEmpty else { return [] }
        var settled: [@Sendable () -> Void] = []
        barriers.removeAll { barrier in
            guard !barrier.tokens.contains(where: { waiting[$0] != nil }) else { return false }
            settled.append(barrier.done)
            return true
        }
        return settled
    }

    mutating func add(_ token: Int, _ request: Pending) {
        waiting[token] = request
    }

    /// The link sent the request to `owner`.
    mutating func sent(_ token: Int, to owner: String) {
        waiting[token]?.owner = owner
    }

    /// What a reply with `token` answers.
    enum Match {
        /// A request waiting for it (now answered).
        case request(Pending)
        /// A request answered early: the reply is dropped.
        case answeredEarly
        /// No request here: one that expected no reply (an intent without an id that failed), or one dropped with
        /// its connection.
        case none
    }

    mutating func reply(_ token: Int) -> Match {
        if answeredEarly.removeValue(forKey: token) != nil { return .answeredEarly }
        return waiting.removeValue(forKey: token).map(Match.request) ?? .none
    }

    /// Answers the request `token` early, if it still waits: returns it for the caller to tell its client.
    mutating func answerEarly(_ token: Int, now: Instant) -> Pending? {
        guard let request = waiting.removeValue(forKey: token) else { return nil }
        answeredEarly[token] = now
        return request
    }

    /// Answers early every waiting request that `matches`, returning them in the order they were made (tokens grow).
    mutating func answerEarly(now: Instant, where matches: (Pending) -> Bool) -> [Pending] {
        let tokens = waiting.filter { matches($0.value) }.keys.sorted()
        return tokens.compactMap { answerEarly($0, now: now) }
    }

    /// Drops the requests of `connection` without an answer (it is gone); their replies find no request.
    mutating func drop(_ connection: any RoomSubscriber) {
        waiting = waiting.filter { $0.value.connection !== connection }
    }

    /// Forgets early answers older than `rememberAnsweredMilliseconds` at `now`.
    mutating func forgetAnswered(now: Instant) {
        let before = now.nanoseconds - min(now.nanoseconds, UInt64(Self.rememberAnsweredMilliseconds) * 1_000_000)
        answeredEarly = answeredEarly.filter { $0.value.nanoseconds >= before }
    }

    /// Early answers still remembered (for tests).
    var rememberedAnswers: Int { answeredEarly.count }
}
