import LiveControlsProtocol

/// A named recipe for new rooms: its controls, in order, with their initial state.
public struct RoomTemplate: Sendable {
    public var name: String
    public var controls: [(id: ControlID, control: any Control)]
    /// Whether rooms list their members in `presence` (default true). Off, joins and leaves change
    /// nothing visible, which suits rooms with thousands of watchers.
    public var presence: Bool
    /// Which roles may send which intents, by control (`"permissions": {"wizard": {"next": ["host"]}}`).
    public var permissions: [ControlID: ControlPermissions]
    /// How controls treat claims (`"claims": {"signup": {"mode": "exclusive"}}`); unlisted controls: soft.
    public var claims: [ControlID: ClaimPolicy]
    /// The most a room's state may grow to (`Control.stateBytes` summed); an intent past it gets `too_large`.
    public var maxStateBytes: Int = RoomTemplate.defaultMaxStateBytes
    /// Intents its rooms ask the app's backend about before applying them (`"hooks": {"intent": {...}}`).
    public var intentHook: IntentHook?
    /// Who may broadcast in its rooms, how large and how often (`"broadcast"`).
    public var broadcast = BroadcastPolicy()
    /// How its rooms keep their members' changes for `undo` and `redo` (`"undo"`).
    public var undo = UndoPolicy()
    public static let defaultMaxStateBytes = 8 * 1024 * 1024

    public init(name: String, controls: [(id: ControlID, control: any Control)], presence: Bool = true,
                permissions: [ControlID: ControlPermissions] = [:], claims: [ControlID: ClaimPolicy] = [:]) {
        self.name = name
        self.controls = controls
        self.presence = presence
        self.permissions = permissions
        self.claims = claims
    }
}

/// What the `--config` file says (or the built-in default).
public struct ServerConfig: Sendable {
    public var templates: [String: RoomTemplate]
    /// Template for a `join` that names none.
    public var defaultTemplate: String
    /// Rooms created at start, by name → template.
    public var rooms: [(name: String, template: String)]
    /// Whether `join` may create a room that does not exist yet.
    public var createRoomsOnJoin: Bool
    /// How many recent patches each room keeps for resuming clients.
    public var historyLimit: Int
    /// Where webhooks go (none by default).
    public var webhooks: [WebhookEndpoint] = []
    /// How long `room.changed` gathers a room's changes into one event.
    public var webhookChangeIntervalMs: Int = 1_000

    public static let defaultHistoryLimit = 256

