import LiveControlsProtocol

/// Takes one change back out of a control's stored state while keeping everything others changed since: a three-way
/// merge of `before` and `after` (the change) into `current`.
///
/// The change is cut into its smallest parts: object members are compared one by one, and so are the elements of an
/// array whose elements are objects with an identity (an `id` string, or a `session` — list items, sections, form
/// elements and fields, wizard steps, poll ballots), which are matched by it. Any other value (a number, a string, an
/// array of plain values) is one part. Each part the change made must still be as the change left it; it then goes back
/// to what it was. A part someone else changed since is an `UndoConflict` naming its path.
///
/// Identified arrays: elements the change added are taken out, elements it removed come back after the element that
/// preceded them (or first), and elements changed inside are merged the same way. An order the change made (a move) goes
/// back only while the array still has exactly that order.
public enum StateMerge {
    public static func revert(before: JSONValue, after: JSONValue, current: JSONValue) throws(UndoConflict) -> JSONValue {
        try revert(before, after, current, at: [])
    }

    /// The paths of the smallest parts `before` → `after` changed (in the same terms as `revert`).
    public static func changedPaths(before: JSONValue, after: JSONValue) -> [[String]] {
        var paths: [[String]] = []
        collect(before, after, at: [], into: &paths)
        return paths
    }

    /// Whether two paths reach the same part (one holds the other).
    public static func overlap(_ a: [String], _ b: [String]) -> Bool {
        a.count <= b.count ? Array(b.prefix(a.count)) == a : Array(a.prefix(b.count)) == b
    }

    private static func revert(_ b: JSONValue, _ a: JSONValue, _ c: JSONValue, at path: [String]) throws(UndoConflict) -> JSONValue {
        if b == a { return c }
        switch (b, a, c) {
        case let (.object(bo), .object(ao), .object(co)):
            var result = co
            for key in union(bo.keys, ao.keys) {
                let bv = bo[key], av = ao[key]
                if bv == av { continue }
                if let bv, let av, let cv = co[key], isComposite(bv, av, cv) {
                    result[key] = try revert(bv, av, cv, at: path + [key])
                } else {
                    guard co[key] == av else { throw UndoConflict(path: path + [key], "changed since") }
                    result[key] = bv
                }
            }
            return .object(result)
        case let (.array(ba), .array(aa), .array(ca)):
            if let bk = keyed(ba), let ak = keyed(aa), let ck = keyed(ca) {
                return .array(try revertKeyed(ba, bk, aa, ak, ca, ck, at: path))
            }
            fallthrough
        default:
            guard c == a else { throw UndoConflict(path: path, "changed since") }
            return b
        }
    }

