/// A room's members in the order they joined. A leave costs O(1) amortized: the session is noted as departed and
/// skipped, and the order is compacted once departed sessions are half of it — removing each leaver from an array at
/// once cost O(members) per leave, so a crowd of 9,000 leaving together cost O(n²) string comparisons (~1 s of the
/// room's queue, docs/benchmarks/HISTORY.md). A session that joins again while its old place is still noted is compacted out
/// first (O(n) then: one client leaving and joining the same room again, which its rate limit paces), so it appears
/// once, at the end.
struct JoinOrder: Sequence {
    private var slots: [SessionID] = []
    /// Sessions in `slots` that left (not listed).
    private var departed: Set<SessionID> = []

    var count: Int { slots.count - departed.count }
    var isEmpty: Bool { count == 0 }

    mutating func append(_ session: SessionID) {
        if departed.contains(session) { compact() }
        slots.append(session)
    }

    /// Takes `session` out (it must be listed: the room removes only its members).
    mutating func remove(_ session: SessionID) {
        assert(!departed.contains(session), "only a listed session leaves")
        departed.insert(session)
        if departed.count >= 16 && departed.count * 2 >= slots.count { compact() }
    }

    private mutating func compact() {
        let gone = departed
        slots.removeAll { gone.contains($0) }
        departed.removeAll()
    }

    func makeIterator() -> Iterator { Iterator(slots: slots.makeIterator(), departed: departed) }

    struct Iterator: IteratorProtocol {
        var slots: IndexingIterator<[SessionID]>
        let departed: Set<SessionID>

        mutating func next() -> SessionID? {
            while let session = slots.next() {
                if departed.isEmpty || !departed.contains(session) { return session }
            }
            return nil
        }
    }
}
