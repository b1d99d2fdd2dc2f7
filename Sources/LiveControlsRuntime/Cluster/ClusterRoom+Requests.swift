import LiveControlsEngine
import LiveControlsProtocol

/// The requests a room's sessions on this node sent to its owner: failed when the owner changes or stops, settled
/// in order (barriers for what must follow them), answered early with an error.
extension ClusterRoom {
    func failRequests(sentToOtherThan owner: String) {
        answerEarly(ProtocolError(.unavailable, "the room changed owner before answering; the request may or may not have taken effect")) {
            $0.owner != nil && $0.owner != owner && !$0.isJoin
        }
    }

    /// The owner stopped and released the room: what was sent to it and not answered never will be. Fails those
    /// requests (joins too) with `unavailable` now; the next request finds the room's next owner.
    func ownerReleased(_ owner: String) {
        queue.async {
            defer { self.settleBarriers() }  // after the answers this block queued
            if self.publisher == owner { self.publisher = nil }
            self.answerEarly(ProtocolError(.unavailable, "the room's owner stopped before answering; the request may or may not have taken effect")) {
                $0.owner == owner
            }
        }
    }

    /// A request left the slow path (link queue): the fast path may be used again once none is left.
    func slowPathFinished() {
        queue.async { self.slowPathInFlight -= 1 }
    }

    /// The link sent the request to `owner`.
    func sent(token: Int, to owner: String) {
        queue.async { self.requests.sent(token, to: owner) }
    }

    /// The request could not be forwarded, or its answer did not come in time.
    func failed(token: Int, _ error: ProtocolError) {
        queue.async {
            defer { self.settleBarriers() }  // after the answers this block queued
            if let request = self.requests.answerEarly(token, now: self.directory.scheduler.now()) { self.answer(request, error) }
        }
    }

    /// `RoomEndpoint.afterQueuedWork` of a cluster handle (a connection's close waits for it): once what was queued here
    /// before is forwarded (a closing connection's are dropped in `act`) and each of the connection's requests then
    /// waiting for the owner has its answer queued — its reply (an ack, after the patch that came before it through
    /// Redis), or early: `unavailable` when the owner changed, stopped or went silent (`sweep`).
    func afterForwardedRequests(of connection: any RoomSubscriber, _ done: @escaping @Sendable () -> Void) {
        queue.async {
            if !self.requests.whenAnswered(of: connection, done) { done() }
        }
    }

    /// Queue only: runs the close barriers whose requests have all been answered.
    func settleBarriers() {
        assertOnQueue(queue)
        for done in requests.takeSettled() { done() }
    }

    /// Answers the waiting requests that `matches` here, before (or instead of) their reply, with `error`; a reply
    /// that still comes is dropped.
    func answerEarly(_ error: ProtocolError, where matches: (ClusterRequests.Pending) -> Bool) {
        assertOnQueue(queue)
        for request in requests.answerEarly(now: directory.scheduler.now(), where: matches) { answer(request, error) }
    }

    func answer(_ request: ClusterRequests.Pending, _ error: ProtocolError) {
        assertOnQueue(queue)
        let session = request.connection.session
        if request.isJoin { joining[session] = nil }
        if leaving[session] === request.connection { leaving[session] = nil }
        if request.isResync {
            // The snapshot could not be had (no owner yet, or Redis away): ask again in a moment. The client
            // asked for nothing, so it hears nothing; its state frames stay held back until then.
            resyncing.remove(session)
            let connection = request.connection
            directory.scheduler.once(at: directory.scheduler.now().adding(milliseconds: 250), on: queue) {
                guard self.members[session] === connection else { return connection.cancelResync(room: self.name) }
                self.resyncing.insert(session)
                self.forward(.snapshot(id: nil), for: connection, id: nil, isResync: true)
            }
            return
        }
        var error = error
        error.id = request.id
        error.room = name
        if request.connection.deliver(Frame.make(.error(error))) { directory.waker.wake(request.connection) }
    }
}
