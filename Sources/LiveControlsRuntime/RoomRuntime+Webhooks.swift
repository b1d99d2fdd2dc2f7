import LiveControlsEngine
import LiveControlsProtocol

/// One step of the room's webhook events towards the dispatcher.
struct WebhookOutboxEntry {
    let id: Int
    var events: [PendingWebhook]
    var ready = false
    /// Events of a patch: dropped when the room stops before the patch is durable (they were never stored).
    /// Otherwise the events have a store entry of their own, and go once it is committed.
    let droppedOnStop: Bool
}

/// The room's webhook events: those each patch stands for (stored with it), `room.changed` gathered over
/// `webhookChangeIntervalMs`, and the room's own (`room.created`, `room.unloaded`, `room.deleted`). They reach the
/// dispatcher through the room's outbox: in the room's order, each once what it tells is durable.
extension RoomRuntime {
    /// Queue only: puts `room.created` (after the earlier epoch's unannounced changes, if the room is re-created in a new
    /// one) into the reset write of a new room; returns its outbox entry, nil without webhooks.
    func attachCreationEvents(to write: inout StoreWrite) -> Int? {
        assertOnQueue(queue)
        guard let webhooks else { return nil }
        var events = pendingChangesOfEarlierEpoch.map { [$0] } ?? []
        pendingChangesOfEarlierEpoch = nil
        if let created = webhooks.pending(WebhookDraft(type: "room.created", data: [
            "room": .string(name), "template": .string(room.template), "epoch": .string(room.epoch), "version": .int(room.version)]),
                                          room: name) {
            events.append(created)
        }
        write.webhooks = events
        return openOutboxEntry(events)
    }

    /// Queue only: the events of `patch`, and the change noted for the next `room.changed`.
    func webhookEvents(for patch: Patch, _ webhooks: WebhookDispatcher) -> [PendingWebhook] {
        assertOnQueue(queue)
        if webhooks.wantsChanges { noteChange(patch, webhooks) }
        return room.webhookDrafts(for: patch).compactMap { webhooks.pending($0, room: name) }
    }

    private func noteChange(_ patch: Patch, _ webhooks: WebhookDispatcher) {
        let touched = patch.touched
        merge(UnannouncedChanges(epoch: room.epoch, fromVersion: patch.version, controls: touched.controls, presence: touched.presence))
        armAnnouncement(webhooks)
    }

    private func armAnnouncement(_ webhooks: WebhookDispatcher) {
        guard !announcing else { return }
        announcing = true
        scheduler.once(at: scheduler.now().adding(milliseconds: webhooks.changeIntervalMs), on: queue) { [weak self] in
            guard let self, self.announcing else { return }
            self.announcing = false
            self.record(self.takeChanges().map { [$0] } ?? [], clearsUnannounced: true)
        }
    }

    /// Queue only: changes the store still had unannounced when the room loaded: told after the usual interval.
    func resumeAnnouncing(_ changes: UnannouncedChanges) {
        assertOnQueue(queue)
        guard let webhooks, changes.epoch == room.epoch else { return }
        merge(changes)
        armAnnouncement(webhooks)
    }

    /// Adds `changes` to the unannounced ones (the earliest version stays the start).
    func merge(_ changes: UnannouncedChanges) {
        guard var current = unannounced, current.epoch == changes.epoch else {
            unannounced = changes
            return
        }
        current.fromVersion = min(current.fromVersion, changes.fromVersion)
        for control in changes.controls where !current.controls.contains(control) { current.controls.append(control) }
        current.presence = current.presence || changes.presence
        unannounced = current
    }

    /// Queue only: the gathered changes as a `room.changed` event (nil when there are none), forgetting them.
    func takeChanges() -> PendingWebhook? {
        assertOnQueue(queue)
        guard let changes = unannounced, let webhooks else { return nil }
        unannounced = nil
        return webhooks.pending(WebhookDraft(type: "room.changed", data: WebhookDispatcher.changedData(room: name, changes, toVersion: room.version)),
                                room: name)
    }

