import LiveControlsEngine
import LiveControlsRuntime

/// The bounded queue of frames waiting for one subscriber, as a value: callers pass `now` in and get told
/// what to do. The transport's connection keeps one behind a mutex (rooms append from their queues, its
/// service thread takes frames out).
///
/// Past `maxMessages`, or `maxBytes` waiting behind the frame written next, every queued room-state frame is dropped
/// (replies are kept) and those
/// rooms are marked for a fresh snapshot, which the subscriber asks for once it has drained: never a gap,
/// never unbounded memory. A subscriber that overflowed and then takes nothing for the slow-consumer
/// timeout is stuck (`isStuck`).
///
/// A frame larger than `fragmentBytes` goes out as a fragmented message (RFC 6455 §5.4), one fragment per write
/// (`Next.fragment`), so one large snapshot is never one huge write: the service thread spreads such writes over its
/// passes (`LiveControlsServer+WriteBudget.swift`). Once its first fragment is out, the frame stays at the head until
/// its last one is (an overflow keeps it: dropping it would leave the client's message unfinished).
///
/// `now` is an autoclosure wherever it is needed only on a rare path (an overflow, a write while behind), so
/// the usual enqueue and write read no clock.
struct Outbox {
    let maxMessages: Int
    let maxBytes: Int

    /// Frames larger than this are written as fragments of this size, up to `fragmentsPerWrite` in one write.
    static let fragmentBytes = 64 * 1024
    static let fragmentsPerWrite = 4
    /// Without a share of the pass's write budget (`next(bulk: false)`), only this much is written at once, and no
    /// frame of a crowd's fan-out (`Frame.toMany`).
    static let smallWriteBytes = 16 * 1024

    private var frames: [Frame] = []
    private var head = 0
    /// Bytes of `frames[head]` already written as fragments (0: none).
    private(set) var fragmentOffset = 0
    private(set) var bytes = 0
    /// A wake-up for the subscriber is pending (avoids waking it twice).
    private(set) var writeScheduled = false
    /// Rooms whose state frames were dropped: their state frames are dropped too until a fresh snapshot is
    /// queued. `true` once the snapshot has been asked of the room.
    private(set) var resync: [String: Bool] = [:]
    /// When the outbox first overflowed, while it has not caught up.
    private(set) var overflowedAt: Instant? = nil
    /// When a frame was last taken out while behind: a slow consumer that still makes progress is not stuck.
    private var lastWrite: Instant? = nil
    /// The subscriber is gone: everything is dropped.
    private(set) var isClosed = false
    /// A close is on its way: what is queued still goes out, nothing new is taken (so a busy room cannot put
    /// the close off for ever).
    private(set) var isSealed = false

    init(maxMessages: Int, maxBytes: Int) {
        self.maxMessages = maxMessages
        self.maxBytes = maxBytes
    }

    /// Frames waiting.
    var queued: Int { frames.count - head }
    /// Frames held, written ones not yet dropped included (for tests).
    var storedFrames: Int { frames.count }

    /// What waits next could not leave without a write turn once the pass's budget is spent (`next(bulk: false)`).
    var nextNeedsTurn: Bool {
        head < frames.count && (fragmentOffset > 0 || frames[head].toMany || frames[head].count > Self.smallWriteBytes)
    }

    /// What an enqueue asks of the caller.
    enum Enqueued: Equatable {
        /// Queued; the subscriber must be woken (nothing was pending).
        case wake
        /// Queued; a wake-up is already pending.
        case queued
        /// Not queued: the subscriber is gone, or the frame is state of a room being resynced.
        case dropped
    }

