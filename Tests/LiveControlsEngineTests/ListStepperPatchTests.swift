import LiveControlsProtocol
import XCTest

@testable import LiveControlsEngine

/// A list's changes as patches: each applies to the room's render before it and gives the render after, and sends
/// only what changed.
final class ListStepperPatchTests: XCTestCase {
    typealias H = SeedHarness

    func demoSections() throws -> ListStepper { try H.demoList() }

    func testRoomPatchesMatchFreshRenders() throws {
        var room = H.room([("person", try demoSections())])
        try H.roomApply(&room, "person", "next")
        try H.roomApply(&room, "person", "append", ["value": ["name": "Ann"], "section": "s1"])
        try H.roomApply(&room, "person", "remove", ["id": "i3"])
        try H.roomApply(&room, "person", "insert", ["value": ["name": "Bo"], "index": 0])
        try H.roomApply(&room, "person", "move", ["id": "i2", "index": 3])
        try H.roomApply(&room, "person", "move", ["id": "i2", "index": 0, "section": "s1"])
        try H.roomApply(&room, "person", "edit", ["id": "i1", "value": ["name": "Jo", "age": 24]])
        let patch = try H.roomApply(&room, "person", "select", ["id": "i4"], by: H.bob)
        XCTAssertEqual(patch?.cause["session"], "bob")
        XCTAssertNil(try H.roomApply(&room, "person", "select", ["id": "i4"]), "selecting the selected item changes nothing")
        XCTAssertEqual(room.render()["controls"]?["person"]?["selected"], "i4")
    }

    func testItemsKeepTheirLabelsAndAChangeSendsOnlyWhatItChanged() throws {
        var room = H.room([("person", try demoSections())])
        // An edit makes a new label (items keep theirs from when the list took them).
        let edited = try H.roomApply(&room, "person", "edit", ["id": "i2", "value": ["name": "Tom", "age": 21]])
        XCTAssertEqual(edited?.ops.map(\.path.description).sorted(), [
            "/controls/person/sections/0/items/1/label", "/controls/person/sections/0/items/1/value/age",
            "/controls/person/sections/0/items/1/value/name"])
        XCTAssertEqual(room.render()["controls"]?["person"]?["sections"]?.arrayValue?[0]["items"]?.arrayValue?[1]["label"], "Tom: 21")
        // A remove in the middle is one `remove`; nothing else of the list is sent again.
        let removed = try H.roomApply(&room, "person", "remove", ["id": "i3"])
        XCTAssertEqual(removed?.ops.map(\.json), [["op": "replace", "path": "/controls/person/count", "value": 3],
                                                  ["op": "remove", "path": "/controls/person/sections/1/items/0"]])
        // A display template set later relabels every item.
        var list = try demoSections()
        list.display = try DisplayTemplate("{name}")
        XCTAssertEqual(list.items.map(\.label), ["Joe", "Tim", "Joe", "James"])
    }

    func testRemovingTheSelectedItemUnderAppendIsOneRemoveAndOneAdd() throws {
        // Found by an audit: the list keeps its length (one out, its value back at the end as a new item), and the
        // patch replaced every item it shifted — 150 ops for 50 items.
        let list = try ListStepper(config: H.node(["kind": "list", "values": .array((0..<50).map { .int($0) }), "selectionPolicy": "append"]),
                                   id: ControlID("numbers"))
        var room = H.room([("numbers", list)])
        let patch = try XCTUnwrap(try H.roomApply(&room, "numbers", "remove", ["id": "i1"]))
        let items = patch.ops.filter { $0.path.description.hasPrefix("/controls/numbers/sections/0/items") }
        XCTAssertEqual(items.map(\.json), [["op": "remove", "path": "/controls/numbers/sections/0/items/0"],
                                          ["op": "add", "path": "/controls/numbers/sections/0/items/49",
                                           "value": ["id": "i51", "label": "0", "value": 0]]])
    }
}
