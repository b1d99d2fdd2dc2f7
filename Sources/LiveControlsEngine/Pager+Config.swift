import LiveControlsProtocol

extension Pager {
    /// Reads a pager from its template entry: `domain` (`integer`, `month`, `day`; default `integer`),
    /// `start` (a position, or `"current"` for today's month or day), `min`, `max`, `step`, `radius`, `hold`.
    ///
    /// `today` comes from whoever reads the config (the server: the UTC date when it loads it); `"current"`
    /// and the default start of calendar domains are its month or day.
    public init(config node: ConfigNode, id: ControlID, today: CivilDate) throws(ConfigError) {
        _ = try node.object(allowed: ["kind", "label", "domain", "start", "min", "max", "step", "radius", "hold"])
        let domainName = try node.string("domain", default: PagerDomain.integer.rawValue)
        guard let domain = PagerDomain(rawValue: domainName) else {
            throw node.error(at: "domain", "must be one of \(PagerDomain.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")), got \"\(domainName)\"")
        }
        func position(_ key: String) throws(ConfigError) -> Int? {
            guard let n = node[key] else { return nil }
            if n.value == "current" {
                guard domain != .integer else { throw n.error("\"current\" needs a month or day domain") }
                return PagerPosition.ordinal(of: today, in: domain)
            }
            do { return try PagerPosition.parse(n.value, in: domain) } catch { throw n.error(error.message) }
        }
        // A bound given as "current" moves with the date: where it would pass the other bound it stops there, and an
        // explicit start outside bounds that move is moved into them — a config that loads today loads on any day.
        func isCurrent(_ key: String) -> Bool { node[key]?.value == "current" }
        var min = try position("min")
        var max = try position("max")
        if let lo = min, let hi = max, lo > hi {
            if isCurrent("min") {
                min = hi
            } else if isCurrent("max") {
                max = lo
            } else {
                throw node.error(at: "max", "\(JSONWriter.string(PagerPosition.json(hi, in: domain))) is before min \(JSONWriter.string(PagerPosition.json(lo, in: domain)))")
            }
        }
        let step = try node.int("step", default: 1)
        guard (1...1_000_000).contains(step) else { throw node.error(at: "step", "must be 1…1000000") }
        let radius = try node.int("radius", default: 2)
        guard (0...50).contains(radius) else { throw node.error(at: "radius", "must be 0…50") }
        let bounds = Swift.max(min ?? .min, PagerPosition.naturalBounds(domain).lowerBound)...Swift.min(max ?? .max, PagerPosition.naturalBounds(domain).upperBound)
        // An explicit start, or the default — 0 for integers, today for calendars, and `"current"` written out (today
        // moves, so a config that starts today must not stop starting once today passes `max`) — moved into the bounds.
        let preferred: Int
        if let explicit = try position("start"), !isCurrent("start") {  // (position refuses "current" for integers)
            guard bounds.contains(explicit) || isCurrent("min") || isCurrent("max") else {
                throw node.error(at: "start", "\(JSONWriter.string(PagerPosition.json(explicit, in: domain))) is outside min…max")
            }
            preferred = explicit
        } else {
            preferred = domain == .integer ? 0 : PagerPosition.ordinal(of: today, in: domain)
        }
        let start = Swift.min(Swift.max(preferred, bounds.lowerBound), bounds.upperBound)
        self.init(label: try node.string("label", default: id.rawValue), domain: domain, position: start,
                  min: min, max: max, step: step, radius: radius, timing: try node.holdTiming(defaultIntervalMs: 250))
        currentBounds = ["min", "max"].filter(isCurrent)
    }
}