    /// Appends a frame; an overflow drops state frames and marks their rooms for a fresh snapshot.
    mutating func enqueue(_ frame: Frame, now: @autoclosure () -> Instant) -> Enqueued {
        guard !isClosed, !isSealed else { return .dropped }
        if !resync.isEmpty, let room = frame.stateOfRoom ?? frame.ephemeralOfRoom, resync[room] != nil { return .dropped }
        frames.append(frame)
        bytes += frame.count
        // The frame written next does not count against `maxBytes`, only what waits behind it: a snapshot larger than
        // the limit (a room holding more than the outbox) still goes out, alone, and later frames wait their turn.
        if queued > maxMessages || bytes - frames[head].count > maxBytes { overflow(now: now()) }
        return schedule()
    }

    /// Queues the fresh snapshot of a room being resynced, ending its resync (dropped if it was not).
    mutating func enqueueResync(_ frame: Frame, room: String) -> Enqueued {
        guard !isClosed, !isSealed, resync.removeValue(forKey: room) != nil else { return .dropped }
        frames.append(frame)
        bytes += frame.count
        return schedule()
    }

    /// The subscriber missed state of `room` (cluster: a gap, a new epoch): drop its state frames until a
    /// fresh snapshot is queued.
    mutating func requireResync(room: String) -> Enqueued {
        guard !isClosed, resync[room] == nil else { return .dropped }
        resync[room] = false
        return schedule()
    }

    /// Forgets a pending resync (the room was left).
    mutating func cancelResync(room: String) {
        resync.removeValue(forKey: room)
    }

    /// A close was requested (and the rooms have done what was queued before it): keep what is queued, take nothing more.
    mutating func seal() {
        isSealed = true
    }

    /// The subscriber is gone: drop what is queued and refuse more.
    mutating func close() {
        isClosed = true
        frames.removeAll()
        head = 0
        bytes = 0
        fragmentOffset = 0
    }

    private mutating func overflow(now: Instant) {
        var kept: [Frame] = []
        for (index, frame) in frames[head...].enumerated() {
            if index == 0 && fragmentOffset > 0 {
                kept.append(frame)  // partly written: the rest must follow
            } else if let room = frame.stateOfRoom {
                resync[room] = resync[room] ?? false
            } else if frame.ephemeralOfRoom != nil {
                continue  // a broadcast: gone, as it would be for a member who joined a moment later
            } else {
                kept.append(frame)
            }
        }
        frames = kept
        head = 0
        bytes = kept.reduce(0) { $0 + $1.count }
        if overflowedAt == nil { overflowedAt = now }
    }

    private mutating func schedule() -> Enqueued {
        if writeScheduled { return .queued }
        writeScheduled = true
        return .wake
    }

    /// What to write now.
    enum Next {
        /// The one frame to write (the usual case: nothing else was queued), and whether more wait.
        case one(Frame, more: Bool)
        /// Frames to write now, in order (a backlog built up), and whether more wait.
        case write(ArraySlice<Frame>, more: Bool)
        /// Caught up, but these rooms need a fresh snapshot: ask them for one.
        case resync([String])
        /// Nothing to do.
        case idle
        /// Only for a direct write: a resync is due, or a frame that goes out in fragments, which needs the writable
        /// callback (nothing was taken).
        case deferred
        /// The next fragments of a large frame: `count` bytes from `offset`, to be cut into fragments of
        /// `fragmentBytes`; `more`: whether anything waits after them.
        case fragment(Frame, offset: Int, count: Int, more: Bool)
        /// Only without `bulk`: what waits is larger than a small write; nothing was taken.
        case overBudget
    }

