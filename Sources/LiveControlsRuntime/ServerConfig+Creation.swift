import LiveControlsEngine
import LiveControlsProtocol

/// The rules for a `join` that would create a room, shared by one node (`RoomRegistry`) and a cluster
/// (`ClusterDirectory`).
extension ServerConfig {
    /// Why a join may not create room `name` (nil: it may). Rooms of the config always may be created.
    func creationRefusal(room name: String, template: String?,
                         mayCreate: (_ template: String?, _ defaultTemplate: String) -> ProtocolError?) -> ProtocolError? {
        guard !hasRoom(named: name) else { return nil }
        if var refusal = mayCreate(template, defaultTemplate) {
            refusal.room = name
            return refusal
        }
        guard createRoomsOnJoin else {
            return ProtocolError(.unknownRoom, "room \(name) does not exist and this server does not create rooms on join", room: name)
        }
        return nil
    }

    /// Whether `name` is one of the config's rooms (those always may be created, and take no creation share).
    func hasRoom(named name: String) -> Bool { rooms.contains { $0.name == name } }

    /// The template a stored room `name` goes on with: a config room's template as the config has it now (a room the
    /// config moved to another template starts anew from that one: `RoomRegistry.load`, the cluster's takeover), any
    /// other room the one it was stored with.
    func templateName(forStoredRoom name: String, storedWith stored: String) -> String {
        rooms.first(where: { $0.name == name })?.template ?? stored
    }

    /// The template a new room `name` is made from: the config's for its rooms, else the one asked for or the default.
    func recipe(forRoom name: String, template: String?) throws(ProtocolError) -> RoomTemplate {
        let templateName = rooms.first(where: { $0.name == name })?.template ?? template ?? defaultTemplate
        guard let recipe = templates[templateName] else {
            let known = templates.keys.sorted().joined(separator: ", ")
            throw ProtocolError(.unknownTemplate, "no template \"\(templateName)\" (known: \(known))", room: name)
        }
        return recipe
    }
}
