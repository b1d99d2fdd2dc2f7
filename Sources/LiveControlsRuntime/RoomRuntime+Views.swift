import LiveControlsEngine
import LiveControlsProtocol

extension RoomRuntime {
    /// A patch whose ops not every member receives (`Patch.access`): each subscriber's frame, one encoding per distinct
    /// view (members admitted to the same ops share it: a vote is three encodings — the voter's, the roles that see
    /// ballots, everyone else's — however many members the room has).
    func viewFrames(_ patch: Patch, for targets: [any RoomSubscriber]) -> [(any RoomSubscriber, Frame)] {
        assertOnQueue(queue)
        var frames: [[Bool]: Frame] = [:]
        var result: [(any RoomSubscriber, Frame)] = []
        result.reserveCapacity(targets.count)
        for subscriber in targets {
            let viewer = room.viewer(of: subscriber.session)
            let key = patch.viewKey(for: viewer)
            if let frame = frames[key] {
                result.append((subscriber, frame))
            } else {
                let frame = Frame.make(.patch(room: name, epoch: room.epoch, version: patch.version, ops: patch.ops(for: viewer), cause: patch.cause),
                                       toMany: hasCrowd)
                frames[key] = frame
                result.append((subscriber, frame))
            }
        }
        return result
    }

    /// Cluster mode: the patch's views for every member, as the owner publishes them (`ClusterEnvelope.publication`):
    /// each distinct view's message and the sessions that get it; the last view is for sessions not listed (a member
    /// the owner does not know yet sees what a member without roles sees).
    func publishedViews(_ patch: Patch) -> [(sessions: [SessionID], message: [UInt8])] {
        assertOnQueue(queue)
        var index: [[Bool]: Int] = [:]
        var views: [(sessions: [SessionID], message: [UInt8])] = []
        func message(_ viewer: Viewer) -> [UInt8] {
            ServerMessage.patch(room: name, epoch: room.epoch, version: patch.version, ops: patch.ops(for: viewer), cause: patch.cause).encoded()
        }
        for session in room.sessions {
            let viewer = room.viewer(of: session)
            let key = patch.viewKey(for: viewer)
            if let i = index[key] {
                views[i].sessions.append(session)
            } else {
                index[key] = views.count
                views.append(([session], message(viewer)))
            }
        }
        views.append(([], message(Viewer(session: nil, roles: []))))
        return views
    }
}
