import LiveControlsEngine
import LiveControlsProtocol
import XCTest

/// `ControlKinds.all` is the one list of kinds: the config reader, the store and the changed-config rule all follow it.
final class ControlKindsTests: XCTestCase {
    let config = ServerConfig.builtin(today: CivilDate(year: 2026, month: 11, day: 28))

    func testEveryKindIsReadStoredAndRestoredThroughTheList() throws {
        let kinds = ControlKinds.all.map { $0.kind }
        XCTAssertEqual(Set(kinds).count, kinds.count, "each kind once")
        XCTAssertEqual(Set(ControlCoding.storableKinds.keys), Set(kinds), "every kind survives a restart")
        var seen: Set<String> = []
        for template in config.templates.values {
            for (_, control) in template.controls {
                let kind = ControlCoding.kind(of: control)
                seen.insert(kind)
                let state = try XCTUnwrap(ControlCoding.storedState(of: control)?.objectValue, kind)
                let type = try XCTUnwrap(ControlCoding.storableKinds[kind])
                XCTAssertTrue(type.stateKeys.isSubset(of: Set(state.keys).union(["hold", "generation", "confirming", "anchor"])), "\(kind): state keys are stored keys (hold, generation, confirming, anchor only while set)")
                let restored = try ControlCoding.restore(kind: kind, storedState: .object(state))
                XCTAssertEqual(JSONWriter.string(restored.render()), JSONWriter.string(control.render()), kind)
            }
        }
        XCTAssertEqual(seen, Set(kinds), "the built-in templates use every kind")
    }

    func testAnUnknownKindIsRefusedNamingTheKnownOnes() {
        XCTAssertThrowsError(try ServerConfig(json: ["templates": ["t": ["controls": ["x": ["kind": "dial"]]]]], file: "c.json",
                                              today: CivilDate(year: 2026, month: 11, day: 28))) { error in
            let known = ControlKinds.all.map { $0.kind }.joined(separator: ", ")
            XCTAssertTrue(known.hasPrefix("stepper, list, wizard, form, pager, toggle, timer, range"), known)
            XCTAssertTrue("\(error)".contains("unknown control kind \"dial\" (known: \(known))"), "\(error)")
        }
    }
}
