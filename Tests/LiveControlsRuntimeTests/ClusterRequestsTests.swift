@testable import LiveControlsRuntime
import LiveControlsEngine
import LiveControlsProtocol
import Synchronization
import XCTest

/// A cluster room's forwarded requests: each is answered once — by its reply, or early (`unavailable`), after which
/// its reply is recognised and dropped for `rememberAnsweredMilliseconds`.
final class ClusterRequestsTests: XCTestCase {
    final class Client: RoomSubscriber, @unchecked Sendable {
        let session: SessionID
        init(_ session: String) { self.session = SessionID(session) }
        func deliver(_ frame: Frame) -> Bool { true }
        var isGone: Bool { false }
    }

    let ann = Client("ann"), bob = Client("bob")

    func at(_ milliseconds: Int) -> Instant { Instant(nanoseconds: UInt64(milliseconds) * 1_000_000) }

    func request(_ client: Client, id: Int, deadline: Int = 5_000, isJoin: Bool = false) -> ClusterRequests.Pending {
        .init(connection: client, id: .int(id), isJoin: isJoin, isResync: false, deadline: at(deadline))
    }

    func testAReplyAnswersItsRequestOnce() {
        var requests = ClusterRequests()
        requests.add(1, request(ann, id: 10))
        guard case let .request(found) = requests.reply(1) else { return XCTFail() }
        XCTAssertEqual(found.id, .int(10))
        guard case .none = requests.reply(1) else { return XCTFail("a second reply finds nothing") }
        XCTAssertTrue(requests.isEmpty)
    }

    func testAReplyAfterAnEarlyAnswerIsDroppedUntilForgotten() {
        var requests = ClusterRequests()
        requests.add(1, request(ann, id: 10))
        requests.add(2, request(bob, id: 20))
        XCTAssertEqual(requests.answerEarly(1, now: at(6_000))?.id, .int(10))
        XCTAssertNil(requests.answerEarly(1, now: at(6_001)), "answered once")
        guard case .answeredEarly = requests.reply(1) else { return XCTFail("the late reply is dropped") }
        guard case .none = requests.reply(1) else { return XCTFail() }

        XCTAssertEqual(requests.answerEarly(now: at(7_000), where: { _ in true }).map(\.id), [.int(20)])
        requests.forgetAnswered(now: at(7_000 + ClusterRequests.rememberAnsweredMilliseconds))
        XCTAssertEqual(requests.rememberedAnswers, 1, "answered at 7 s: remembered for exactly 60 s")
        requests.forgetAnswered(now: at(7_001 + ClusterRequests.rememberAnsweredMilliseconds))
        XCTAssertEqual(requests.rememberedAnswers, 0)
        guard case .none = requests.reply(2) else { return XCTFail("a reply lost for 60 s is no longer expected") }
    }

    func testEarlyAnswersByOwnerAndDeadline() {
        var requests = ClusterRequests()
        requests.add(1, request(ann, id: 1, deadline: 1_000))
        requests.add(2, request(ann, id: 2, deadline: 3_000))
        requests.add(3, request(bob, id: 3, deadline: 3_000, isJoin: true))
        requests.add(4, request(bob, id: 4, deadline: 3_000))
        requests.sent(1, to: "n1")
        requests.sent(2, to: "n1")
        requests.sent(3, to: "n1")
        // Another owner published: what went to n1 (joins excepted) will not be answered; 4 is not sent yet.
        let moved = requests.answerEarly(now: at(500)) { $0.owner != nil && $0.owner != "n2" && !$0.isJoin }
        XCTAssertEqual(Set(moved.compactMap(\.id)), [.int(1), .int(2)])
        let expired = requests.answerEarly(now: at(3_001)) { $0.deadline < at(3_001) }
        XCTAssertEqual(Set(expired.compactMap(\.id)), [.int(3), .int(4)])
        XCTAssertTrue(requests.isEmpty)
        XCTAssertEqual(requests.rememberedAnswers, 4)
    }

    func testAGoneConnectionsRequestsAreDroppedUnanswered() {
        var requests = ClusterRequests()
        requests.add(1, request(ann, id: 1))
        requests.add(2, request(bob, id: 2))
        requests.drop(ann)
        guard case .none = requests.reply(1) else { return XCTFail() }
        XCTAssertEqual(requests.rememberedAnswers, 0, "nothing was answered")
        guard case .request = requests.reply(2) else { return XCTFail() }
    }

    /// While the owner keeps answering, a request past its deadline waits (a backlog is progress) — but not past it by
    /// another time-out (its reply was lost: before, it waited as long as the room stayed busy, and a close with it).
    func testOverdueRequestsAreAnsweredWhenTheOwnerIsSilentOrLongAfterTheirDeadline() {
        var requests = ClusterRequests()
        requests.add(1, request(ann, id: 1, deadline: 2_000))
        requests.add(2, request(bob, id: 2, deadline: 3_000))
        requests.add(3, request(bob, id: 3, deadline: 9_000))
        XCTAssertTrue(requests.answerOverdue(now: at(3_500), lastHeard: at(3_400), timeoutMilliseconds: 2_000).isEmpty,
                      "the owner answers: past their deadlines, 1 and 2 still wait")
        XCTAssertEqual(requests.answerOverdue(now: at(4_001), lastHeard: at(4_000), timeoutMilliseconds: 2_000).map(\.id), [.int(1)],
                       "1 is past its deadline by more than the time-out, whatever is heard")
        XCTAssertEqual(requests.answerOverdue(now: at(6_500), lastHeard: at(4_400), timeoutMilliseconds: 2_000).map(\.id), [.int(2)],
                       "silent for 2.1 s: every request past its deadline")
        XCTAssertTrue(requests.answerOverdue(now: at(8_000), lastHeard: at(1_000), timeoutMilliseconds: 2_000).isEmpty, "3 is not due")
    }

    /// A close waits for its connection's requests waiting when it began — answered by a reply, early, or dropped —
    /// not for other connections' requests, its join, or requests made after it.
    func testACloseBarrierSettlesOnceItsConnectionsRequestsAreAnswered() {
        var requests = ClusterRequests()
        let settled = Mutex(0)
        XCTAssertFalse(requests.whenAnswered(of: ann) { settled.withLock { $0 += 1 } }, "nothing waits: the caller runs it at once")
        requests.add(1, request(ann, id: 1))
        requests.add(2, request(ann, id: 2))
        requests.add(3, request(bob, id: 3))
        requests.add(4, request(ann, id: 4, isJoin: true))
        XCTAssertTrue(requests.whenAnswered(of: ann) { settled.withLock { $0 += 1 } })
        requests.add(5, request(ann, id: 5))
        _ = requests.reply(1)
        XCTAssertTrue(requests.takeSettled().isEmpty, "2 still waits")
        _ = requests.answerEarly(2, now: at(1_000))
        let ready = requests.takeSettled()
        XCTAssertEqual(ready.count, 1, "bob's request, ann's join and her later request are not waited for")
        ready.forEach { $0() }
        XCTAssertEqual(settled.withLock { $0 }, 1)
        XCTAssertTrue(requests.takeSettled().isEmpty, "run once")

        XCTAssertTrue(requests.whenAnswered(of: bob) {})
        requests.drop(bob)
        XCTAssertEqual(requests.takeSettled().count, 1, "dropped with its connection settles it too")
    }
}
