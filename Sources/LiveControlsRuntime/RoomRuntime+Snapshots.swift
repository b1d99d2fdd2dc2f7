import LiveControlsEngine
import LiveControlsProtocol

/// What the snapshots made at one version share: the room's state encoded once (in a room without presence, where
/// a join changes nothing, every joiner at that version gets it) and the id-less frame of a resync after overflow
/// (when a burst overflows many subscribers at once, each gets the same frame). Queue only; `carryOut` drops it with
/// each patch, so it holds at most one copy of the state.
struct SnapshotCache {
    let epoch: String
    let version: Int
    /// By view (`Room.viewKey(for:)`: empty where every member sees the same).
    var state: [[Bool]: [UInt8]] = [:]
    var resync: [[Bool]: Frame] = [:]
}

extension RoomRuntime {
    /// A second `join` of a joined room: a fresh snapshot (how a client resyncs after a gap).
    func resync(_ subscriber: any RoomSubscriber, id: RequestID?) {
        submit {
            guard !self.refusedAsAbandoned(subscriber, id: id) else { return }
            self.send(self.snapshot(id: id, resumed: nil, for: self.room.viewer(of: subscriber.session)), to: subscriber)
            self.tellUndoable(toJoined: subscriber)
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
            let viewer = self.room.viewer(of: subscriber.session), key = self.room.viewKey(for: viewer)
            if let cached = self.snapshotsAtThisVersion().resync[key] {
                frame = cached
            } else {
                frame = self.snapshot(id: nil, resumed: nil, for: viewer, toMany: self.hasCrowd)
                self.snapshots?.resync[key] = frame
            }
            // The sizes of its undo stacks may have changed among the messages it missed.
            let counts = self.room.undoCounts(for: subscriber.session).map { Frame.make(.undoable(room: self.name, undo: $0.undo, redo: $0.redo)) }
            self.deliver(after: self.room.version) {
                var wake = subscriber.deliverResync(frame, room: self.name)
                if let counts, subscriber.deliver(counts) { wake = true }
                if wake { self.waker.wake(subscriber) }
            }
        }
    }

    /// A snapshot of the room as it is now, as `viewer` sees it; its state encoded once per version where joins change
    /// nothing and every member sees the same.
    func snapshot(id: RequestID?, resumed: Bool?, for viewer: Viewer, toMany: Bool = false) -> Frame {
        assertOnQueue(queue)
        let state: [UInt8]
        let key = room.viewKey(for: viewer)
        if let cached = snapshotsAtThisVersion().state[key] {
            state = cached
        } else {
            state = JSONWriter.encode(room.render(for: viewer))
            if !room.tracksPresence { snapshots?.state[key] = state }  // with presence every join is a new version
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
