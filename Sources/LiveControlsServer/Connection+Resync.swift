extension Connection {
    /// Cluster mode: this connection missed room state (a gap in what Redis delivered, or a new epoch).
    /// Its state frames of `room` are dropped from now on until a fresh snapshot is queued with
    /// `enqueueResync`; the service thread asks the room for one once the outbox has drained (as after an
    /// overflow). Returns true when the caller must wake the connection.
    func requireResync(room: String) -> Bool {
        state.withLock { box in
            guard !box.closed, box.resync[room] == nil else { return false }
            box.resync[room] = false
            if box.writeScheduled { return false }
            box.writeScheduled = true
            return true
        }
    }
}