    private static func revertKeyed(_ b: [JSONValue], _ bk: [String], _ a: [JSONValue], _ ak: [String], _ c: [JSONValue], _ ck: [String],
                                    at path: [String]) throws(UndoConflict) -> [JSONValue] {
        let bIndex = Dictionary(bk.enumerated().map { ($1, $0) }, uniquingKeysWith: { x, _ in x })
        let aIndex = Dictionary(ak.enumerated().map { ($1, $0) }, uniquingKeysWith: { x, _ in x })
        let cIndex = Dictionary(ck.enumerated().map { ($1, $0) }, uniquingKeysWith: { x, _ in x })
        // The order the change made, among the elements it kept: a move puts back the whole order, and needs it untouched.
        let keptB = bk.filter { aIndex[$0] != nil }, keptA = ak.filter { bIndex[$0] != nil }
        let moved = keptB != keptA
        // Others may have added or removed elements since, but not reordered those the change left.
        if moved, ak.filter({ cIndex[$0] != nil }) != ck.filter({ aIndex[$0] != nil }) { throw UndoConflict(path: path, "reordered since") }
        var result: [JSONValue] = []
        var resultKeys: [String] = []
        result.reserveCapacity(c.count)
        for (i, key) in ck.enumerated() {
            guard let ai = aIndex[key] else {
                // Not in what the change left: someone else added it since, or the change removed it (and it is back).
                if bIndex[key] != nil { throw UndoConflict(path: path + ["#" + key], "added again since") }
                result.append(c[i]); resultKeys.append(key)
                continue
            }
            guard let bi = bIndex[key] else {
                // The change added it: it goes, if it is as the change left it.
                guard c[i] == a[ai] else { throw UndoConflict(path: path + ["#" + key], "changed since") }
                continue
            }
            result.append(try revert(b[bi], a[ai], c[i], at: path + ["#" + key])); resultKeys.append(key)
        }
        // What the change added or changed and someone removed since: the undo would take back what is gone.
        for (ai, key) in ak.enumerated() where cIndex[key] == nil {
            if let bi = bIndex[key], b[bi] == a[ai] { continue }
            throw UndoConflict(path: path + ["#" + key], "removed since")
        }
        // What the change removed comes back after the element before it (the nearest one still there), or first.
        for (bi, key) in bk.enumerated() where aIndex[key] == nil {
            var position = 0
            var j = bi - 1
            while j >= 0 {
                if let at = resultKeys.firstIndex(of: bk[j]) { position = at + 1; break }
                j -= 1
            }
            result.insert(b[bi], at: position); resultKeys.insert(key, at: position)
        }
        guard moved else { return result }
        // The change moved elements (and nothing reordered since): the order before it for the elements from then, and
        // what others added since after the element before it.
        let byKey = Dictionary(zip(resultKeys, result).map { ($0, $1) }, uniquingKeysWith: { x, _ in x })
        var ordered = bk.filter { byKey[$0] != nil }
        for (i, key) in resultKeys.enumerated() where bIndex[key] == nil {
            var position = 0
            var j = i - 1
            while j >= 0 {
                if let at = ordered.firstIndex(of: resultKeys[j]) { position = at + 1; break }
                j -= 1
            }
            ordered.insert(key, at: position)
        }
        return ordered.map { byKey[$0]! }
    }

    private static func collect(_ b: JSONValue, _ a: JSONValue, at path: [String], into paths: inout [[String]]) {
        if b == a { return }
        switch (b, a) {
        case let (.object(bo), .object(ao)):
            for key in union(bo.keys, ao.keys) {
                if let bv = bo[key], let av = ao[key], isComposite(bv, av, av) { collect(bv, av, at: path + [key], into: &paths) }
                else if bo[key] != ao[key] { paths.append(path + [key]) }
            }
        case let (.array(ba), .array(aa)):
            guard let bk = keyed(ba), let ak = keyed(aa) else { return paths.append(path) }
            let bIndex = Dictionary(bk.enumerated().map { ($1, $0) }, uniquingKeysWith: { x, _ in x })
            let aIndex = Dictionary(ak.enumerated().map { ($1, $0) }, uniquingKeysWith: { x, _ in x })
            if bk.filter({ aIndex[$0] != nil }) != ak.filter({ bIndex[$0] != nil }) { paths.append(path) }
            for key in union(bk, ak) {
                if let bi = bIndex[key], let ai = aIndex[key] { collect(ba[bi], aa[ai], at: path + ["#" + key], into: &paths) }
                else { paths.append(path + ["#" + key]) }
            }
        default:
            paths.append(path)
        }
    }

    /// Both sides objects, or identified arrays: merged part by part.
    private static func isComposite(_ b: JSONValue, _ a: JSONValue, _ c: JSONValue) -> Bool {
        switch (b, a, c) {
        case (.object, .object, .object): return true
        case let (.array(x), .array(y), .array(z)): return keyed(x) != nil && keyed(y) != nil && keyed(z) != nil
        default: return false
        }
    }

    /// The identities of an array's elements, when each is an object with one (`id`, or a `session`'s `rawValue`) and
    /// they are distinct; nil otherwise (then the array is one part).
    static func keyed(_ array: [JSONValue]) -> [String]? {
        var keys: [String] = []
        keys.reserveCapacity(array.count)
        var seen = Set<String>()
        for element in array {
            guard case let .object(o) = element else { return nil }
            let key: String
            if case let .string(id)? = o["id"] { key = id }
            else if case let .object(s)? = o["session"], case let .string(raw)? = s["rawValue"] { key = raw }
            else { return nil }
            guard seen.insert(key).inserted else { return nil }
            keys.append(key)
        }
        return keys
    }

    private static func union(_ x: [String], _ y: [String]) -> [String] {
        var seen = Set(x)
        return x + y.filter { seen.insert($0).inserted }
    }
}
