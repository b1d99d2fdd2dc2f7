@testable import LiveControlsTransport
import LiveControlsRuntime
import LiveControlsEngine
import XCTest

/// Large frames leave in fragments, and large writes share each pass's budget (no sockets: the outbox on a manual
/// clock, the budget with connections that are never written to).
final class FragmentTests: XCTestCase {
    let fragment = Outbox.fragmentBytes
    func at(_ ms: Int) -> Instant { .milliseconds(ms) }
    func state(_ room: String, _ version: Int, bytes: Int) -> Frame {
        Frame.make(bytes: (0..<bytes).map { UInt8(truncatingIfNeeded: $0) }, stateOfRoom: room, stateVersion: ("e", version))
    }
    func reply(bytes: Int = 10) -> Frame { Frame.make(bytes: [UInt8](repeating: 0x20, count: bytes)) }

    func testALargeFrameLeavesInFragmentsThenWhatFollowsIt() {
        var box = Outbox(maxMessages: 10, maxBytes: 10_000_000)
        let big = state("a", 1, bytes: 5 * fragment + 100)
        _ = box.enqueue(big, now: at(0))
        _ = box.enqueue(reply(), now: at(0))
        var pieces: [(Int, Int)] = []
        while case let .fragment(frame, offset, count, more) = box.next(now: at(0)) {
            XCTAssertTrue(frame === big)
            XCTAssertTrue(more, "the reply waits behind it")
            pieces.append((offset, count))
        }
        XCTAssertEqual(pieces.map(\.0), [0, 4 * fragment], "four fragments per write")
        XCTAssertEqual(pieces.map(\.1), [4 * fragment, fragment + 100])
        XCTAssertEqual(box.queued, 0, "the reply was handed out by the call that ended the loop")
    }

    func testAFrameOfExactlyOneFragmentGoesWhole() {
        var box = Outbox(maxMessages: 10, maxBytes: 10_000_000)
        _ = box.enqueue(reply(bytes: fragment), now: at(0))
        guard case .one = box.next(now: at(0)) else { return XCTFail("a frame of fragmentBytes is not fragmented") }
    }

    func testADirectWriteLeavesFragmentsToTheWritableCallback() {
        var box = Outbox(maxMessages: 10, maxBytes: 10_000_000)
        _ = box.enqueue(state("a", 1, bytes: 5 * fragment), now: at(0))
        guard case .deferred = box.next(now: at(0), direct: true) else { return XCTFail() }
        guard case .fragment(_, 0, _, true) = box.next(now: at(0)) else { return XCTFail() }
        guard case .deferred = box.next(now: at(0), direct: true) else { return XCTFail("nor the next fragment") }
    }

    func testABatchStopsBeforeALargeFrame() {
        var box = Outbox(maxMessages: 10, maxBytes: 10_000_000)
        _ = box.enqueue(reply(), now: at(0))
        _ = box.enqueue(reply(), now: at(0))
        _ = box.enqueue(state("a", 1, bytes: fragment + 1), now: at(0))
        guard case let .write(batch, true) = box.next(now: at(0)) else { return XCTFail() }
        XCTAssertEqual(batch.count, 2)
        guard case .fragment(_, 0, _, _) = box.next(now: at(0)) else { return XCTFail() }
    }

    func testFinishedLargeFramesDoNotPileUpBehindTheHead() {
        var box = Outbox(maxMessages: 100, maxBytes: 100_000_000)
        for version in 1...3 { _ = box.enqueue(state("a", version, bytes: 2 * fragment), now: at(0)) }
        guard case .fragment(_, 0, _, true) = box.next(now: at(0)) else { return XCTFail() }
        XCTAssertEqual(box.storedFrames, 2, "the written frame is gone at once")
        _ = box.enqueue(state("a", 4, bytes: 2 * fragment), now: at(0))
        guard case .fragment = box.next(now: at(0)) else { return XCTFail() }
        XCTAssertEqual(box.storedFrames, 2)
    }

