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
            // Run on the timer's own thread when nothing waits on the queue (as the service thread runs a small room's
            // intent): one wake-up from the deadline to the tick.
            timer = scheduler.makeTimer(on: queue, runInline: { [weak self] in self?.queuedBlocks.load(ordering: .relaxed) == 0 }) { [weak self] in
                self?.fire(control)
            }
            timers[control] = timer
        }
        armedDeadlines[control] = deadline
        timer.schedule(at: deadline)
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
