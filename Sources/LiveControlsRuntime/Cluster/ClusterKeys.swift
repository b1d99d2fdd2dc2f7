/// Redis key and channel names of one cluster (all under `ClusterOptions.keyPrefix`).
///
/// | name | type | holds |
/// |---|---|---|
/// | `lease:<room>` | string, TTL | the owner node's id |
/// | `fence:<room>` | integer | the fencing token, incremented at every acquisition |
/// | `state:<room>` | hash | `template`, `epoch`, `version`, `fence`, `c:<control>` (kind, newline, state), `x:<control>:<seq>` (its changes since: JSON Patch operations, from 1), `m:<session>` (member) |
/// | `hist:<room>` | list | the recent patches, as sent to clients (for resume) |
/// | `wh:<room>` | hash | webhook events not yet delivered everywhere: `#` (a counter), `<event id>` → `<seq>\n<endpoint URLs, tab-separated>\n<event JSON>` |
/// | `whsend:<room>` | string, TTL | the node sending the outbox of a room no node owns |
/// | `whfailed` | hash | deliveries given up: `<event id>\t<endpoint>` → JSON (`FailedWebhook`) |
/// | `alive:<node>` | string, TTL | present while the node runs |
/// | `deleted:<room>` | string, TTL | the epoch the server API deleted (for 10 minutes): a node that missed the deletion notice tells its members `room_deleted`, not that Redis lost the room |
/// | channel `p:<room>` | pub/sub | each patch, published once by the owner inside its fenced write |
/// | channel `n:<node>` | pub/sub | requests forwarded to the node, and replies for its sessions |
struct ClusterKeys: Sendable {
    let prefix: String

    func lease(_ room: String) -> String { prefix + "lease:" + room }
    func fence(_ room: String) -> String { prefix + "fence:" + room }
    func state(_ room: String) -> String { prefix + "state:" + room }
    func history(_ room: String) -> String { prefix + "hist:" + room }
    func alive(_ node: String) -> String { prefix + "alive:" + node }
    func deleted(_ room: String) -> String { prefix + "deleted:" + room }
    func webhooks(_ room: String) -> String { prefix + "wh:" + room }
    var failedWebhooks: String { prefix + "whfailed" }
    func outboxClaim(_ room: String) -> String { prefix + "whsend:" + room }
    func patches(_ room: String) -> String { prefix + "p:" + room }
    var patchPattern: String { prefix + "p:*" }
    func inbox(_ node: String) -> String { prefix + "n:" + node }

    /// The room a patch channel is for, or nil for any other channel.
    func room(ofPatchChannel channel: String) -> String? {
        let head = prefix + "p:"
        return channel.hasPrefix(head) ? String(channel.dropFirst(head.count)) : nil
    }
}
