@testable import LiveControlsEngine
import XCTest

/// Members in join order, with leaves that cost O(1) amortized.
final class JoinOrderTests: XCTestCase {
    private func sessions(_ order: JoinOrder) -> [String] { order.map(\.rawValue) }

    func testLeavesKeepTheOrderOfTheOthers() {
        var order = JoinOrder()
        for name in ["a", "b", "c", "d"] { order.append(SessionID(name)) }
        order.remove(SessionID("b"))
        XCTAssertEqual(sessions(order), ["a", "c", "d"])
        XCTAssertEqual(order.count, 3)
        order.remove(SessionID("a"))
        order.remove(SessionID("d"))
        XCTAssertEqual(sessions(order), ["c"])
        order.remove(SessionID("c"))
        XCTAssertTrue(order.isEmpty)
        XCTAssertEqual(sessions(order), [])
    }

    func testASessionThatJoinsAgainIsListedOnceAtTheEnd() {
        var order = JoinOrder()
        for name in ["a", "b", "c"] { order.append(SessionID(name)) }
        order.remove(SessionID("a"))
        order.append(SessionID("a"))
        XCTAssertEqual(sessions(order), ["b", "c", "a"])
        XCTAssertEqual(order.count, 3)
    }

    func testACrowdLeavingInAnyOrderLeavesTheRestInJoinOrder() {
        var order = JoinOrder()
        let all = (0..<1_000).map { SessionID("s\($0)") }
        for s in all { order.append(s) }
        // Every third leaves, from the last to the first (compactions happen along the way).
        let leaving = Set(stride(from: 999, through: 0, by: -3).map { all[$0] })
        for s in all.reversed() where leaving.contains(s) { order.remove(s) }
        XCTAssertEqual(Array(order), all.filter { !leaving.contains($0) })
        XCTAssertEqual(order.count, all.count - leaving.count)
        for s in all where !leaving.contains(s) { order.remove(s) }
        XCTAssertTrue(order.isEmpty)
        order.append(all[5])
        XCTAssertEqual(Array(order), [all[5]])
    }

    func testJoiningAgainAfterACompactionCountsOnce() {
        var order = JoinOrder()
        let all = (0..<40).map { SessionID("s\($0)") }
        for s in all { order.append(s) }
        for s in all.prefix(20) { order.remove(s) }  // half left: compacted
        XCTAssertEqual(order.count, 20)
        order.append(all[0])
        order.remove(all[30])
        order.append(all[30])
        XCTAssertEqual(Array(order), Array(all[20..<30]) + Array(all[31..<40]) + [all[0], all[30]])
        XCTAssertEqual(order.count, 21)
    }
}