    /// Queue only: the room's own event of `type` (after its gathered changes) — for `room.unloaded`; nothing
    /// changes in the room.
    func recordRoomEvent(_ type: String) {
        assertOnQueue(queue)
        guard webhooks != nil else { return }
        announcing = false
        var events = takeChanges().map { [$0] } ?? []
        if let own = roomEvent(type) { events.append(own) }
        record(events, clearsUnannounced: true)
    }

    /// The room's own event of `type` (`room.unloaded`, `room.deleted`), nil when no endpoint wants it.
    func roomEvent(_ type: String) -> PendingWebhook? {
        webhooks?.pending(WebhookDraft(type: type, data: ["room": .string(name), "epoch": .string(room.epoch), "version": .int(room.version)]),
                          room: name)
    }

    /// Stores events that come with no change (in order with the room's writes); they go to the dispatcher once
    /// stored, after the room's earlier events. If storing fails, the gathered changes they told are noted again.
    private func record(_ events: [PendingWebhook], clearsUnannounced: Bool) {
        assertOnQueue(queue)
        guard webhooks != nil, !events.isEmpty || clearsUnannounced else { return }
        let entry = openOutboxEntry(events)
        store.recordWebhooks(events, room: name, clearsUnannounced: clearsUnannounced) { [self, logger] error in
            submit {
                if let error {
                    logger.error("webhook events could not be stored; their changes are told later", metadata: ["error": "\(error)"])
                    for event in events where event.event.type == "room.changed" {
                        if let changes = Self.changes(of: event.event) { self.merge(changes) }
                    }
                    self.dropOutboxEntry(entry)
                } else {
                    self.outboxEntryReady(entry)
                }
            }
        }
    }

    /// The gathered changes a `room.changed` event told.
    static func changes(of event: WebhookEvent) -> UnannouncedChanges? {
        guard let epoch = event.data["epoch"]?.stringValue, let from = event.data["fromVersion"]?.intValue else { return nil }
        return UnannouncedChanges(epoch: epoch, fromVersion: from, controls: event.data["controls"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                                  presence: event.data["presence"] == .bool(true))
    }

    // MARK: The outbox

    /// Queue only: a place in line for `events` (none: nothing to do); returns its id.
    func openOutboxEntry(_ events: [PendingWebhook], droppedOnStop: Bool = false) -> Int {
        assertOnQueue(queue)
        nextOutboxID += 1
        if !events.isEmpty { webhookOutbox.append(WebhookOutboxEntry(id: nextOutboxID, events: events, droppedOnStop: droppedOnStop)) }
        return nextOutboxID
    }

    /// Queue only: entry `id` may go; it goes with every ready one behind it once nothing before it waits.
    func outboxEntryReady(_ id: Int) {
        assertOnQueue(queue)
        if let index = webhookOutbox.firstIndex(where: { $0.id == id }) { webhookOutbox[index].ready = true }
        flushOutbox()
    }

    func dropOutboxEntry(_ id: Int) {
        assertOnQueue(queue)
        webhookOutbox.removeAll { $0.id == id }
        flushOutbox()
    }

    private func flushOutbox() {
        guard !webhookOutboxClosed else { return webhookOutbox.removeAll() }
        var ready: [PendingWebhook] = []
        while let head = webhookOutbox.first, head.ready {
            ready.append(contentsOf: head.events)
            webhookOutbox.removeFirst()
        }
        if !ready.isEmpty { webhooks?.enqueue(ready) }
    }

    /// Queue only: the room stopped (a failed store write). Events of patches that were not stored are dropped; events
    /// with store entries of their own still go once stored. Nothing more is gathered: the stored unannounced
    /// changes are told at the next start (or when the room loads again). Cluster mode: nothing more goes from this
    /// node at all — another node owns the room now, and sends what Redis holds of it.
    func stopWebhooks() {
        assertOnQueue(queue)
        announcing = false
        unannounced = nil
        if !localDelivery { webhookOutboxClosed = true }
        webhookOutbox.removeAll { $0.droppedOnStop && !$0.ready }
        flushOutbox()
    }
}
