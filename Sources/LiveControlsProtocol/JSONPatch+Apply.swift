/// Why a patch could not be applied.
public struct PatchError: Error, Equatable, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}

extension JSONValue {
    /// Applies RFC 6902 `add`, `remove` and `replace` operations, as any client library would.
    public func applying(_ ops: [PatchOp]) throws(PatchError) -> JSONValue {
        var doc = self
        for op in ops {
            switch op {
            case let .add(path, value): try doc.apply(.add, path.tokens[...], value, path)
            case let .remove(path): try doc.apply(.remove, path.tokens[...], nil, path)
            case let .replace(path, value): try doc.apply(.replace, path.tokens[...], value, path)
            }
        }
        return doc
    }

    private enum Kind { case add, remove, replace }

    private mutating func apply(_ kind: Kind, _ tokens: ArraySlice<String>, _ value: JSONValue?, _ path: JSONPointer) throws(PatchError) {
        guard let token = tokens.first else {
            guard kind != .remove else { throw PatchError(reason: "cannot remove the root") }
            self = value!
            return
        }
        let last = tokens.count == 1
        switch self {
        case var .object(object):
            if last {
                switch kind {
                case .add: object[token] = value
                case .replace:
                    guard object[token] != nil else { throw PatchError(reason: "replace: \(path) does not exist") }
                    object[token] = value
                case .remove:
                    guard object[token] != nil else { throw PatchError(reason: "remove: \(path) does not exist") }
                    object[token] = nil
                }
            } else {
                guard var child = object[token] else { throw PatchError(reason: "\(path): no member \(token)") }
                try child.apply(kind, tokens.dropFirst(), value, path)
                object[token] = child
            }
            self = .object(object)
        case var .array(array):
            if last {
                if kind == .add && token == "-" {
                    array.append(value!)
                } else {
                    guard let i = Int(token), i >= 0 else { throw PatchError(reason: "\(path): bad array index") }
                    switch kind {
                    case .add:
                        guard i <= array.count else { throw PatchError(reason: "\(path): index out of bounds") }
                        array.insert(value!, at: i)
                    case .replace:
                        guard i < array.count else { throw PatchError(reason: "\(path): index out of bounds") }
                        array[i] = value!
                    case .remove:
                        guard i < array.count else { throw PatchError(reason: "\(path): index out of bounds") }
                        array.remove(at: i)
                    }
                }
            } else {
                guard let i = Int(token), array.indices.contains(i) else { throw PatchError(reason: "\(path): bad array index") }
                try array[i].apply(kind, tokens.dropFirst(), value, path)
            }
            self = .array(array)
        default:
            throw PatchError(reason: "\(path): \(token) is not inside a container")
        }
    }
}

extension PatchOp {
    /// Reads one operation from its JSON form (`add`, `remove`, `replace` only).
    public init(json: JSONValue) throws(PatchError) {
        guard let op = json["op"]?.stringValue, let pathText = json["path"]?.stringValue,
              let path = JSONPointer(parsing: pathText)
        else { throw PatchError(reason: "operation needs op and path") }
        switch op {
        case "add":
            guard let v = json["value"] else { throw PatchError(reason: "add needs a value") }
            self = .add(path: path, value: v)
        case "replace":
            guard let v = json["value"] else { throw PatchError(reason: "replace needs a value") }
            self = .replace(path: path, value: v)
        case "remove": self = .remove(path: path)
        default: throw PatchError(reason: "unsupported op \(op)")
        }
    }
}
