/// An edit of a text, as operational transformation needs it (the ot.js model): a walk over the whole text that
/// retains, inserts and deletes Unicode scalar values. `transform` makes two edits of one text apply in either order
/// to the same result; a `text` control transforms each client's splice against the splices applied since the revision
/// it was made on, so people typing in one note at once all keep their text.
public struct TextOperation: Sendable, Equatable {
    public enum Component: Sendable, Equatable {
        case retain(Int)
        case insert([Unicode.Scalar])
        case delete(Int)
    }

    public private(set) var components: [Component] = []
    /// The length (scalars) of the text it applies to, and of the text it makes.
    public private(set) var baseLength = 0
    public private(set) var targetLength = 0

    public init() {}

    /// The edit of a text of `length` scalars that deletes `delete` from `at` and inserts `insert` there.
    public init(length: Int, at: Int, delete: Int, insert: [Unicode.Scalar]) {
        precondition(at >= 0 && delete >= 0 && at + delete <= length)
        retain(at)
        self.insert(insert)
        self.delete(delete)
        retain(length - at - delete)
    }

    public mutating func retain(_ n: Int) {
        guard n > 0 else { return }
        baseLength += n
        targetLength += n
        if case let .retain(m)? = components.last { components[components.count - 1] = .retain(m + n) } else { components.append(.retain(n)) }
    }

    /// Inserts; next to a delete the insert comes first (one normal form, as ot.js keeps).
    public mutating func insert(_ s: [Unicode.Scalar]) {
        guard !s.isEmpty else { return }
        targetLength += s.count
        switch components.last {
        case let .insert(t)?:
            components[components.count - 1] = .insert(t + s)
        case .delete?:
            if components.count >= 2, case let .insert(t) = components[components.count - 2] {
                components[components.count - 2] = .insert(t + s)
            } else {
                components.insert(.insert(s), at: components.count - 1)
            }
        default:
            components.append(.insert(s))
        }
    }

    public mutating func delete(_ n: Int) {
        guard n > 0 else { return }
        baseLength += n
        if case let .delete(m)? = components.last { components[components.count - 1] = .delete(m + n) } else { components.append(.delete(n)) }
    }

    /// How many scalars it inserts.
    public var insertedCount: Int { components.reduce(0) { if case let .insert(s) = $1 { $0 + s.count } else { $0 } } }

    /// Whether it changes nothing.
    public var isNoop: Bool { components.allSatisfy { if case .retain = $0 { true } else { false } } }

    /// The text it makes of `text` (whose length must be `baseLength`).
    public func apply(to text: [Unicode.Scalar]) -> [Unicode.Scalar] {
        precondition(text.count == baseLength, "an operation on \(baseLength) scalars applied to \(text.count)")
        var result: [Unicode.Scalar] = []
        result.reserveCapacity(targetLength)
        var index = 0
        for component in components {
            switch component {
            case let .retain(n): result.append(contentsOf: text[index..<(index + n)]); index += n
            case let .insert(s): result.append(contentsOf: s)
            case let .delete(n): index += n
            }
        }
        return result
    }

    /// The edit as splices applied one after another, left to right: `at` in the text as the splices before it left it.
    public var splices: [(at: Int, delete: Int, insert: [Unicode.Scalar])] {
        var result: [(at: Int, delete: Int, insert: [Unicode.Scalar])] = []
        var position = 0
        var pending: (at: Int, delete: Int, insert: [Unicode.Scalar])?
        func flush() {
            if let p = pending { result.append(p) }
            pending = nil
        }
        for component in components {
            switch component {
            case let .retain(n):
                flush()
                position += n
            case let .insert(s):
                if pending == nil { pending = (position, 0, []) }
                pending!.insert += s
                position += s.count
            case let .delete(n):
                if pending == nil { pending = (position, 0, []) }
                pending!.delete += n
            }
        }
        flush()
        return result
    }

    /// `a` and `b` are edits of one text; returns `(a', b')` with `b` then `a'` making what `a` then `b'` makes. Where
    /// both insert at one place, `a`'s insert comes first.
    public static func transform(_ a: TextOperation, _ b: TextOperation) -> (TextOperation, TextOperation) {
        precondition(a.baseLength == b.baseLength, "transform of edits of different texts")
        var aPrime = TextOperation(), bPrime = TextOperation()
        var i = 0, j = 0
        var c1: Component? = a.components.first, c2: Component? = b.components.first
        func next1() { i += 1; c1 = i < a.components.count ? a.components[i] : nil }
        func next2() { j += 1; c2 = j < b.components.count ? b.components[j] : nil }
        while c1 != nil || c2 != nil {
            if case let .insert(s)? = c1 {
                aPrime.insert(s)
                bPrime.retain(s.count)
                next1()
                continue
            }
            if case let .insert(s)? = c2 {
                aPrime.retain(s.count)
                bPrime.insert(s)
                next2()
                continue
            }
            guard let x = c1, let y = c2 else { preconditionFailure("edits of different lengths") }
            switch (x, y) {
            case let (.retain(n), .retain(m)):
                let k = min(n, m)
                aPrime.retain(k)
                bPrime.retain(k)
                if n > m { c1 = .retain(n - m); next2() } else if n < m { c2 = .retain(m - n); next1() } else { next1(); next2() }
            case let (.delete(n), .delete(m)):
                if n > m { c1 = .delete(n - m); next2() } else if n < m { c2 = .delete(m - n); next1() } else { next1(); next2() }
            case let (.delete(n), .retain(m)):
                let k = min(n, m)
                aPrime.delete(k)
                if n > m { c1 = .delete(n - m); next2() } else if n < m { c2 = .retain(m - n); next1() } else { next1(); next2() }
            case let (.retain(n), .delete(m)):
                let k = min(n, m)
                bPrime.delete(k)
                if n > m { c1 = .retain(n - m); next2() } else if n < m { c2 = .delete(m - n); next1() } else { next1(); next2() }
            default:
                preconditionFailure("inserts were taken above")
            }
        }
        return (aPrime, bPrime)
    }
}
