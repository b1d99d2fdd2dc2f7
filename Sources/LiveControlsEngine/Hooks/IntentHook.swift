import LiveControlsProtocol

/// A template's intent hook (`"hooks": {"intent": {url, controls, intents?, secret, timeoutMs, onError, maxWaiting}}`):
/// which intents of its rooms wait for the app's backend to allow them (docs/PROTOCOL.md, *Intent hooks*).
public struct IntentHook: Sendable, Equatable {
    /// What an intent gets when the backend cannot be asked (time-out, connection refused, a non-2xx status, an answer
    /// that is not one): refused with `unavailable`, or applied as if allowed.
    public enum OnError: String, Sendable { case deny, allow }

    public var url: String
    /// The controls whose intents are hooked; nil: every control (`"*"`).
    public var controls: Set<ControlID>?
    /// The intents hooked (of those controls); nil: every intent.
    public var intents: Set<String>?
    /// The signing key: the bytes of the `whsec_…` secret (Standard Webhooks).
    public var key: [UInt8]
    /// How long one call may take, from the moment it is made.
    public var timeoutMs: Int
    public var onError: OnError
    /// Hooked intents that may wait in one room (called, or waiting for an earlier one on the same control); one more
    /// is refused with `overloaded`.
    public var maxWaiting: Int

    public static let defaultTimeoutMs = 5_000
    public static let defaultMaxWaiting = 64
    /// The longest answer body read; a longer one is not an answer (`onError`).
    public static let maxAnswerBytes = 64 * 1024
    /// The longest `message` a denial may carry to the client (longer ones are cut).
    public static let maxDenialMessage = 500

    public init(url: String, controls: Set<ControlID>?, intents: Set<String>?, key: [UInt8], timeoutMs: Int = Self.defaultTimeoutMs,
                onError: OnError = .deny, maxWaiting: Int = Self.defaultMaxWaiting) {
        self.url = url
        self.controls = controls
        self.intents = intents
        self.key = key
        self.timeoutMs = timeoutMs
        self.onError = onError
        self.maxWaiting = maxWaiting
    }

    /// Whether `intent` on `control` waits for the backend.
    public func covers(_ control: ControlID, _ intent: String) -> Bool {
        (controls?.contains(control) ?? true) && (intents?.contains(intent) ?? true)
    }
}

extension IntentHook {
    /// Reads a template's `hooks` object (today only `intent`).
    static func parseHooks(_ node: ConfigNode?, controls: [(id: ControlID, control: any Control)]) throws(ConfigError) -> IntentHook? {
        guard let node else { return nil }
        _ = try node.object(allowed: ["intent"])
        guard let intentNode = node["intent"] else { return nil }
        return try parse(intentNode, controls: controls)
    }

    static func parse(_ node: ConfigNode, controls: [(id: ControlID, control: any Control)]) throws(ConfigError) -> IntentHook {
        _ = try node.object(allowed: ["url", "controls", "intents", "secret", "timeoutMs", "onError", "maxWaiting"])
        let url = try node.receiverURL("url")
        let key = try node.signingKey("secret")
        guard let controlsNode = node["controls"] else { throw node.error(at: "controls", "required: an array of control ids, or \"*\" for every control") }
        var hooked: Set<ControlID>? = nil
        if controlsNode.value.stringValue != "*" {
            guard controlsNode.value.arrayValue != nil else { throw controlsNode.error("must be an array of control ids, or \"*\" for every control") }
            var ids = Set<ControlID>()
            for item in try controlsNode.array() {
                guard let id = item.value.stringValue, controls.contains(where: { $0.id.rawValue == id }) else {
                    throw item.error("no control \(JSONWriter.string(item.value)) in this template (it has: \(controls.map(\.id.rawValue).joined(separator: ", ")))")
                }
                ids.insert(ControlID(id))
            }
            guard !ids.isEmpty else { throw controlsNode.error("name at least one control (or \"*\")") }
            hooked = ids
        }
        let kinds = controls.filter { hooked?.contains($0.id) ?? true }.map { type(of: $0.control) }
        var intents: Set<String>? = nil
        if let intentsNode = node["intents"] {
            var names = Set<String>()
            for item in try intentsNode.array() {
                guard let name = item.value.stringValue, kinds.contains(where: { $0.intents.contains(name) }) else {
                    let known = Set(kinds.flatMap { $0.intents }).sorted()
                    throw item.error("no hooked control has an intent \(JSONWriter.string(item.value)) (they have: \(known.joined(separator: ", ")))")
                }
                names.insert(name)
            }
            guard !names.isEmpty else { throw intentsNode.error("name at least one intent (or leave intents out for every intent)") }
            intents = names
        }
        let onErrorText = try node.string("onError", default: OnError.deny.rawValue)
        guard let onError = OnError(rawValue: onErrorText) else { throw node.error(at: "onError", "must be \"deny\" or \"allow\"") }
        return IntentHook(
            url: url, controls: hooked, intents: intents, key: key,
            timeoutMs: try node.bounded("timeoutMs", try node.int("timeoutMs", default: defaultTimeoutMs), 50...60_000),
            onError: onError,
            maxWaiting: try node.bounded("maxWaiting", try node.int("maxWaiting", default: defaultMaxWaiting), 1...10_000))
    }
}

