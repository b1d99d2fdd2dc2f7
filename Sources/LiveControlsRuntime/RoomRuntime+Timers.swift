import Dispatch
import LiveControlsEngine

extension RoomRuntime {
    /// Arms (or, with nil, parks) the control's timer at an engine deadline. Queue only.
    func arm(_ control: ControlID, at deadline: Instant?) {
        assertOnQueue(queue)
        let timer: any RoomTimer
        if let existing = timers[control] {
            timer = existing
        } else {
            guard deadline != nil else { return }
            timer = scheduler.makeTimer(on: queue, inline: { [weak self] work in self?.runInline(work) ?? false }) { [weak self] in
                self?.fire(control)
            }
            timers[control] = timer
        }
        armedDeadlines[control] = deadline
        timer.schedule(at: deadline)
    }

    /// A room just loaded (a restart, or a cluster takeover): what its controls still wait for (a running countdown) is
    /// armed at its deadline; one that passed while no server ran the room fires at once — late, and once (its firing
    /// is stored like any change, so the next load finds it done). Queue only.
    func armLoadedTimers() {
        assertOnQueue(queue)
        for id in room.controlIDs where armedDeadlines[id] == nil {
            if let deadline = room.wakeDeadline(of: id) { arm(id, at: deadline) }
        }
    }

    /// The timer thread's offer to run a firing right there (one wake-up from the deadline to the tick): taken when
    /// nothing waits on the queue, as the service thread runs a small room's intent. `inlineTimers` keeps a pause
    /// (`paceIfTransportBehind`) from suspending the queue between the look at `queuedBlocks` and the `sync`: with both
    /// sides sequentially consistent, either the pause sees the timer and does not suspend, or the timer sees the
    /// pausing block's count and hands its firing over with `async`.
    func runInline(_ work: () -> Void) -> Bool {
        assertNotOnQueue(queue)
        inlineTimers.add(1, ordering: .sequentiallyConsistent)
        defer { inlineTimers.subtract(1, ordering: .sequentiallyConsistent) }
        guard queuedBlocks.load(ordering: .sequentiallyConsistent) == 0 else { return false }
        queue.sync(execute: work)
        return true
    }

    /// A timer fired. A stale firing is harmless: the engine only acts on what is due at `now`.
    private func fire(_ control: ControlID) {
        assertOnQueue(queue)
        let now = scheduler.now()
        let update = room.wake(control: control, at: now)
        if update.patch?.cause["kind"] == "tick", let deadline = armedDeadlines[control], now >= deadline {
            metrics.tick(lateNanoseconds: now.nanoseconds - deadline.nanoseconds)
        }
        carryOut(update)
    }

    /// Stops the timers (at shutdown).
    func stop() {
        assertNotOnQueue(queue)
        queue.sync {
            for timer in timers.values { timer.cancel() }
            timers.removeAll()
            announcing = false  // the room.changed timer does nothing more; what it would tell stays in the store
        }
    }
}
