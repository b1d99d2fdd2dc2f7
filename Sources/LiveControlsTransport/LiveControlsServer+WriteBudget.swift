import CLibWebSockets
import LiveControlsRuntime

/// Writes share a budget of CPU time per service pass, so one pass stays short whatever is queued. 5,000 clients of
/// one room, each owed a few KB of patches, made passes of 100–330 ms (one `send()` each, ~35 µs on loopback), and
/// every other client — a probe's ack in a quiet room — waited for the whole pass, twice.
///
/// The budget applies while clients of rooms that are not crowded are about (a message for such a room in the last
/// 500 ms, `LiveControlsServer.handleMessage`): a crowd alone has every pass to itself (cutting its passes short cost
/// a fifth to a third of fan-out to 10,000, docs/benchmarks/HISTORY.md).
/// Past the budget (3 ms), only small writes without a crowd's frame go (`Outbox.next(bulk: false)`: an ack, a
/// quiet room's patch); a connection with more (a large room's fan-out, a fragment of a big snapshot) waits for a
/// turn, first come first served. After each pass the first ones get a writable callback and a turn (one write each),
/// as many as fitted in the last pass that ran out of budget; one that still has more queues again behind the others:
/// fair between them. When the first in line has waited over 400 ms, the transport counts as behind
/// (`Hub.isBehind`) and large rooms pause their fan-out (`RoomRuntime+Pacing.swift`) — not sooner: a room that goes
/// on producing while its round of turns is under way has its next round's writes carry more patches each.
struct WriteTurns {
    /// CPU time per pass after which only small writes go (the rest wait for a turn). 3 ms, not the 10 ms it was: with
    /// 3,000 clients flooding one room with intents, a quiet room's intent p99 went from 60–86 ms to 33–43 ms
    /// (Benchmarks/fairness.py, docs/benchmarks/HISTORY.md "Stop 40"); a crowd alone keeps whole passes (`enforcing`).
    static let passMicroseconds = 3_000

    /// When the connection first in line has waited longer than this, the writing is behind: large rooms pause.
    static let behindNanoseconds: UInt64 = 400_000_000

    /// How long the budget applies after a client outside large rooms sent something.
    static let othersNanoseconds: UInt64 = 500_000_000

    /// Connections waiting for a turn, and since when (`Transport.now()`).
    private var waiting: [(connection: Connection, since: UInt64)] = []
    private var head = 0
    /// The service thread's CPU time in nanoseconds (a manual clock in tests).
    private let clock: () -> Int
    /// The current pass: when it began (thread CPU time), its writes, whether its budget is spent.
    private var passStart: Int
    private var writes = 0
    private var spent = false
    /// The budget applies (until `enforcedUntil`, monotonic time): only while clients outside large rooms are about,
    /// whom a crowd's writing would make wait; a crowd alone has the whole pass.
    private var enforcing = false
    private var enforcedUntil: UInt64 = 0
    /// Turns handed out after a pass: the writes that fit in the last pass whose budget ran out (counted when it did),
    /// doubled after a pass whose budget did not.
    private var turnsPerPass = 64

    init(clock: @escaping () -> Int = ThreadCPUClock.nanoseconds) {
        self.clock = clock
        passStart = .max  // set by the first pass (on the service thread, whose CPU time the clock reads)
    }

    var isEmpty: Bool { head == waiting.count }

    /// Writes that need a turn wait for one now (the budget is spent, or others wait already).
    var isLimiting: Bool { spent || !isEmpty }

    /// The connection first in line has waited longer than `behindNanoseconds`: a round of turns takes that long.
    func isBehind(now: @autoclosure () -> UInt64) -> Bool {
        !isEmpty && now() - waiting[head].since > Self.behindNanoseconds
    }

    /// Whether `connection` may write anything now: its turn came, or nobody waits and the pass has budget left.
    func mayWrite(_ connection: Connection) -> Bool {
        connection.writeTurn || (isEmpty && !spent)
    }

    /// `mayWrite`, in a writable callback: a turn is used up by the callback it came with, whatever it writes.
    mutating func take(_ connection: Connection) -> Bool {
        defer { connection.writeTurn = false }
        return mayWrite(connection)
    }

    /// `connection` wrote, using its turn up; every 32nd write looks at the pass's time.
    mutating func wrote(by connection: Connection) {
        connection.writeTurn = false
        writes += 1
        if enforcing && !spent && writes & 31 == 0 && clock() - passStart > Self.passMicroseconds * 1000 {
            spent = true
            turnsPerPass = max(32, writes)
        }
    }

    /// A message came for a room that is not crowded (at `now`, monotonic): the budget applies for a while.
    mutating func noteOtherClient(now: UInt64) {
        enforcedUntil = now + Self.othersNanoseconds
        enforcing = true
    }

    /// `connection` has more to write than the spent budget allows: it waits for its turn (once).
    mutating func wait(_ connection: Connection) {
        guard !connection.waitingForTurn else { return }
        connection.waitingForTurn = true
        waiting.append((connection, Transport.now().nanoseconds))
    }

    /// After a pass (which ended at `now`, CPU time of the service thread): a new budget, and turns for the first
    /// connections waiting (as many as fit in a pass, by the last pass that ran out of budget).
    mutating func nextPass(now: Int, wallClock: @autoclosure () -> UInt64, draining: Bool = false, arm: (Connection) -> Void) {
        if enforcing && (draining || wallClock() > enforcedUntil) { enforcing = false }
        if !spent && !isEmpty { turnsPerPass = min(turnsPerPass * 2, 1 << 20) }
        passStart = now
        writes = 0
        spent = false
        var turns = turnsPerPass
        while turns > 0, head < waiting.count {
            let connection = waiting[head].connection
            head += 1
            connection.waitingForTurn = false
            guard !connection.lifecycle.isGone else { continue }
            connection.writeTurn = true
            arm(connection)
            turns -= 1
        }
        if head == waiting.count {
            waiting.removeAll(keepingCapacity: waiting.count <= 1024)
            head = 0
        } else if head >= 1024 && head * 2 >= waiting.count {
            waiting.removeFirst(head)
            head = 0
        }
    }
}

extension LiveControlsServer {
    /// Service thread, after each pass (which ended at `now`, the thread's CPU time).
    func shareWriteBudget(now: Int) {
        serviceThread.assertOn()
        // A shutdown's last writes (acks, then 1001) get whole passes: its grace is short.
        writeTurns.nextPass(now: now, wallClock: Transport.now().nanoseconds, draining: draining) { lws_callback_on_writable($0.wsi.raw) }
    }
}
