import LiveControlsEngine

/// Unloading an idle room (`RoomRegistry.unloadIdleRooms`, and the owner's hand-back in cluster mode): since
/// when nobody has been in it, and retiring it once it is unused.
extension RoomRuntime {
    /// Queue only: after members went, records since when the room is empty (if it is).
    func noteIfEmpty() {
        assertOnQueue(queue)
        guard subscribers.isEmpty && remoteMembers.isEmpty, emptySinceNanos.load(ordering: .relaxed) == 0 else { return }
        emptySinceNanos.store(max(1, scheduler.now().nanoseconds), ordering: .relaxed)
    }

    /// Since when nobody has been in the room; nil while someone is (any thread).
    var emptySince: Instant? {
        let nanoseconds = emptySinceNanos.load(ordering: .relaxed)
        return nanoseconds == 0 ? nil : Instant(nanoseconds: nanoseconds)
    }

    /// Retires the room when it is still unused — no subscriber, no timer armed, nothing waiting for the
    /// store, and empty since `cutoff` or earlier (checked again here: a join and leave that were still queued
    /// when the caller looked make it recent) — and returns its version (nil: still in use); its timers are
    /// cancelled and it takes no more requests. Waits for the room's
    /// queue, so requests sent to the room before the call are handled first. The caller (the registry,
    /// under its lock) then forgets the room.
    func retireIfUnused(emptySince cutoff: UInt64) -> Int? {
        guard queuedBlocks.load(ordering: .relaxed) == 0 else { return nil }  // busy: not now, and no waiting
        assertNotOnQueue(queue)
        return queue.sync { retireOnQueueIfUnused(emptySince: cutoff) }
    }

    /// `retireIfUnused`, for a caller already on the room's queue.
    func retireOnQueueIfUnused(emptySince cutoff: UInt64) -> Int? {
        assertOnQueue(queue)
        let since = emptySinceNanos.load(ordering: .relaxed)
        guard !retired, since != 0, since <= cutoff, subscribers.isEmpty, remoteMembers.isEmpty, heldHead == held.count,
              armedDeadlines.isEmpty else { return nil }
        for timer in timers.values { timer.cancel() }
        timers.removeAll()
        armedDeadlines.removeAll()
        retired = true
        closedFlag.store(true, ordering: .releasing)
        recordRoomEvent("room.unloaded")
        return room.version
    }
}
