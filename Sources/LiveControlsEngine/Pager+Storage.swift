import LiveControlsProtocol

extension Pager: StorableControl {
    public static let stateKeys: Set<String> = ["position", "hold", "generation"]

    /// A pager stored before `currentBounds` was kept: its `"current"` bounds count as such when they still stand for
    /// what the config's do today (a restart the same day restores it; a later day's starts anew, as it did then).
    public static func upgradeStored(_ state: inout JSONObject, configuredAs configured: Pager) {
        guard state["currentBounds"] == nil, !configured.currentBounds.isEmpty, case .object(let now) = configured.storedState,
              configured.currentBounds.allSatisfy({ state[$0] == now[$0] }) else { return }
        state["currentBounds"] = .array(configured.currentBounds.map { .string($0) })
    }

    /// `{label, domain, position, min?, max?, currentBounds?, step, radius, timing, hold?}`; positions and bounds as
    /// ordinals (`PagerPosition`), not in the domain's JSON form.
    public var storedState: JSONValue {
        var o: JSONObject = ["label": .string(label), "domain": .string(domain.rawValue), "position": .int(position)]
        o.setIfPresent("min", min.map { .int($0) })
        o.setIfPresent("max", max.map { .int($0) })
        if !currentBounds.isEmpty { o["currentBounds"] = .array(currentBounds.map { .string($0) }) }
        o["step"] = .int(step)
        o["radius"] = .int(radius)
        if generation > 0 { o["generation"] = .int(generation) }  // absent: 0 (and states written before it read so)
        storeHold(into: &o)
        return .object(o)
    }

    public init(storedState: JSONValue) throws(StoredStateError) {
        let s = StoredValue(storedState)
        let domain = try s.required("domain").raw(PagerDomain.self)
        let position = try s.int("position"), min = try s.optionalInt("min"), max = try s.optionalInt("max")
        let step = try s.int("step"), radius = try s.int("radius")
        guard step >= 1 else { throw s.error("step \(step) is below 1") }
        guard radius >= 0 else { throw s.error("radius \(radius) is below 0") }
        let natural = PagerPosition.naturalBounds(domain)
        let lower = Swift.max(min ?? natural.lowerBound, natural.lowerBound), upper = Swift.min(max ?? natural.upperBound, natural.upperBound)
        guard lower <= position, position <= upper else { throw s.error("position \(position) is outside its bounds") }
        self.init(label: try s.string("label"), domain: domain, position: position, min: min, max: max, step: step,
                  radius: radius, timing: try HoldTiming(stored: try s.required("timing")))
        hold = try Self.storedHold(s)
        generation = try s.optionalInt("generation") ?? 0
        if let names = s["currentBounds"] {
            currentBounds = try names.array().map { (n) throws(StoredStateError) in try n.string() }
            guard currentBounds.allSatisfy({ $0 == "min" || $0 == "max" }) else { throw names.error("currentBounds names min or max only") }
        }
    }

    /// A bound given as `"current"` counts as that setting, not as the day it was resolved to.
    public var settingsResolvedAtCreation: [String] { currentBounds }
}
