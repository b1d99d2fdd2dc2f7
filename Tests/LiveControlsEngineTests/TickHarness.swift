import LiveControlsEngine
import LiveControlsProtocol
import XCTest

/// Drives a `Room` on a manual clock: carries out timer effects and fires due timers at their exact
/// deadlines when the clock is advanced. Every patch is checked against the room's rendered document.
struct TickHarness {
    var room: Room
    private(set) var now = Instant(nanoseconds: 0)
    private(set) var timers: [ControlID: Instant] = [:]
    private(set) var patches: [Patch] = []
    /// The clock (ms) at each tick patch, in order.
    private(set) var tickTimes: [Int] = []
    /// The document as a client sees it: the first render with every patch applied.
    private(set) var document: JSONValue

    init(template: RoomTemplate, sessions: [String] = ["a", "b"]) {
        room = Room(name: "r", template: template, epoch: "e", historyLimit: 64)
        document = room.render()
        for s in sessions { record(room.join(SessionID(s), name: s, roles: ["admin"])) }
    }

    init(stepper: Stepper, sessions: [String] = ["a", "b"]) {
        self.init(template: RoomTemplate(name: "t", controls: [(ControlID("q"), stepper)]), sessions: sessions)
    }

    var stepper: Stepper { room.control(ControlID("q")) as! Stepper }
    var value: Int { stepper.value }

    mutating func record(_ update: RoomUpdate) {
        if let patch = update.patch {
            XCTAssertEqual(patch.version, (patches.last?.version ?? 0) + 1, "versions grow by exactly one")
            document = try! document.applying(patch.ops(for: .everything))
            XCTAssertEqual(document, room.render(), "patch \(patch.version) reproduces the state")
            patches.append(patch)
        }
        for effect in update.timers { timers[effect.control] = effect.deadline }
    }

    @discardableResult
    mutating func intent(_ intent: String, _ args: JSONObject = [:], by session: String = "a", control: String = "q") throws(IntentError) -> RoomUpdate {
        let update = try room.apply(control: ControlID(control), intent: intent, args: args, by: SessionID(session), requestID: nil, at: now)
        record(update)
        return update
    }

    /// Moves the clock to `ms`, firing each due timer at its own deadline, in order.
    mutating func advance(toMilliseconds ms: Int) {
        let target = Instant.milliseconds(ms)
        while let (control, deadline) = timers.filter({ $0.value <= target }).min(by: { $0.value < $1.value }) {
            now = deadline
            timers[control] = nil
            let update = room.wake(control: control, at: deadline)
            if update.patch?.cause["kind"] == "tick" { tickTimes.append(Int(deadline.nanoseconds / 1_000_000)) }
            record(update)
        }
        now = target
    }

    mutating func leave(_ session: String, reason: HoldEndReason) {
        record(room.leave(SessionID(session), reason: reason))
    }

    var tickPatches: [Patch] { patches.filter { $0.cause["kind"] == "tick" } }
    var lastEnded: JSONValue? { patches.last?.cause["ended"] }
}