    /// Parses a config document; `file` names it in errors. `today` is the date the config is read on: pagers
    /// starting at `"current"` start there (the engine reads no clock; see `CivilDate.today(fromUnixSeconds:)`).
    public init(json: JSONValue, file: String, today: CivilDate) throws(ConfigError) {
        let root = ConfigNode(json, file: file)
        _ = try root.object(allowed: ["templates", "defaultTemplate", "rooms", "createRoomsOnJoin", "historyLimit", "webhooks", "webhookChangeIntervalMs"])
        guard let templatesNode = root["templates"] else { throw root.error(at: "templates", "required object is missing") }
        var templates: [String: RoomTemplate] = [:]
        for (name, node) in try templatesNode.members() {
            guard ClientMessage.isValidName(name) else { throw node.error("template name must be 1–64 characters of A–Z a–z 0–9 _ - . :") }
            _ = try node.object(allowed: ["controls", "presence", "permissions", "claims", "maxStateBytes", "hooks", "broadcast", "undo"])
            guard let controlsNode = node["controls"] else { throw node.error(at: "controls", "required object is missing") }
            var controls: [(ControlID, any Control)] = []
            for (id, controlNode) in try controlsNode.members() {
                guard ClientMessage.isValidName(id) else { throw controlNode.error("control id must be 1–64 characters of A–Z a–z 0–9 _ - . :") }
                controls.append((ControlID(id), try ControlKinds.make(controlNode, id: ControlID(id), today: today)))
            }
            var template = RoomTemplate(name: name, controls: controls, presence: try node.bool("presence", default: true),
                                        permissions: try RoomTemplate.parsePermissions(node["permissions"], controls: controls),
                                        claims: try RoomTemplate.parseClaims(node["claims"], controls: controls))
            template.maxStateBytes = try node.int("maxStateBytes", default: RoomTemplate.defaultMaxStateBytes)
            guard (1_024...(1 << 30)).contains(template.maxStateBytes) else { throw node.error(at: "maxStateBytes", "must be within 1024…1073741824") }
            template.intentHook = try IntentHook.parseHooks(node["hooks"], controls: controls)
            template.broadcast = try BroadcastPolicy.parse(node["broadcast"])
            template.undo = try UndoPolicy.parse(node["undo"])
            templates[name] = template
        }
        guard !templates.isEmpty else { throw templatesNode.error("at least one template is needed") }
        let defaultTemplate = try root.string("defaultTemplate", default: templatesNode.value.objectValue!.keys[0])
        guard templates[defaultTemplate] != nil else {
            throw root.error(at: "defaultTemplate", "no template named \"\(defaultTemplate)\"")
        }
        var rooms: [(String, String)] = []
        if let roomsNode = root["rooms"] {
            for (name, node) in try roomsNode.members() {
                guard ClientMessage.isValidName(name) else { throw node.error("room name must be 1–64 characters of A–Z a–z 0–9 _ - . :") }
                _ = try node.object(allowed: ["template"])
                let template = try node.string("template", default: defaultTemplate)
                guard templates[template] != nil else { throw node.error(at: "template", "no template named \"\(template)\"") }
                rooms.append((name, template))
            }
        }
        let historyLimit = try root.int("historyLimit", default: Self.defaultHistoryLimit)
        guard historyLimit >= 0 else { throw root.error(at: "historyLimit", "must be ≥ 0") }
        self.templates = templates
        self.defaultTemplate = defaultTemplate
        self.rooms = rooms
        self.createRoomsOnJoin = try root.bool("createRoomsOnJoin", default: true)
        self.historyLimit = historyLimit
        if let webhooksNode = root["webhooks"] {
            var urls: Set<String> = []
            for node in try webhooksNode.array() {
                let endpoint = try WebhookEndpoint.parse(node)
                guard urls.insert(endpoint.url).inserted else { throw node.error(at: "url", "a second endpoint with the same url") }
                webhooks.append(endpoint)
            }
        }
        webhookChangeIntervalMs = try root.int("webhookChangeIntervalMs", default: 1_000)
        guard (0...3_600_000).contains(webhookChangeIntervalMs) else { throw root.error(at: "webhookChangeIntervalMs", "must be within 0…3600000") }
    }

    /// Parses config text; JSON syntax errors name the line and column.
    public init(text: String, file: String, today: CivilDate) throws(ConfigError) {
        let json: JSONValue
        do { json = try JSONParser.parse(text) } catch {
            let (line, column) = Self.lineAndColumn(ofByte: error.offset, in: text)
            throw ConfigError(file: file, path: "", message: "not valid JSON: \(error.reason) at line \(line), column \(column)")
        }
        do {
            try self.init(json: json, file: file, today: today)
        } catch {
            var located = error
            (located.line, located.column) = Self.lineAndColumn(ofByte: Self.offset(ofPointer: error.path, in: Array(text.utf8)), in: text)
            throw located
        }
    }

    /// Where byte `offset` of `text` is, as people count: lines and columns from 1, a column counting
    /// characters (a tab is one), not bytes.
    static func lineAndColumn(ofByte offset: Int, in text: String) -> (line: Int, column: Int) {
        var line = 1
        var lineStart = 0
        for (i, byte) in text.utf8.prefix(offset).enumerated() where byte == UInt8(ascii: "\n") {
            line += 1
            lineStart = i + 1
        }
        let before = text.utf8.dropFirst(lineStart).prefix(max(0, offset - lineStart))
        return (line, String(decoding: before, as: UTF8.self).count + 1)
    }
}

extension ServerConfig {
    /// The ids of the controls that are dragged (`Control.takesDrags`: ranges) in any template: a drag's frames to one of
    /// them cost a fraction of a message (the transport's rate limit), in rooms of any template and on any cluster node.
    public var draggedControlIDs: Set<String> {
        var ids: Set<String> = []
        for template in templates.values {
            for (id, control) in template.controls where type(of: control).takesDrags { ids.insert(id.rawValue) }
        }
        return ids
    }
}
