import LiveControlsProtocol

/// Steps through a list of values (the ArrayStepper seed), shared by everyone in the room.
///
/// Every item gets a server-assigned id (`i1`, `i2`, … never reused), so equal values stay distinct
/// (the seed's `ASValue`). Items live in ordered sections (the seed's `ASSection`; a plain list is one
/// section without a header). `next`/`prev` walk the flattened order across sections, empty sections
/// included as nothing, and stop at the ends unless `wrap`. A display template turns each value into
/// the `label` clients show (the seed's `display` closure).
///
/// The selection is `null` only when the list is empty. Removing the selected item selects the item
/// that followed it in flattened order, else the one before it, else nothing.
public struct ListStepper: HoldableControl {
    public static let kind = "list"
    public static let intents = ["next", "prev", "press", "release", "select", "append", "insert", "move", "edit", "remove"]

    /// One value with its id.
    public struct Item: Sendable, Equatable {
        public let id: String
        public let value: JSONValue
        /// The value's size as JSON, kept with it so the list's size costs no encoding (`stateBytes`).
        public let bytes: Int
        /// What the item renders as, `{id, label, value}`, made once when the list takes the item. A list renders
        /// all its items for every intent on it: a kept object costs no label text, no allocation, and no comparison
        /// of its text when the change is diffed (equal storage compares equal at once).
        public let rendered: JSONValue

        /// `display` is the list's template, which makes the item's label.
        public init(id: String, value: JSONValue, display: DisplayTemplate?) {
            self.id = id
            self.value = value
            self.bytes = JSONWriter.encode(value).count
            let label = display?.render(value) ?? DisplayTemplate.text(of: value)
            self.rendered = ["id": .string(id), "label": .string(label), "value": value]
        }

        /// The item's label under the list's display template.
        public var label: String { rendered.objectValue?["label"]?.stringValue ?? "" }

        /// Same id, value and label; `bytes` tells `1` from `1.0` (which `JSONValue`'s `==` does not).
        public static func == (a: Item, b: Item) -> Bool { a.bytes == b.bytes && a.rendered == b.rendered }
    }

    /// A group of items with an optional header.
    public struct Section: Sendable, Equatable {
        public var id: String
        public var header: String?
        public var items: [Item]
    }

    public var label: String
    public var display: DisplayTemplate? {
        didSet { sections = sections.map { Section(id: $0.id, header: $0.header, items: $0.items.map { item($0.id, $0.value) }) } }
    }
    public var wrap: Bool
    /// Most items the list may hold; `append` beyond it is `out_of_range`.
    public var maxItems: Int
    public internal(set) var sections: [Section]
    /// The selected item's id, `nil` only when the list is empty.
    public internal(set) var selected: String?
    /// The number in the next assigned item id; ids are never reused within the control.
    public internal(set) var nextItemNumber: Int = 1
    public var timing: HoldTiming
    public var hold: Hold?
    /// What a `remove` of the selected item does (the config's `selectionPolicy`, kept as the seed keeps it).
    public var selectionPolicy: SelectionPolicy = .fail

    /// A list from section contents; items get ids `i1`, `i2`… in flattened order, and the item at
    /// flattened index `selectedIndex` is selected (nothing when the list is empty).
    public init(label: String, sections: [(id: String, header: String?, values: [JSONValue])], selectedIndex: Int = 0,
                display: DisplayTemplate? = nil, wrap: Bool = false, maxItems: Int = 1000,
                timing: HoldTiming = HoldTiming(intervalMs: 250)) {
        self.label = label
        self.display = display
        self.wrap = wrap
        self.maxItems = maxItems
        self.timing = timing
        self.sections = []
        for section in sections {
            var items: [Item] = []
            for value in section.values {
                items.append(item("i\(nextItemNumber)", value))
                nextItemNumber += 1
            }
            self.sections.append(Section(id: section.id, header: section.header, items: items))
        }
        let flat = self.items
        precondition(flat.isEmpty || flat.indices.contains(selectedIndex), "selectedIndex \(selectedIndex) outside the list")
        self.selected = flat.isEmpty ? nil : flat[selectedIndex].id
    }

    /// A list exactly as stored (`ListStepper+Storage.swift`); the caller has checked that `selected` is an
    /// item's id, nil only when there is none.
    init(label: String, display: DisplayTemplate?, wrap: Bool, maxItems: Int, sections: [Section], selected: String?,
         nextItemNumber: Int, timing: HoldTiming, hold: Hold?) {
        self.label = label
        self.display = display
        self.wrap = wrap
        self.maxItems = maxItems
        self.sections = sections
        self.selected = selected
        self.nextItemNumber = nextItemNumber
        self.timing = timing
        self.hold = hold
    }

    /// A plain list: one section without a header.
    public init(label: String, values: [JSONValue], selectedIndex: Int = 0, display: DisplayTemplate? = nil,
                wrap: Bool = false, timing: HoldTiming = HoldTiming(intervalMs: 250)) {
        self.init(label: label, sections: [(id: "s1", header: nil, values: values)], selectedIndex: selectedIndex,
                  display: display, wrap: wrap, timing: timing)
    }

    // MARK: Reading

    /// Every item in flattened order (sections in order, items in order).
    public var items: [Item] { sections.flatMap(\.items) }

    public var count: Int { sections.reduce(0) { $0 + $1.items.count } }

