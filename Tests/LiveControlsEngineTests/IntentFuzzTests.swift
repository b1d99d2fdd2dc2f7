import Foundation
import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsTestSupport
import XCTest

/// Generated intents (mostly wrong) against every control of the built-in demo room: each is applied
/// or refused with a typed error, and the room's patches always reproduce its state.
///
/// CI runs 20,000 (a debug build is slow); `scripts/fuzz` runs a million in a release build
/// (`FUZZ_ITERATIONS=1000000`).
final class IntentFuzzTests: XCTestCase {
    static let iterations = Int(ProcessInfo.processInfo.environment["FUZZ_ITERATIONS"] ?? "") ?? 20_000

    static let intents = ["next", "prev", "set", "press", "release", "select", "append", "remove", "finish", "expand",
                          "reset", "goto", "jump", "move", "insert", ""]
    static let keys = ["value", "direction", "id", "section", "element", "field", "position", "step", "index", "x"]

    func randomValue(_ rng: inout SplitMix64, depth: Int = 0) -> JSONValue {
        switch Int.random(in: 0..<(depth > 1 ? 6 : 8), using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .int(Int.random(in: -5...120, using: &rng))
        case 3: return .double(Double.random(in: -10...10, using: &rng))
        case 4: return .string(["next", "prev", "", "i1", "i2", "2026-02-29", "2025-13", "abc", "0", "account", "email", "s1", "s2"].randomElement(using: &rng)!)
        case 5: return .int(Int.random(in: Int.min...Int.max, using: &rng))
        case 6: return .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in randomValue(&rng, depth: depth + 1) })
        default:
            var o = JSONObject()
            for _ in 0..<Int.random(in: 0...3, using: &rng) { o[Self.keys.randomElement(using: &rng)!] = randomValue(&rng, depth: depth + 1) }
            return .object(o)
        }
    }

    func testRandomIntentsAreAppliedOrRefusedAndPatchesStayExact() throws {
        let config = ServerConfig.builtin(today: SeedHarness.today)
        let template = try XCTUnwrap(config.templates["demo"])
        var room = Room(name: "fuzz", template: template, epoch: "e", historyLimit: 8)
        let sessions = (0..<3).map { SessionID("s\($0)") }
        for s in sessions { _ = room.join(s, name: nil, roles: ["admin"]) }
        var document = room.render()
        let controls = room.controlIDs.map(\.rawValue) + ["nope"]
        var rng = SplitMix64(state: 42)
        var now = Instant(nanoseconds: 1_000_000_000)
        var applied = 0, refused = 0
        for i in 0..<Self.iterations {
            var args = JSONObject()
            for _ in 0..<Int.random(in: 0...3, using: &rng) { args[Self.keys.randomElement(using: &rng)!] = randomValue(&rng) }
            let control = ControlID(controls.randomElement(using: &rng)!)
            now = now.adding(milliseconds: Int.random(in: 0...120, using: &rng))
            var update: RoomUpdate
            do {
                update = try room.apply(control: control, intent: Self.intents.randomElement(using: &rng)!, args: args,
                                        by: sessions.randomElement(using: &rng)!, requestID: .int(i), at: now)
                applied += 1
            } catch {
                XCTAssertFalse(error.message.isEmpty)
                refused += 1
                continue
            }
            // Fire whatever timers are due, as the server would.
            var patches: [Patch] = update.patch.map { [$0] } ?? []
            for id in room.controlIDs {
                while let deadline = room.control(id)?.wakeDeadline, deadline <= now {
                    update = room.wake(control: id, at: deadline)
                    if let p = update.patch { patches.append(p) }
                    if update.patch == nil { break }
                }
            }
            for patch in patches {
                XCTAssertEqual(patch.version, (patches.first!.version) + patches.firstIndex(of: patch)!)
                document = try document.applying(patch.ops)
            }
            if i % 997 == 0 { XCTAssertEqual(document, room.render(), "patches diverged at intent \(i)") }
        }
        XCTAssertEqual(document, room.render())
        XCTAssertGreaterThan(applied, Self.iterations / 1_000)
        XCTAssertGreaterThan(refused, Self.iterations / 10)
    }
}

extension IntentFuzzTests {
    /// Random lists of intents applied as the server (the API's all-or-nothing lists): each list is either one patch
    /// that reproduces the new state, or refused leaving the room exactly as it was, its version unchanged.
    func testRandomServerIntentListsAreAllOrNothing() throws {
        let config = ServerConfig.builtin(today: SeedHarness.today)
        var room = Room(name: "fuzz", template: try XCTUnwrap(config.templates["demo"]), epoch: "e", historyLimit: 8)
        _ = room.join(SessionID("s0"), name: nil, roles: ["admin"])
        var document = room.render()
        let controls = room.controlIDs.map(\.rawValue) + ["nope"]
        var rng = SplitMix64(state: 7)
        var now = Instant(nanoseconds: 1_000_000_000)
        var applied = 0, refused = 0
        for _ in 0..<(Self.iterations / 4) {
            let intents = (0..<Int.random(in: 1...4, using: &rng)).map { _ -> ServerIntent in
                var args = JSONObject()
                for _ in 0..<Int.random(in: 0...3, using: &rng) { args[Self.keys.randomElement(using: &rng)!] = randomValue(&rng) }
                return ServerIntent(control: ControlID(controls.randomElement(using: &rng)!), intent: Self.intents.randomElement(using: &rng)!,
                                    args: args)
            }
            now = now.adding(milliseconds: Int.random(in: 0...50, using: &rng))
            let before = (state: room.render(), version: room.version)
            let update: RoomUpdate
            do throws(ServerIntentError) {
                update = try room.applyAsServer(intents, at: now)
            } catch {
                refused += 1
                XCTAssertTrue(intents.indices.contains(error.index))
                XCTAssertEqual(room.render(), before.state, "a refused list changed the room")
                XCTAssertEqual(room.version, before.version)
                continue
            }
            applied += 1
            if let patch = update.patch {
                XCTAssertEqual(patch.version, before.version + 1, "one version for the whole list")
                document = try document.applying(patch.ops)
            } else {
                XCTAssertEqual(room.version, before.version)
            }
            XCTAssertEqual(document, room.render())
            // Holds the server started end by their lease: wake what is due, as the server would.
            for id in room.controlIDs {
                while let deadline = room.control(id)?.wakeDeadline, deadline <= now {
                    guard let patch = room.wake(control: id, at: deadline).patch else { break }
                    document = try document.applying(patch.ops)
                }
            }
        }
        XCTAssertEqual(document, room.render())
        XCTAssertGreaterThan(applied, 10)
        XCTAssertGreaterThan(refused, 10)
    }
}
