import LiveControlsProtocol

extension ListStepper: StorableControl {
    public static let stateKeys: Set<String> = ["sections", "selected", "nextItemNumber", "hold"]

    /// A list stored before its selection policy was kept takes the template's.
    public static func upgradeStored(_ state: inout JSONObject, configuredAs configured: ListStepper) {
        if state["selectionPolicy"] == nil { state["selectionPolicy"] = .string(configured.selectionPolicy.rawValue) }
    }

    /// `{label, display?, wrap, maxItems, sections, selected?, nextItemNumber, timing, hold?}`; each section
    /// `{id, header?, items}`, each item `{id, json}` with the value itself, nested (exact: objects keep their
    /// key order, `1` stays apart from `1.0`). Earlier releases stored `{id, value}` with the value as JSON
    /// text inside a string; that shape is still read. `ControlCoding` parses stored states with room for
    /// the state's own nesting above the deepest value a client may send.
    public var storedState: JSONValue {
        var o: JSONObject = ["label": .string(label)]
        o.setIfPresent("display", display.map { .string($0.source) })
        o["wrap"] = .bool(wrap)
        o["maxItems"] = .int(maxItems)
        o["sections"] = .array(sections.map { section in
            var s: JSONObject = ["id": .string(section.id)]
            s.setIfPresent("header", section.header.map { .string($0) })
            s["items"] = .array(section.items.map { ["id": .string($0.id), "json": $0.value] })
            return .object(s)
        })
        o.setIfPresent("selected", selected.map { .string($0) })
        o["nextItemNumber"] = .int(nextItemNumber)
        o["selectionPolicy"] = .string(selectionPolicy.rawValue)
        storeHold(into: &o)
        return .object(o)
    }

    /// A list's sections hold its items (use changes those), but their ids and headers only the config sets.
    public var settingsInsideState: JSONObject {
        ["sectionLayout": .array(sections.map { section in
            var s: JSONObject = ["id": .string(section.id)]
            s.setIfPresent("header", section.header.map { .string($0) })
            return .object(s)
        })]
    }

    public init(storedState: JSONValue) throws(StoredStateError) {
        let s = StoredValue(storedState)
        var display: DisplayTemplate? = nil
        if let d = s["display"] {
            let source = try d.string()
            do { display = try DisplayTemplate(source) } catch { throw d.error(error.message) }
        }
        var sections: [Section] = []
        var ids: Set<String> = []
        for section in try s.array("sections") {
            var items: [Item] = []
            for item in try section.array("items") {
                let id = try item.string("id")
                guard ids.insert(id).inserted else { throw item.error("duplicate item id \"\(id)\"") }
                let value: JSONValue
                if let nested = item.value.objectValue?["json"] {
                    value = nested  // `null` included: a list item's value may be null
                } else {
                    // The shape of earlier releases: the value as JSON text.
                    let text = try item.required("value")
                    let source = try text.string()
                    do { value = try JSONParser.parse(source) } catch { throw text.error("not JSON: \(error)") }
                }
                items.append(Item(id: id, value: value, display: display))
            }
            sections.append(Section(id: try section.string("id"), header: try section.optionalString("header"), items: items))
        }
        let selected = try s.optionalString("selected")
        if let selected {
            guard ids.contains(selected) else { throw s.error("selected item \"\(selected)\" is not in the list") }
        } else if !ids.isEmpty {
            throw s.error("nothing is selected in a list of \(ids.count) items")
        }
        self.init(label: try s.string("label"), display: display, wrap: try s.bool("wrap"), maxItems: try s.int("maxItems"),
                  sections: sections, selected: selected, nextItemNumber: try s.int("nextItemNumber"),
                  timing: try HoldTiming(stored: try s.required("timing")), hold: try Self.storedHold(s))
        selectionPolicy = try s["selectionPolicy"]?.raw(SelectionPolicy.self) ?? .fail  // absent: written before it was kept
    }
}
