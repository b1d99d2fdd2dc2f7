import Dispatch
import LiveControlsEngine

extension RoomRuntime {
    /// Arms (or, with nil, parks) the control's timer at an engine deadline. Queue only.
    func arm(_ control: ControlID, at deadline: Instant?) {
        let timer: DispatchSourceTimer
        if let existing = timers[control] {
            timer = existing
        } else {
            guard deadline != nil else { return }
            timer = DispatchSource.makeTimerSource(flags: .strict, queue: queue)
            timer.setEventHandler { [weak self] in self?.fire(control) }
            timers[control] = timer
            timer.schedule(deadline: .distantFuture, leeway: .nanoseconds(0))
            timer.resume()
        }
        armedDeadlines[control] = deadline
        if let deadline {
            timer.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline.nanoseconds), leeway: .nanoseconds(0))
        } else {
            timer.schedule(deadline: .distantFuture, leeway: .nanoseconds(0))
        }
    }

    /// A timer fired. A stale firing is harmless: the engine only acts on what is due at `now`.
    private func fire(_ control: ControlID) {
        let now = clock()
        let update = room.wake(control: control, at: now)
        if update.patch?.cause["kind"] == "tick", let deadline = armedDeadlines[control], now >= deadline {
            metrics.tick(lateNanoseconds: now.nanoseconds - deadline.nanoseconds)
        }
        carryOut(update)
    }

    /// Stops the timers (at shutdown).
    func stop() {
        queue.sync {
            for timer in timers.values { timer.cancel() }
            timers.removeAll()
        }
    }
}