    func testFragmentsAreFramedWithTheirOpcodesAndOnlyTheLastHasFIN() {
        let frame = state("a", 1, bytes: 5 * fragment + 100)
        let batch = BatchBuffer()
        func headers(offset: Int, count: Int) -> [UInt8] {
            let (p, n) = batch.fragments(frame, offset: offset, count: count)
            var firstBytes: [UInt8] = []
            var at = 0
            while at < n {
                firstBytes.append(p[at])
                let len7 = Int(p[at + 1])
                let (header, length) = len7 == 127 ? (10, (2..<10).reduce(0) { $0 << 8 | Int(p[at + $1]) })
                    : len7 == 126 ? (4, Int(p[at + 2]) << 8 | Int(p[at + 3])) : (2, len7)
                XCTAssertEqual(p[at + header], UInt8(truncatingIfNeeded: offset + firstBytes.count * fragment - fragment), "payload bytes in order")
                at += header + length
            }
            XCTAssertEqual(at, n)
            return firstBytes
        }
        XCTAssertEqual(headers(offset: 0, count: 4 * fragment), [0x01, 0x00, 0x00, 0x00], "text without FIN, then continuations")
        XCTAssertEqual(headers(offset: 4 * fragment, count: fragment + 100), [0x00, 0x80], "the last continuation has FIN")
    }

    func testWithoutBudgetOnlySmallWritesLeave() {
        var box = Outbox(maxMessages: 100, maxBytes: 10_000_000)
        _ = box.enqueue(reply(), now: at(0))
        _ = box.enqueue(reply(bytes: Outbox.smallWriteBytes - 100), now: at(0))
        _ = box.enqueue(reply(bytes: 1_000), now: at(0))
        guard case let .write(batch, true) = box.next(now: at(0), bulk: false) else { return XCTFail() }
        XCTAssertEqual(batch.count, 2, "a batch of at most smallWriteBytes")
        _ = box.enqueue(reply(bytes: Outbox.smallWriteBytes + 1), now: at(0))
        guard case let .write(small, true) = box.next(now: at(0), bulk: false) else { return XCTFail() }
        XCTAssertEqual(small.count, 1)
        guard case .overBudget = box.next(now: at(0), bulk: false) else { return XCTFail("a large frame waits for budget") }
        XCTAssertEqual(box.queued, 1, "nothing was taken")
        guard case .one = box.next(now: at(0), bulk: true) else { return XCTFail() }
    }

    func testWithoutBudgetACrowdsFanOutWaitsAndWhatIsNotACrowdsGoes() {
        var box = Outbox(maxMessages: 100, maxBytes: 10_000_000)
        let crowd = Frame.make(bytes: [UInt8](repeating: 0x20, count: 10), stateOfRoom: "big", stateVersion: ("e", 1), toMany: true)
        _ = box.enqueue(reply(), now: at(0))
        _ = box.enqueue(state("small", 1, bytes: 10), now: at(0))
        _ = box.enqueue(crowd, now: at(0))
        _ = box.enqueue(reply(), now: at(0))
        guard case let .write(batch, true) = box.next(now: at(0), bulk: false) else { return XCTFail() }
        XCTAssertEqual(batch.count, 2, "the batch stops before the crowd's frame")
        guard case .overBudget = box.next(now: at(0), bulk: false) else { return XCTFail("the crowd's frame waits") }
        guard case let .write(rest, false) = box.next(now: at(0), bulk: true) else { return XCTFail() }
        XCTAssertTrue(rest.first === crowd, "with a turn it goes, and the reply behind it (order holds)")
        XCTAssertFalse(Frame.make(bytes: [0x20], toMany: true).toMany, "only room state is a crowd's")
    }

