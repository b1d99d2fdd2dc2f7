import Foundation
import Observation
import XCTest
@testable import LiveControlsKit

/// The room model with no server: snapshots and patches fed in as the server would send them.
@MainActor
final class RoomModelTests: XCTestCase {
    private let client = LiveControlsClient(url: URL(string: "ws://127.0.0.1:9/ws")!)

    private func message(_ text: String) throws -> Incoming {
        let object = try XCTUnwrap(try JSONParser.parse(text).objectValue)
        return Incoming(type: object["type"]!.stringValue!, object: object)
    }

    private func joinedRoom() throws -> Room {
        let room = Room(name: "demo", client: client)
        let snapshot = try message(#"""
            {"type": "snapshot", "room": "demo", "epoch": "e1", "version": 4, "state": {"controls": {
              "quantity": {"kind": "stepper", "label": "Quantity", "value": 1, "min": 0, "max": 99, "step": 1, "wrap": false,
                           "canNext": true, "canPrev": true, "holding": null, "claims": {}},
              "person": {"kind": "list", "label": "Person", "selected": "i1", "selectedLabel": "Joe: 23", "value": {"name": "Joe"},
                         "index": 0, "count": 2, "wrap": false, "selectionPolicy": "fail", "canNext": true, "canPrev": false,
                         "holding": {"session": "s2", "direction": "next"},
                         "sections": [{"id": "s1", "header": null, "items": [{"id": "i1", "label": "Joe: 23", "value": {"name": "Joe"}},
                                                                            {"id": "i2", "label": "Tim: 20", "value": {"name": "Tim"}}]}],
                         "claims": {"i2": {"session": "s2", "exclusive": true, "leaseMs": 5000}}},
              "onboarding": {"kind": "wizard", "label": "Onboarding", "phase": "warping", "index": 1, "step": "account",
                             "title": "Your account", "count": 2, "cycle": false,
                             "steps": [{"id": "welcome", "title": "Welcome", "guard": null},
                                       {"id": "account", "title": "Your account", "guard": {"form": "signup", "element": "account"}}],
                             "canNext": false, "canPrev": true,
                             "blocked": {"code": "guard_failed", "message": "account is not valid", "form": "signup", "element": "account"},
                             "permissions": {"next": ["host"]}},
              "signup": {"kind": "form", "label": "Sign up", "completed": false, "current": "account", "cta": "Continue", "canFinish": false,
                         "elements": [{"id": "account", "title": "Account", "status": "expanded", "valid": false, "cta": "Continue",
                                       "summary": "—", "fields": [{"id": "email", "label": "Email", "type": "text", "value": null,
                                                                    "error": "required", "required": true, "maxLength": 254}]}],
                         "data": null},
              "month": {"kind": "pager", "label": "Month", "domain": "month", "position": "2024-02", "min": null, "max": null,
                        "step": 1, "canNext": true, "canPrev": true, "holding": null, "radius": 1,
                        "window": ["2024-01", "2024-02", "2024-03"], "generation": 3},
              "dial": {"kind": "dial", "label": "Dial", "angle": 42}},
             "presence": {"s1": {"name": "Ann", "roles": ["editor", "host"], "holding": [], "editing": [], "data": {"focus": "x"},
                                 "mood": "new field"},
                          "s2": {"name": null, "roles": ["admin"], "holding": ["person"],
                                 "editing": [{"control": "person", "target": "i2"}], "data": {}}}}}
            """#)
        XCTAssertTrue(room.receive(snapshot))
        return room
    }

    private func patch(_ version: Int, _ ops: String, epoch: String = "e1") throws -> Incoming {
        try message(#"{"type": "patch", "room": "demo", "epoch": "\#(epoch)", "version": \#(version), "ops": \#(ops), "cause": {"kind": "intent"}}"#)
    }

    func testTypedViewsReadTheSeedsVocabulary() async throws {
        let room = try joinedRoom()
        XCTAssertEqual(room.version, 4)
        XCTAssertEqual(room.controlIDs, ["quantity", "person", "onboarding", "signup", "month", "dial"])
        let stepper = try XCTUnwrap(room.stepper("quantity"))
        XCTAssertEqual([stepper.value, stepper.min, stepper.max, stepper.step], [1, 0, 99, 1])
        XCTAssertTrue(stepper.canNext)
        XCTAssertNil(stepper.holding)
        let list = try XCTUnwrap(room.list("person"))
        XCTAssertEqual(list.selected, "i1")
        XCTAssertEqual(list.selectedLabel, "Joe: 23")
        XCTAssertEqual(list.items.map(\.label), ["Joe: 23", "Tim: 20"])
        XCTAssertEqual(list.sections.first?.header, nil)
        XCTAssertEqual(list.holding, HoldInfo(session: "s2", direction: .next))
        XCTAssertEqual(list.control.claims["i2"], ClaimInfo(session: "s2", exclusive: true, leaseMs: 5000))
        let wizard = try XCTUnwrap(room.wizard("onboarding"))
        XCTAssertEqual(wizard.phase, .other("warping"), "a phase newer than the SDK is kept, not a crash")
        XCTAssertEqual(wizard.steps.last?.guardForm, "signup")
        XCTAssertEqual(wizard.blocked?.code, "guard_failed")
        XCTAssertFalse(wizard.canNext)
        XCTAssertTrue(wizard.control.allows("next", roles: ["editor", "host"]))
        XCTAssertFalse(wizard.control.allows("next", roles: ["editor"]))
        XCTAssertTrue(wizard.control.allows("prev", roles: ["editor"]))
        XCTAssertFalse(wizard.control.allows("prev", roles: ["viewer"]))
        let form = try XCTUnwrap(room.form("signup"))
        XCTAssertEqual(form.current, "account")
        XCTAssertEqual(form.element("account")?.fields.first?.error, "required")
        XCTAssertEqual(form.element("account")?.fields.first?.json["maxLength"], 254)
        XCTAssertNil(form.data)
        let pager = try XCTUnwrap(room.pager("month"))
        XCTAssertEqual(pager.position, "2024-02")
        XCTAssertEqual(pager.window.count, 3)
        XCTAssertEqual(pager.generation, 3)
        // A kind newer than the SDK: kept as JSON, reachable, never a typed view.
        XCTAssertEqual(room.control("dial")?.json["angle"], 42)
        XCTAssertNil(room.stepper("dial"))
        XCTAssertNil(room.stepper("person"), "a typed view of another kind is nil")
        XCTAssertEqual(room.members.map(\.id), ["s1", "s2"])
        XCTAssertEqual(room.members[0].roles, ["editor", "host"])
        XCTAssertEqual(room.members[0].json["mood"], "new field", "fields newer than the SDK are kept")
        XCTAssertEqual(room.members[1].editing, [Member.Editing(control: "person", target: "i2")])
    }

    func testPatchesApplyInOrderAndTouchOnlyTheirControls() async throws {
        let room = try joinedRoom()
        let quantity = try XCTUnwrap(room.control("quantity")), person = try XCTUnwrap(room.control("person"))
        let changed = Changed()
        withObservationTracking { _ = quantity.json } onChange: { MainActor.assumeIsolated { _ = changed.controls.insert("quantity") } }
        withObservationTracking { _ = person.json } onChange: { MainActor.assumeIsolated { _ = changed.controls.insert("person") } }
        XCTAssertTrue(room.receive(try patch(5, #"[{"op": "replace", "path": "/controls/quantity/value", "value": 2}]"#)))
        XCTAssertEqual(room.version, 5)
        XCTAssertEqual(room.stepper("quantity")?.value, 2)
        XCTAssertTrue(changed.controls.contains("quantity"))
        XCTAssertFalse(changed.controls.contains("person"), "a view of the list is not redrawn for the stepper's change")
        XCTAssertTrue(room.receive(try patch(6, #"""
            [{"op": "add", "path": "/controls/person/sections/0/items/1", "value": {"id": "i3", "label": "Zed", "value": "Zed"}},
             {"op": "replace", "path": "/controls/person/count", "value": 3}]
            """#)))
        XCTAssertEqual(room.list("person")?.items.map(\.id), ["i1", "i3", "i2"])
        XCTAssertTrue(changed.controls.contains("person"))
        XCTAssertTrue(room.receive(try patch(7, #"[{"op": "remove", "path": "/presence/s2"}]"#)))
        XCTAssertEqual(room.members.map(\.id), ["s1"])
        XCTAssertTrue(room.receive(try patch(8, #"[{"op": "add", "path": "/controls/knob", "value": {"kind": "knob"}}]"#)))
        XCTAssertEqual(room.controlIDs.last, "knob")
    }

    func testAGapAnotherEpochOrAPatchThatDoesNotApplyAsksForASnapshot() async throws {
        let room = try joinedRoom()
        let state = room.state
        XCTAssertFalse(room.receive(try patch(6, #"[{"op": "replace", "path": "/controls/quantity/value", "value": 2}]"#)))
        XCTAssertFalse(room.receive(try patch(5, #"[{"op": "replace", "path": "/controls/quantity/value", "value": 2}]"#, epoch: "e2")))
        XCTAssertFalse(room.receive(try patch(5, #"[{"op": "remove", "path": "/controls/nothing/here"}]"#)))
        XCTAssertFalse(room.receive(try patch(5, #"[{"op": "move", "from": "/a", "path": "/b"}]"#)))
        XCTAssertEqual(room.version, 4)
        XCTAssertEqual(room.state, state, "nothing of a refused patch is applied")
        // While the fresh snapshot is on its way, further patches are no reason to ask again.
        room.status = .resyncing
        XCTAssertTrue(room.receive(try patch(9, #"[]"#)))
        XCTAssertEqual(room.version, 4)
    }

    func testResumedMustContinueFromTheVersionHeld() async throws {
        let room = try joinedRoom()
        XCTAssertFalse(room.receive(try message(#"{"type": "resumed", "room": "demo", "epoch": "e1", "from": 3, "version": 9}"#)))
        XCTAssertTrue(room.receive(try message(#"{"type": "resumed", "room": "demo", "epoch": "e1", "from": 4, "version": 9}"#)))
    }

    func testClosingTheInboxOurselvesDropsWhatIsBufferedAndWakesTheReader() async throws {
        let inbox = Inbox(limit: 4)
        await inbox.push("a")
        await inbox.finish(nil)
        let after = try await inbox.pop()
        XCTAssertNil(after, "closed by us: nothing more is handed out")
        let other = Inbox(limit: 4)
        let reader = Task { try await other.pop() }
        await Task.yield()
        await other.finish(nil)
        let woken = try await reader.value
        XCTAssertNil(woken)
    }

    func testTheInboxHoldsTheNetworkBackWhenFull() async throws {
        let inbox = Inbox(limit: 2)
        await inbox.push("a")
        let third = Task {
            await inbox.push("b")  // fills it: waits until one is read
            await inbox.push("c")
        }
        let first = try await inbox.pop()
        let second = try await inbox.pop()
        let last = try await inbox.pop()
        await third.value
        XCTAssertEqual([first, second, last], ["a", "b", "c"])
        let waiting = Task { try await inbox.pop() }  // a reader waiting when the server closes
        await inbox.push("d")
        _ = try await waiting.value
        await inbox.push("e")  // still here after the close: read first
        await inbox.finish(WebSocketClosed(code: 1001, reason: ""))
        let e = try await inbox.pop()
        XCTAssertEqual(e, "e")
        do {
            _ = try await inbox.pop()
            XCTFail("an ended inbox returned a message")
        } catch let closed as WebSocketClosed {
            XCTAssertEqual(closed.code, 1001)
        }
    }
}

@MainActor
private final class Changed {
    var controls: Set<String> = []
}