/// What the backend answered (`IntentHook.verdict(from:)`).
public enum HookVerdict: Sendable, Equatable {
    /// Apply the intent: with the backend's `args` instead of the client's, when it gave them.
    case allow(args: JSONObject?)
    /// Refuse it (`denied`), with the backend's code and words, when it gave them.
    case deny(code: String?, message: String?)
}

extension IntentHook {
    /// Reads an answer body: `{"allow": true}`, `{"allow": true, "args": {...}}`, or `{"allow": false, "code"?, "message"?}`
    /// (other members are ignored). Throws why it is not one.
    public static func verdict(from body: [UInt8]) throws(HookAnswerError) -> HookVerdict {
        let json: JSONValue
        do { json = try JSONParser.parse(body) } catch { throw HookAnswerError("the answer is not JSON (\(error.reason))") }
        guard let object = json.objectValue else { throw HookAnswerError("the answer is not a JSON object") }
        guard let allow = object["allow"]?.boolValue else { throw HookAnswerError("the answer has no boolean \"allow\"") }
        if allow {
            guard let args = object["args"], args != .null else { return .allow(args: nil) }
            guard let argsObject = args.objectValue else { throw HookAnswerError("the answer's \"args\" is not an object") }
            return .allow(args: argsObject)
        }
        var code: String? = nil
        if let value = object["code"], value != .null {
            guard let text = value.stringValue, ClientMessage.isValidName(text) else {
                throw HookAnswerError("the answer's \"code\" must be 1–64 characters of A–Z a–z 0–9 _ - . :")
            }
            code = text
        }
        var message: String? = nil
        if let value = object["message"], value != .null {
            guard let text = value.stringValue else { throw HookAnswerError("the answer's \"message\" is not a string") }
            message = text.count > maxDenialMessage ? String(text.prefix(maxDenialMessage - 1)) + "…" : text
        }
        return .deny(code: code, message: message)
    }
}

/// Why a hook's answer is not one.
public struct HookAnswerError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension Room {
    /// The body of the call asking the backend about `intent` (`{type, room, template, epoch, control, kind, intent, args,
    /// member: {session, name, roles, sub}, version, state}`), and the control's state it shows (nil: no such control
    /// or member).
    public func hookRequest(control id: ControlID, intent: String, args: JSONObject, by session: SessionID) -> (body: JSONObject, state: JSONValue)? {
        guard let control = controls[id], let member = members[session] else { return nil }
        let state = renderControl(id)
        let body: JSONObject = [
            "type": "intent.requested", "room": .string(name), "template": .string(template), "epoch": .string(epoch),
            "control": .string(id.rawValue), "kind": .string(type(of: control).kind), "intent": .string(intent), "args": .object(args),
            "member": [
                "session": .string(session.rawValue), "name": member.name.map { .string($0) } ?? .null,
                "roles": .array(member.roles.map { .string($0) }), "sub": member.user.map { .string($0) } ?? .null,
            ],
            "version": .int(version), "state": state,
        ]
        return (body, state)
    }

    /// A control's state as members see it whole (nil: no such control).
    public func controlState(_ id: ControlID) -> JSONValue? {
        controls[id] == nil ? nil : renderControl(id)
    }

    /// A control's own state, without who claims what (nil: no such control): what a hook's answer is checked against
    /// (a claim or its end is no change of the control's value).
    public func controlOwnState(_ id: ControlID) -> JSONValue? {
        controls[id]?.render(in: RoomView(controls: controls, clock: clock))
    }
}