    func testAnOverflowKeepsTheFrameWhoseFragmentsHaveBegun() {
        var box = Outbox(maxMessages: 3, maxBytes: 10_000_000)
        let big = state("a", 1, bytes: 5 * fragment)
        _ = box.enqueue(big, now: at(0))
        guard case .fragment(_, 0, _, true) = box.next(now: at(0)) else { return XCTFail() }
        for version in 2...4 { _ = box.enqueue(state("a", version, bytes: 10), now: at(1)) }
        XCTAssertNotNil(box.resync["a"], "overflowed")
        guard case let .fragment(frame, offset, count, more) = box.next(now: at(2)) else {
            return XCTFail("the rest of the message begun must follow")
        }
        XCTAssertTrue(frame === big)
        XCTAssertEqual(offset + count, big.count)
        XCTAssertTrue(more, "the resync is due")
        guard case .resync(["a"]) = box.next(now: at(3)) else { return XCTFail() }
    }

    func testANotYetBegunLargeStateFrameIsDroppedByAnOverflow() {
        var box = Outbox(maxMessages: 2, maxBytes: 10_000_000)
        _ = box.enqueue(reply(), now: at(0))
        _ = box.enqueue(state("a", 1, bytes: 2 * fragment), now: at(0))
        _ = box.enqueue(state("a", 2, bytes: 10), now: at(0))
        guard case .one(_, true) = box.next(now: at(1)) else { return XCTFail("only the reply is left") }
        guard case .resync(["a"]) = box.next(now: at(1)) else { return XCTFail() }
    }

    func testClosingForgetsAFrameBegun() {
        var box = Outbox(maxMessages: 10, maxBytes: 10_000_000)
        _ = box.enqueue(state("a", 1, bytes: 5 * fragment), now: at(0))
        _ = box.next(now: at(0))
        XCTAssertGreaterThan(box.fragmentOffset, 0)
        box.close()
        XCTAssertEqual(box.fragmentOffset, 0)
        XCTAssertTrue(box.next(now: at(0)).isIdle)
    }

    // MARK: The pass's write budget

    func connection(_ n: Int) -> Connection {
        Connection(session: SessionID("s\(n)"), wsi: WSI(raw: OpaquePointer(bitPattern: 0x1000 + n)!), limits: Limits(), now: at(0))
    }

    /// A manual CPU clock for the budget (nanoseconds).
    final class Clock: @unchecked Sendable {
        var now = 0
    }

    /// Turns on `clock`, after a first pass at its time (as the service thread's loop does).
    func turns(_ clock: Clock) -> WriteTurns {
        var writers = WriteTurns(clock: { clock.now })
        writers.nextPass(now: clock.now, wallClock: 0) { _ in }
        return writers
    }

    func testACrowdAloneHasTheWholePass() {
        let clock = Clock()
        var writers = turns(clock)
        let a = connection(1)
        for i in 1...64 {
            clock.now = i * 500_000
            writers.wrote(by: a)
        }
        XCTAssertTrue(writers.mayWrite(connection(2)), "32 ms, but no other client is about: no budget")
        writers.noteOtherClient(now: 1_000)
        for _ in 1...32 { writers.wrote(by: a) }
        XCTAssertFalse(writers.mayWrite(connection(2)), "someone else is about: the budget applies")
        writers.nextPass(now: clock.now, wallClock: 1_000 + WriteTurns.othersNanoseconds + 1) { _ in }
        clock.now += 100_000_000
        for _ in 1...32 { writers.wrote(by: a) }
        XCTAssertTrue(writers.mayWrite(connection(2)), "500 ms later, no budget again")
    }

