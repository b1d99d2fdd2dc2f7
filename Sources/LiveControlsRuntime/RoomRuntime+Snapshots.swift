import LiveControlsEngine
import LiveControlsProtocol

/// What the snapshots made at one version share: the room's state encoded once (in a room without presence, where
/// a join changes nothing, every joiner at that version gets it) and the id-less frame of a resync after overflow
/// (when a burst overflows many subscribers at once, each gets the same frame). Queue only; `carryOut` drops it with
/// each patch, so it holds at most one copy of the state.
struct SnapshotCache {
    let epoch: String
    let version: Int
    var state: [UInt8]?
    var resync: Frame?
}

extension RoomRuntime {
    /// A second `join` of a joined room: a fresh snapshot (how a client resyncs after a gap).
    func resync(_ subscriber: any RoomSubscriber, id: RequestID?) {
        submit {
            guard !self.refusedAsAbandoned(subscriber, id: id) else { return }
            self.send(self.snapshot(id: id, resumed: nil), to: subscriber)
        }
    }

    /// The subscriber overflowed and has caught up: queue a fresh snapshot, ending its resync.
    func resyncAfterOverflow(_ subscriber: any RoomSubscriber) {
        submit {
            guard self.subscribers[subscriber.session] === subscriber, !subscriber.isGone else {
                subscriber.cancelResync(room: self.name)
                return
            }
            let frame: Frame
            if let cached = self.snapshotsAtThisVersion().resync {
                frame = cached
            } else {
                frame = self.snapshot(id: nil, resumed: nil, toMany: self.hasCrowd)
                self.snapshots?.resync = frame
            }
            self.deliver(after: self.room.version) {
                if subscriber.deliverResync(frame, room: self.name) { self.waker.wake(subscriber) }
            }
        }
    }

    /// A snapshot of the room as it is now, its state encoded once per version where joins change nothing.
    func snapshot(id: RequestID?, resumed: Bool?, toMany: Bool = false) -> Frame {
        assertOnQueue(queue)
        let state: [UInt8]
        if let cached = snapshotsAtThisVersion().state {
            state = cached
        } else {
            state = JSONWriter.encode(room.render())
            if !room.tracksPresence { snapshots?.state = state }  // with presence every join is a new version
        }
        return Frame.make(bytes: ServerMessage.encodedSnapshot(room: name, epoch: room.epoch, version: room.version, encodedState: state,
                                                               id: id, resumed: resumed),
                          stateOfRoom: name, stateVersion: (room.epoch, room.version), toMany: toMany)
    }

    /// The cache for the room's current version (made empty when the version moved on).
    private func snapshotsAtThisVersion() -> SnapshotCache {
        if let cache = snapshots, cache.epoch == room.epoch, cache.version == room.version { return cache }
        let fresh = SnapshotCache(epoch: room.epoch, version: room.version)
        snapshots = fresh
        return fresh
    }
}
