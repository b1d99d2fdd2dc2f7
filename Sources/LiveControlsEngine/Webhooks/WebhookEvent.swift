import LiveControlsProtocol

/// One webhook event, as stored and sent: the body is `{"type", "timestamp", "data"}` (Standard Webhooks).
public struct WebhookEvent: Sendable, Equatable {
    /// Stable across every attempt (`webhook-id`): receivers use it to drop duplicates.
    public var id: String
    public var type: String
    public var room: String
    /// Milliseconds since 1970 (UTC): when the change happened.
    public var timestamp: Int
    public var data: JSONObject

    public init(id: String, type: String, room: String, timestamp: Int, data: JSONObject) {
        self.id = id
        self.type = type
        self.room = room
        self.timestamp = timestamp
        self.data = data
    }

    /// The request body, exactly as signed.
    public var body: [UInt8] {
        JSONWriter.encode(["type": .string(type), "timestamp": .string(Self.iso8601(milliseconds: timestamp)), "data": .object(data)])
    }

    /// `2026-11-24T14:30:05.123Z`.
    public static func iso8601(milliseconds: Int) -> String {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : -((-milliseconds + 999) / 1000)
        let date = CivilDate.today(fromUnixSeconds: seconds)
        let inDay = seconds - (seconds >= 0 ? seconds / 86_400 : -((-seconds + 86_399) / 86_400)) * 86_400
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let ms = milliseconds - seconds * 1000
        let msText = ms < 10 ? "00\(ms)" : ms < 100 ? "0\(ms)" : "\(ms)"
        let year = String(repeating: "0", count: max(0, 4 - String(date.year).count)) + String(date.year)
        return "\(year)-\(two(date.month))-\(two(date.day))T\(two(inDay / 3600)):\(two(inDay / 60 % 60)):\(two(inDay % 60)).\(msText)Z"
    }

    /// The Standard Webhooks signature header value: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`
    /// (`timestamp` in seconds, the `webhook-timestamp` header).
    public static func signature(id: String, timestampSeconds: Int, body: [UInt8], key: [UInt8]) -> String {
        var message = Array("\(id).\(timestampSeconds).".utf8)
        message.append(contentsOf: body)
        return "v1," + Base64.encode(HMACSHA256.authenticate(message, key: key))
    }
}

/// An event before it has an id and a time (what a room's change stands for).
public struct WebhookDraft: Sendable, Equatable {
    public var type: String
    public var data: JSONObject

    public init(type: String, data: JSONObject) {
        self.type = type
        self.data = data
    }
}

extension Patch {
    /// The controls the patch changed, in the order they first appear, and whether presence changed.
    public var touched: (controls: [String], presence: Bool) {
        var controls: [String] = []
        var presence = false
        for op in ops {
            let tokens = op.path.tokens
            if tokens.first == "controls", tokens.count > 1 {
                if !controls.contains(tokens[1]) { controls.append(tokens[1]) }
            } else if tokens.first == "presence" {
                presence = true
            }
        }
        return (controls, presence)
    }
}

extension Room {
    /// The events a patch of this room stands for, read from the patch and the room as it is after it:
    /// `member.joined`/`member.left` (its cause), `hold.ended` (each entry of `cause.ended`), `form.completed` (a form's
    /// `completed` became true; with its `data`), `wizard.completed`/`wizard.exited` (a wizard's `phase` became
    /// `complete`/`exit`), `timer.finished` (a countdown's `status` became `finished`; with what its `then` did), `poll.closed`/`poll.revealed` (a poll's
    /// `phase` became `closed`/`revealed`; with its tally and ballots). `room.changed` is gathered over time by the room's owner, not here.
    public func webhookDrafts(for patch: Patch) -> [WebhookDraft] {
        var drafts: [WebhookDraft] = []
        let base: JSONObject = ["room": .string(name), "epoch": .string(epoch), "version": .int(patch.version)]
        func with(_ extra: JSONObject) -> JSONObject {
            var data = base
            for (key, value) in extra { data[key] = value }
            return data
        }
        switch patch.cause["kind"]?.stringValue {
        case "join":
            if let session = patch.cause["session"]?.stringValue {
                let member = members[SessionID(session)]
                let user: JSONValue = member?.user.map { .string($0) } ?? .null
                let details: JSONObject = ["session": .string(session), "name": member?.name.map { .string($0) } ?? .null, "user": user]
                drafts.append(WebhookDraft(type: "member.joined", data: with(details)))
                // The user's first session in the room (the cause says: the room after a batch of joins could not).
                if patch.cause["userJoined"] == true {
                    drafts.append(WebhookDraft(type: "user.joined", data: with(details)))
                }
            }
        case "leave":
            if let session = patch.cause["session"]?.stringValue {
                let details: JSONObject = ["session": .string(session), "reason": patch.cause["reason"] ?? .null, "user": patch.cause["user"] ?? .null]
                drafts.append(WebhookDraft(type: "member.left", data: with(details)))
                // Its user's last session in the room (a restart drops every member at once: the cause, not the room
                // after it, says).
                if patch.cause["userLeft"] == true {
                    drafts.append(WebhookDraft(type: "user.left", data: with(details)))
                }
            }
        default:
            break
        }
        for op in patch.ops {
            let tokens = op.path.tokens
            // Only `completed`, `phase` and `status` can mean an event: nothing else is looked at (no rendering per patch).
            guard tokens.count == 3, tokens[0] == "controls", tokens[2] == "completed" || tokens[2] == "phase" || tokens[2] == "status",
                  let control = controls[ControlID(tokens[1])] else { continue }
            if tokens[2] == "status" {
                if op.value == "finished", control is SharedTimer {
                    var data: JSONObject = ["control": .string(tokens[1]), "cause": patch.cause]
                    data.setIfPresent("then", patch.cause["then"])
                    drafts.append(WebhookDraft(type: "timer.finished", data: with(data)))
                }
                continue
            }
            if tokens[2] == "phase", let poll = control as? Poll, let phase = op.value?.stringValue, phase == "closed" || phase == "revealed" {
                // The backend sees every ballot (it is no member): the tally, and who chose what.
                let rendered = poll.render()
                drafts.append(WebhookDraft(type: "poll.\(phase)", data: with(["control": .string(tokens[1]), "tally": rendered["tally"] ?? .null,
                                                                               "ballots": rendered["ballots"] ?? .null, "voters": .int(poll.ballots.count),
                                                                               "cause": patch.cause])))
                continue
            }
            let rendered = control.render()
            if tokens[2] == "completed", op.value == .bool(true), rendered["kind"] == "form" {
                drafts.append(WebhookDraft(type: "form.completed", data: with(["control": .string(tokens[1]), "data": rendered["data"] ?? .null,
                                                                               "cause": patch.cause])))
            }
            if tokens[2] == "phase", rendered["kind"] == "wizard", let phase = op.value?.stringValue, phase == "complete" || phase == "exit" {
                drafts.append(WebhookDraft(type: phase == "complete" ? "wizard.completed" : "wizard.exited",
                                           data: with(["control": .string(tokens[1]), "step": rendered["step"] ?? .null,
                                                       "index": rendered["index"] ?? .null, "cause": patch.cause])))
            }
        }
        for ended in patch.cause["ended"]?.arrayValue ?? [] {
            drafts.append(WebhookDraft(type: "hold.ended", data: with(["control": ended["control"] ?? .null, "session": ended["session"] ?? .null,
                                                                       "reason": ended["reason"] ?? .null])))
        }
        return drafts
    }
}
