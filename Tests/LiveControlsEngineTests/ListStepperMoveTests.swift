import LiveControlsProtocol
import XCTest

@testable import LiveControlsEngine

/// A list's `move` with a `section`: every place of that section, the end of one that is not the last included.
final class ListStepperMoveTests: XCTestCase {
    typealias H = SeedHarness

    func testMoveWithASectionReachesEveryPlaceOfThatSection() throws {
        var list = ListStepper(label: "L", sections: [(id: "a", header: nil, values: ["x", "y"]), (id: "b", header: nil, values: ["z"]),
                                                      (id: "c", header: nil, values: [])], selectedIndex: 0)
        // The end of a section that is not the last: a flat index would put the item into the next section.
        try H.apply(&list, "move", ["id": "i1", "index": 1, "section": "a"])
        XCTAssertEqual(list.sections.map { $0.items.map(\.id) }, [["i2", "i1"], ["i3"], []])
        try H.apply(&list, "move", ["id": "i2", "index": 1, "section": "b"])
        XCTAssertEqual(list.sections.map { $0.items.map(\.id) }, [["i1"], ["i3", "i2"], []])
        try H.apply(&list, "move", ["id": "i3", "index": 0, "section": "c"])
        XCTAssertEqual(list.sections.map { $0.items.map(\.id) }, [["i1"], ["i2"], ["i3"]], "into an empty section")
        try H.apply(&list, "move", ["id": "i1", "index": 0, "section": "a"])
        XCTAssertEqual(list.sections.map { $0.items.map(\.id) }, [["i1"], ["i2"], ["i3"]], "to where it is: nothing moves")
        XCTAssertEqual(list.selected, "i1")
        H.refuse(.outOfRange, &list, "move", ["id": "i1", "index": 1, "section": "a"])  // a holds only i1: 0…0
        H.refuse(.outOfRange, &list, "move", ["id": "i1", "index": 2, "section": "b"])  // b holds i2: 0…1
        H.refuse(.outOfRange, &list, "move", ["id": "i1", "index": -1, "section": "b"])
        H.refuse(.notFound, &list, "move", ["id": "i1", "index": 0, "section": "zz"])
        H.refuse(.invalidArgs, &list, "move", ["id": "i1", "index": 0, "section": 3])
        XCTAssertEqual(list.sections.map { $0.items.map(\.id) }, [["i1"], ["i2"], ["i3"]], "a refused move changes nothing")
    }
}
