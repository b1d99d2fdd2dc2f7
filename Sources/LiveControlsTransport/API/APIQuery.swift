/// The query arguments an API route reads, checked before the route runs: each at most once (`?after=1&after=2` is
/// not one version), integers in plain decimal (`0`, `17`; not `+1`, `01`, `1.0`). Arguments a route does not read
/// are ignored, as HTTP servers do.
enum APIQuery {
    /// The query arguments `route` reads.
    static func parameters(of route: APIRoute) -> [String] {
        switch route {
        case .patches: return ["after", "epoch"]
        case .failedWebhooks: return ["limit"]
        default: return []
        }
    }

    /// The arguments `route` reads, by name, from the request's `arguments` (in order, percent-decoded; an argument
    /// without `=` has the empty value); 400 `invalid_message` when one of them is given more than once.
    static func read(_ arguments: [(name: String, value: String?)], for route: APIRoute) -> Result<[String: String], APIError> {
        var query: [String: String] = [:]
        for name in parameters(of: route) {
            let values = arguments.filter { $0.name == name }
            guard values.count <= 1 else { return .failure(.badBody("the query gives \(name) \(values.count) times; give it once")) }
            if let value = values.first?.value { query[name] = value ?? "" }
        }
        return .success(query)
    }

    /// A query integer in plain decimal: `0`, or digits not starting with `0`, within `Int`; nil for anything else.
    static func integer(_ text: String) -> Int? {
        let digits = text.utf8
        guard let first = digits.first, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        guard first != UInt8(ascii: "0") || digits.count == 1 else { return nil }
        return Int(text)
    }
}
