import Dispatch
import LiveControlsEngine

/// Pacing a large room by its transport. A room with thousands of subscribers can apply intents faster than one
/// service thread can write their fan-out: every applied intent is a frame for each of them. Queued without bound,
/// that work makes every pass of the service thread long — and every client of every other room waits a pass for
/// each answer — and it ends in outbox overflows, whose resync snapshots cost more again. So after each block of
/// work a large room looks at the transport, and while it is behind (`SubscriberWaker.isBehind`: a long pass, or writes
/// waiting long for their turn) the room's queue stops for a moment: its intents wait (up to `--room-queue`, then
/// `overloaded`, and the transport stops reading from their senders), and what it sends later goes out in fewer,
/// larger writes.
extension RoomRuntime {
    /// How often a paused room looks at the transport again, and the longest it pauses at once (a hold's ticks and
    /// the room's own clients wait that long at most per pause).
    static let pacingCheckMilliseconds = 2
    static let pacingMaxMilliseconds = 100

    /// On the queue, after a block of work: suspends the queue while the transport is behind (large rooms only).
    func paceIfTransportBehind() {
        assertOnQueue(queue)
        guard hasCrowd, waker.isBehind, !pacing.load(ordering: .relaxed),
              !shuttingDown.load(ordering: .relaxed),
              inlineTimers.load(ordering: .sequentiallyConsistent) == 0 else { return }  // a tick about to `sync` in: next time
        pacing.store(true, ordering: .relaxed)
        queuedBlocks.add(1, ordering: .relaxed)  // counted as queued work: the service thread never `queue.sync`s into it
        queue.suspend()  // takes effect once this block returns
        resumeWhenCaughtUp(waited: 0)
    }

    private func resumeWhenCaughtUp(waited: Int) {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Self.pacingCheckMilliseconds)) {
            let waited = waited + Self.pacingCheckMilliseconds
            if self.waker.isBehind && waited < Self.pacingMaxMilliseconds { return self.resumeWhenCaughtUp(waited: waited) }
            self.metrics.paced(milliseconds: waited)
            self.pacing.store(false, ordering: .relaxed)
            self.queue.resume()  // before the count falls: nobody `sync`s into a queue still suspended
            self.queuedBlocks.subtract(1, ordering: .relaxed)
        }
    }
}
