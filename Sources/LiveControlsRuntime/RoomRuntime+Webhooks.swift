import LiveControlsEngine
import LiveControlsProtocol

/// The room's webhook events: those each patch stands for (stored with it), `room.changed` gathered over
/// `webhookChangeIntervalMs`, and the room's own (`room.created`, `room.unloaded`, `room.deleted`). Each goes to the
/// dispatcher once what it tells is durable, in the room's order.
extension RoomRuntime {
    /// Queue only: the events of `patch`, and the change noted for the next `room.changed`.
    func webhookEvents(for patch: Patch, _ webhooks: WebhookDispatcher) -> [PendingWebhook] {
        assertOnQueue(queue)
        if webhooks.wantsChanges { noteChange(patch, webhooks) }
        return room.webhookDrafts(for: patch).compactMap { webhooks.pending($0, room: name) }
    }

    private func noteChange(_ patch: Patch, _ webhooks: WebhookDispatcher) {
        let touched = patch.touched
        if var changes = unannounced, changes.epoch == room.epoch {
            for control in touched.controls where !changes.controls.contains(control) { changes.controls.append(control) }
            changes.presence = changes.presence || touched.presence
            unannounced = changes
        } else {
            unannounced = UnannouncedChanges(epoch: room.epoch, fromVersion: patch.version, controls: touched.controls, presence: touched.presence)
        }
        guard !announcing else { return }
        announcing = true
        scheduler.once(at: scheduler.now().adding(milliseconds: webhooks.changeIntervalMs), on: queue) { [weak self] in
            guard let self, self.announcing else { return }
            self.announcing = false
            self.record(self.takeChanges().map { [$0] } ?? [], clearsUnannounced: true)
        }
    }

    /// Queue only: the gathered changes as a `room.changed` event (nil when there are none), forgetting them.
    func takeChanges() -> PendingWebhook? {
        assertOnQueue(queue)
        guard let changes = unannounced, let webhooks else { return nil }
        unannounced = nil
        return webhooks.pending(WebhookDraft(type: "room.changed", data: WebhookDispatcher.changedData(room: name, changes, toVersion: room.version)),
                                room: name)
    }

    /// Queue only: the room's own event of `type` (after its gathered changes), stored, then sent. For `room.unloaded`
    /// and `room.deleted`, which change nothing in the room.
    func recordRoomEvent(_ type: String) {
        assertOnQueue(queue)
        guard let webhooks else { return }
        announcing = false
        var events = takeChanges().map { [$0] } ?? []
        if let own = webhooks.pending(WebhookDraft(type: type, data: ["room": .string(name), "epoch": .string(room.epoch),
                                                                      "version": .int(room.version)]), room: name) {
            events.append(own)
        }
        record(events, clearsUnannounced: true)
    }

    /// Stores events that come with no change (in order with the room's writes), then hands them to the dispatcher
    /// once they and every version they tell of are durable, through the room's queue (so after the events of
    /// earlier patches).
    private func record(_ events: [PendingWebhook], clearsUnannounced: Bool) {
        assertOnQueue(queue)
        guard let webhooks, !events.isEmpty || clearsUnannounced else { return }
        let version = room.version
        store.recordWebhooks(events, room: name, clearsUnannounced: clearsUnannounced) { [self, logger] error in
            if let error {
                logger.error("webhook events could not be stored; they are not sent", metadata: ["error": "\(error)"])
                return
            }
            guard !events.isEmpty else { return }
            self.submit { self.deliver(after: version) { webhooks.enqueue(events) } }
        }
    }
}
