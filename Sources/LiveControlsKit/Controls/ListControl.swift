/// Steps through a list of values in sections (ArrayStepper); items keep server-assigned ids.
@MainActor
public struct ListControl: SequentialControl {
    public static let kind = "list"
    public let control: LiveControl
    public init(unchecked control: LiveControl) { self.control = control }

    public struct Item: Sendable, Equatable, Identifiable {
        public var id: String
        /// The item shown through the list's display template.
        public var label: String
        public var value: JSONValue
    }

    public struct Section: Sendable, Equatable, Identifiable {
        public var id: String
        public var header: String?
        public var items: [Item]
    }

    /// The selected item's id; nil only when the list is empty.
    public var selected: String? { json["selected"]?.stringValue }
    /// The selected item as displayed (the seed's display label).
    public var selectedLabel: String? { json["selectedLabel"]?.stringValue }
    /// The selected item's value.
    public var value: JSONValue { json["value"] ?? .null }
    /// The selected item's position in the flattened order.
    public var index: Int? { json["index"]?.intValue }
    public var count: Int { json["count"]?.intValue ?? 0 }
    public var wrap: Bool { json["wrap"]?.boolValue ?? false }
    /// What removing the selected item does: `fail`, `first` or `append`.
    public var selectionPolicy: String { json["selectionPolicy"]?.stringValue ?? "fail" }
    public var sections: [Section] {
        (json["sections"]?.arrayValue ?? []).map { section in
            Section(id: section["id"]?.stringValue ?? "", header: section["header"]?.stringValue,
                    items: (section["items"]?.arrayValue ?? []).map { item in
                        Item(id: item["id"]?.stringValue ?? "", label: item["label"]?.stringValue ?? "",
                             value: item["value"] ?? .null)
                    })
        }
    }
    /// Every item in the flattened order `next` walks.
    public var items: [Item] { sections.flatMap(\.items) }

    @discardableResult public func select(_ id: String) async throws -> Int { try await control.send("select", ["id": .string(id)]) }

    /// Appends a value (to `section`, default the last one).
    @discardableResult public func append(_ value: JSONValue, section: String? = nil) async throws -> Int {
        var args: JSONObject = ["value": value]
        if let section { args["section"] = .string(section) }
        return try await control.send("append", args)
    }

    /// Inserts a value before the item now at `index` (`count`: at the end).
    @discardableResult public func insert(_ value: JSONValue, at index: Int) async throws -> Int {
        try await control.send("insert", ["value": value, "index": .int(index)])
    }

    /// Moves an item to position `index` of the list without it (into the section of the item now there), or, with
    /// `section`, to position `index` of that section (0…its count without the item: its end).
    @discardableResult public func move(_ id: String, to index: Int, section: String? = nil) async throws -> Int {
        var args: JSONObject = ["id": .string(id), "index": .int(index)]
        if let section { args["section"] = .string(section) }
        return try await control.send("move", args)
    }

    /// Replaces an item's value (it keeps its id).
    @discardableResult public func edit(_ id: String, value: JSONValue) async throws -> Int {
        try await control.send("edit", ["id": .string(id), "value": value])
    }

    /// Removes an item; the selection follows ``selectionPolicy``.
    @discardableResult public func remove(_ id: String) async throws -> Int { try await control.send("remove", ["id": .string(id)]) }
}