    /// Takes up to `maxFrames` queued frames of at most `maxBytes` together (always at least one), so a backlog
    /// leaves in few writes; a frame larger than `fragmentBytes` leaves one fragment at a time. With `direct`, the
    /// caller writes outside its writable callback and can only write whole frames: a due resync or a fragment answers
    /// `.deferred` and is left for that callback. Without `bulk` (the pass's write budget is spent), only a write of
    /// at most `smallWriteBytes` without a crowd's frame (`Frame.toMany`) is handed out, `.overBudget` instead of
    /// anything else.
    mutating func next(now: @autoclosure () -> Instant, direct: Bool = false, bulk: Bool = true, maxFrames: Int = 64,
                       maxBytes batchBytes: Int = 128 * 1024) -> Next {
        if direct && head == frames.count && resync.contains(where: { !$0.value }) { return .deferred }
        guard head < frames.count else {
            frames.removeAll(keepingCapacity: true)
            head = 0
            bytes = 0
            writeScheduled = false
            let toAsk = resync.filter { !$0.value }.map(\.key)
            if resync.isEmpty { overflowedAt = nil }
            guard !toAsk.isEmpty else { return .idle }
            for room in toAsk { resync[room] = true }
            return .resync(toAsk)
        }
        // The head frame is read once here (each read of a shared frame may cost its reference count a round trip).
        let frame = frames[head]
        if fragmentOffset > 0 || frame.count > Self.fragmentBytes {
            if direct { return .deferred }
            if !bulk { return .overBudget }
            return nextFragment(frame, now: now())
        }
        if !bulk && (frame.toMany || frame.count > Self.smallWriteBytes) { return .overBudget }
        if head + 1 == frames.count {
            // The usual case: exactly one frame waits. No slice, no batch.
            if overflowedAt != nil { lastWrite = now() }
            if resync.isEmpty {
                drained()
                return .one(frame, more: false)
            }
            head += 1
            bytes -= frame.count
            return .one(frame, more: true)
        }
        let batchBytes = bulk ? batchBytes : Self.smallWriteBytes
        let first = head
        var taken = frame.count
        head += 1
        while head < frames.count, head - first < maxFrames {
            let count = frames[head].count
            guard taken + count <= batchBytes, count <= Self.fragmentBytes, bulk || !frames[head].toMany else { break }
            taken += count
            head += 1
        }
        let batch = frames[first..<head]
        if overflowedAt != nil { lastWrite = now() }
        bytes -= taken
        if head >= 64 && head * 2 >= frames.count {
            frames.removeFirst(head)
            head = 0
        }
        let more = head < frames.count
        if !more && resync.isEmpty { drained() }
        return .write(batch, more: more || !resync.isEmpty)
    }

    /// The next fragments of the head frame (up to `fragmentsPerWrite`); the frame leaves the queue with its last one.
    private mutating func nextFragment(_ frame: Frame, now: Instant) -> Next {
        let offset = fragmentOffset
        let count = min(Self.fragmentBytes * Self.fragmentsPerWrite, frame.count - offset)
        if overflowedAt != nil { lastWrite = now }
        guard offset + count == frame.count else {
            fragmentOffset += count
            return .fragment(frame, offset: offset, count: count, more: true)
        }
        fragmentOffset = 0
        head += 1
        bytes -= frame.count
        frames.removeFirst(head)  // what was written goes now: large frames back to back must not pile up behind `head`
        head = 0
        let more = !frames.isEmpty
        if !more && resync.isEmpty { drained() }
        return .fragment(frame, offset: offset, count: count, more: more || !resync.isEmpty)
    }

    /// Everything was taken: the next enqueue must wake the subscriber again. (A batch handed out is a slice
    /// of the old storage, which it keeps alive; emptying `frames` here does not touch it.)
    private mutating func drained() {
        // One frame (a write of `.one`, the usual case) leaves through the array's own fast path; the generic
        // `removeAll(keepingCapacity:)` cost ~180 instructions a delivery (docs/benchmarks/HISTORY.md, "Stop 37").
        if frames.count == 1 { frames.removeLast() } else { frames.removeAll(keepingCapacity: true) }
        head = 0
        bytes = 0
        writeScheduled = false
        overflowedAt = nil
    }

    /// Whether the subscriber overflowed and then took nothing for longer than `timeoutNanoseconds`.
    func isStuck(now: Instant, timeoutNanoseconds: UInt64) -> Bool {
        guard let overflowedAt else { return false }
        let since = max(overflowedAt.nanoseconds, lastWrite?.nanoseconds ?? 0)
        return now.nanoseconds > since + timeoutNanoseconds
    }
}