    /// Roughly what the list adds to its room's state: its items' values as JSON, plus a little per item.
    public var stateBytes: Int { sections.reduce(256) { $0 + $1.items.reduce(0) { $0 + $1.bytes + 32 } } }

    /// The flattened index of the item with `id` (found without flattening the list: this runs on every render).
    public func index(of id: String) -> Int? {
        var base = 0
        for section in sections {
            if let i = section.items.firstIndex(where: { $0.id == id }) { return base + i }
            base += section.items.count
        }
        return nil
    }

    /// A new item of this list: its label made by the list's display template.
    func item(_ id: String, _ value: JSONValue) -> Item { Item(id: id, value: value, display: display) }

    /// An item (by id) may be claimed.
    public func isClaimTarget(_ target: String) -> Bool { index(of: target) != nil }

    /// `remove`, `edit` and `move` write their item; moving the selection, appending and inserting write none.
    public func reach(of intent: String, args: IntentArgs) -> IntentReach {
        guard ["remove", "edit", "move"].contains(intent), let id = args.object["id"]?.stringValue else { return .navigation }
        return .parts([id])
    }

    public var selectedItem: Item? {
        guard let selected else { return nil }
        for section in sections {
            if let item = section.items.first(where: { $0.id == selected }) { return item }
        }
        return nil
    }

    public func render() -> JSONValue {
        let item = selectedItem
        return [
            "kind": .string(Self.kind), "label": .string(label),
            "selected": item.map { .string($0.id) } ?? .null,
            "selectedLabel": item.map { .string($0.label) } ?? .null,
            "value": item?.value ?? .null,
            "index": selected.flatMap { index(of: $0) }.map { .int($0) } ?? .null,
            "count": .int(count),
            "wrap": .bool(wrap), "selectionPolicy": .string(selectionPolicy.rawValue),
            "canNext": .bool(canStep(.next)), "canPrev": .bool(canStep(.prev)),
            "holding": holdingJSON,
            "sections": .array(sections.map { section in
                [
                    "id": .string(section.id),
                    "header": section.header.map { .string($0) } ?? .null,
                    "items": .array(section.items.map(\.rendered)),
                ]
            }),
        ]
    }

    // MARK: Stepping

    public func canStep(_ direction: Direction) -> Bool {
        guard let selected, let i = index(of: selected) else { return false }
        let n = count
        guard n > 1 else { return false }
        if wrap { return true }
        return direction == .next ? i < n - 1 : i > 0
    }

    public mutating func step(_ direction: Direction) { step(direction, count: 1) }

    /// `count` items on, wrapping around the ends (`wrap`) or stopping at the last (first) item.
    public mutating func step(_ direction: Direction, count: Int) {
        let flat = items
        guard let selected, let i = flat.firstIndex(where: { $0.id == selected }), !flat.isEmpty else { return }
        let n = flat.count
        let j: Int
        if wrap {
            let k = count % n
            j = direction == .next ? (i + k) % n : (i - k + n) % n
        } else {
            j = direction == .next ? i + Swift.min(count, n - 1 - i) : i - Swift.min(count, i)
        }
        self.selected = flat[j].id
    }

    // MARK: Intents

    public mutating func apply(_ intent: String, args: IntentArgs, by session: SessionID, at now: Instant, room: RoomView) throws(IntentError) -> ControlEvents {
        if let events = try applySequential(intent, args: args, by: session, at: now) { return events }
        switch intent {
        case "select":
            let id = try args.string("id")
            guard index(of: id) != nil else { throw IntentError(.notFound, "the list has no item \"\(id)\"") }
            selected = id
        case "append":
            let value = try args.value("value")
            let sectionID = try args.optionalString("section")
            let s: Int
            if let sectionID {
                guard let found = sections.firstIndex(where: { $0.id == sectionID }) else {
                    throw IntentError(.notFound, "the list has no section \"\(sectionID)\" (it has: \(sections.map(\.id).joined(separator: ", ")))")
                }
                s = found
            } else {
                s = sections.count - 1
            }
            guard count < maxItems else { throw IntentError(.outOfRange, "the list is full (\(maxItems) items)") }
            let id = appendItem(value, toSection: s)
            if selected == nil { selected = id }
        case "remove": try remove(args)
        case "insert": try insert(args)
        case "move": try move(args)
        case "edit": try edit(args)
        default:
            throw Self.unknownIntent(intent, known: Self.intents)
        }
        return endHoldAtBound()
    }

    /// Appends `value` to section `s` with a fresh id, and returns the id.
    @discardableResult
    mutating func appendItem(_ value: JSONValue, toSection s: Int) -> String {
        let id = "i\(nextItemNumber)"
        nextItemNumber += 1
        sections[s].items.append(item(id, value))
        return id
    }

    /// Takes the item out of its section and returns it.
    @discardableResult
    mutating func removeItem(_ id: String) -> Item? {
        for s in sections.indices {
            if let i = sections[s].items.firstIndex(where: { $0.id == id }) {
                return sections[s].items.remove(at: i)
            }
        }
        return nil
    }

    /// Ends a running hold that can no longer step (the selection moved to an end, or the list emptied).
    private mutating func endHoldAtBound() -> ControlEvents {
        guard let hold, !canStep(hold.direction) else { return .none }
        self.hold = nil
        return ControlEvents(ended: [HoldEnd(session: hold.session, reason: .bound)])
    }

    mutating func select(flatIndex: Int) { selected = items[flatIndex].id }
}
