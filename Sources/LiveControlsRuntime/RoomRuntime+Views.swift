import LiveControlsEngine
import LiveControlsProtocol

extension RoomRuntime {
    /// A patch whose ops not every member receives (`Patch.access`): calls `body` with each subscriber and its frame, one
    /// encoding per distinct view (members admitted to the same ops share it: a vote is two or three encodings — the
    /// voter's, the roles that see ballots, everyone else's — however many members the room has).
    func forEachView(_ patch: Patch, of targets: some Sequence<any RoomSubscriber>, _ body: (any RoomSubscriber, Frame) -> Void) {
        assertOnQueue(queue)
        // One read of the room for the loop: a call through the stored property copied the whole `Room` (and retained
        // and released every field of it) per subscriber — most of a vote's fan-out cost before (docs/benchmarks/HISTORY.md).
        let room = self.room
        var frames: [[Bool]: Frame] = [:]
        // Most of the room sees what a member without roles sees: found without building a key.
        let (owners, roles) = patch.audienceMembers
        let anyone = Viewer(session: nil, roles: [])
        let common = Frame.make(.patch(room: name, epoch: room.epoch, version: patch.version, ops: patch.ops(for: anyone), cause: patch.cause),
                                toMany: hasCrowd)
        frames[patch.viewKey(for: anyone)] = common
        for subscriber in targets {
            if room.seesAsAnyone(subscriber.session, owners: owners, roles: roles) {
                body(subscriber, common)
                continue
            }
            let viewer = room.viewer(of: subscriber.session)
            let key = patch.viewKey(for: viewer)
            if let frame = frames[key] {
                body(subscriber, frame)
            } else {
                let frame = Frame.make(.patch(room: name, epoch: room.epoch, version: patch.version, ops: patch.ops(for: viewer), cause: patch.cause),
                                       toMany: hasCrowd)
                frames[key] = frame
                body(subscriber, frame)
            }
        }
    }

    /// Cluster mode: the patch's views, as the owner publishes them (`ClusterEnvelope.publication`): each distinct view's
    /// message and the sessions that get it; the last view, what a member without roles sees, is for every session not
    /// listed (most of the room, and a member the owner does not know yet).
    func publishedViews(_ patch: Patch) -> [(sessions: [SessionID], message: [UInt8])] {
        assertOnQueue(queue)
        let room = self.room  // (one read: see `viewFrames`)
        var index: [[Bool]: Int] = [:]
        var views: [(sessions: [SessionID], message: [UInt8])] = []
        func message(_ viewer: Viewer) -> [UInt8] {
            ServerMessage.patch(room: name, epoch: room.epoch, version: patch.version, ops: patch.ops(for: viewer), cause: patch.cause).encoded()
        }
        // Sessions that see what a member without roles sees are not listed (that view goes to every unlisted session):
        // a vote lists the voter and the roles that see ballots, not the room.
        let unlisted = Viewer(session: nil, roles: [])
        let defaultKey = patch.viewKey(for: unlisted)
        let (owners, roles) = patch.audienceMembers
        for session in room.sessions {
            if room.seesAsAnyone(session, owners: owners, roles: roles) { continue }
            let viewer = room.viewer(of: session)
            let key = patch.viewKey(for: viewer)
            if key == defaultKey { continue }
            if let i = index[key] {
                views[i].sessions.append(session)
            } else {
                index[key] = views.count
                views.append(([session], message(viewer)))
            }
        }
        views.append(([], message(unlisted)))
        return views
    }
}