    func testWritesGoUntilThePassBudgetIsSpentThenWaitTheirTurnInOrder() {
        let clock = Clock()
        var writers = turns(clock)
        writers.noteOtherClient(now: 0)
        let a = connection(1), b = connection(2), c = connection(3)
        for i in 1...32 {
            XCTAssertTrue(writers.mayWrite(a))
            clock.now = i * 500_000  // 0.5 ms of CPU per write
            writers.wrote(by: a)
        }
        XCTAssertFalse(writers.mayWrite(b), "16 ms: the 10 ms budget is spent (looked at every 32nd write)")
        writers.wait(b)
        writers.wait(c)
        writers.wait(b)  // asked again before its turn: still once in line
        XCTAssertFalse(writers.isBehind(now: Transport.now().nanoseconds), "just began waiting")
        XCTAssertTrue(writers.isBehind(now: Transport.now().nanoseconds + WriteTurns.behindNanoseconds + 1))
        var armed: [Connection] = []
        writers.nextPass(now: clock.now, wallClock: 0) { armed.append($0) }
        XCTAssertEqual(armed.map(\.session), [b.session, c.session], "first come, first served")
        XCTAssertTrue(writers.mayWrite(b) && writers.mayWrite(c))
        XCTAssertTrue(writers.isEmpty)
        XCTAssertFalse(writers.isBehind(now: .max))
        XCTAssertTrue(writers.mayWrite(a), "a new pass, nobody waiting")
        writers.wrote(by: b)
        XCTAssertFalse(b.writeTurn, "a write uses the turn up")
        XCTAssertTrue(c.writeTurn)
    }

    func testAPassGivesAsManyTurnsAsFittedInTheLastPassThatRanOutOfBudget() {
        let clock = Clock()
        var writers = turns(clock)
        writers.noteOtherClient(now: 0)
        for i in 1...40 {
            clock.now = i * 400_000  // 0.4 ms per write: the 10 ms are gone at the 25th, seen at the 32nd
            writers.wrote(by: connection(0))
        }
        let waiting = (1...53).map(connection)
        for c in waiting { writers.wait(c) }
        var armed = 0
        writers.nextPass(now: clock.now, wallClock: 0) { _ in armed += 1 }
        XCTAssertEqual(armed, 32)
        XCTAssertFalse(writers.isEmpty)
        XCTAssertFalse(writers.mayWrite(connection(99)), "someone waits: no one jumps the line")
        armed = 0
        writers.nextPass(now: clock.now + 1_000_000, wallClock: 0) { _ in armed += 1 }
        XCTAssertEqual(armed, 21, "the rest (a pass that kept within its budget doubles the turns)")
    }

    func testAClosedConnectionLosesItsPlace() {
        var writers = WriteTurns()
        let a = connection(1), b = connection(2)
        writers.wait(a)
        writers.wait(b)
        a.lifecycle.socketClosed()
        var armed: [Connection] = []
        writers.nextPass(now: 0, wallClock: 0) { armed.append($0) }
        XCTAssertEqual(armed.map(\.session), [b.session])
    }
}

/// The server's frame headers (RFC 6455 §5.2): the length's encoding changes at 126 and at 65,536 bytes.
final class FrameHeaderTests: XCTestCase {
    func header(_ count: Int, first: UInt8 = 0x81) -> [UInt8] {
        var bytes = [UInt8](repeating: 0xEE, count: 16)
        let length = bytes.withUnsafeMutableBufferPointer { b in FrameHeader.write(at: b.baseAddress!, first: first, count: count) - b.baseAddress! }
        XCTAssertEqual(length, FrameHeader.length(payload: count), "length(payload:) agrees with write at \(count)")
        return Array(bytes[..<length])
    }

    func testLengthsAtEveryBoundary() {
        XCTAssertEqual(header(0), [0x81, 0])
        XCTAssertEqual(header(125), [0x81, 125])
        XCTAssertEqual(header(126), [0x81, 126, 0, 126])
        XCTAssertEqual(header(65_535), [0x81, 126, 0xFF, 0xFF])
        XCTAssertEqual(header(65_536), [0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0])
        XCTAssertEqual(header(1 << 32, first: 0x00), [0x00, 127, 0, 0, 0, 1, 0, 0, 0, 0])
        XCTAssertLessThanOrEqual(FrameHeader.maxLength, Frame.headroom, "a whole message is framed in its frame's headroom")
    }
}
