import LiveControlsProtocol

/// Changing a list's items: `remove` (under the selection policy), `insert` at a position, `move`, `edit`.
extension ListStepper {
    /// `remove {id}`. Removing the selected item follows `selectionPolicy`, as the seed's selection does whenever its
    /// values change: `fail` refuses it (`conflict`: select another item first), `first` selects the first item,
    /// `append` puts the value back at the end of the last section (a new id) and selects it. An emptied list
    /// selects nothing.
    mutating func remove(_ args: IntentArgs) throws(IntentError) {
        let id = try args.string("id")
        guard index(of: id) != nil else { throw IntentError(.notFound, "the list has no item \"\(id)\"") }
        guard selected == id else {
            removeItem(id)
            return
        }
        if selectionPolicy == .fail && count > 1 {
            throw IntentError(.conflict, "item \(id) is selected and the list's selectionPolicy is \"fail\": select another item first")
        }
        let removed = removeItem(id)!
        switch selectionPolicy {
        case .fail, .first:
            selected = items.first?.id
        case .append:
            selected = appendItem(removed.value, toSection: sections.count - 1)
        }
    }

    /// `insert {value, index}`: a new item at flattened position `index` (0…count; count appends to the last
    /// section), in the section of the item now at that position. The selection stays on its item.
    mutating func insert(_ args: IntentArgs) throws(IntentError) {
        let value = try args.value("value")
        let position = try args.int("index")
        guard (0...count).contains(position) else { throw IntentError(.outOfRange, "index \(position) is outside 0…\(count)") }
        guard count < maxItems else { throw IntentError(.outOfRange, "the list is full (\(maxItems) items)") }
        let id = "i\(nextItemNumber)"
        nextItemNumber += 1
        place(item(id, value), at: position)
        if selected == nil { selected = id }
    }

    /// `move {id, index, section?}`: without `section`, the item to flattened position `index` (0…count − 1, counted
    /// without it), into the section of the item now there (the end of the last section for the last position);
    /// with `section`, to position `index` of that section (0…its count without the item: its end) — the only way
    /// to the end of a section that is not the last, or into an empty one. Keeps its id and the selection.
    mutating func move(_ args: IntentArgs) throws(IntentError) {
        let id = try args.string("id")
        let position = try args.int("index")
        let sectionID = try args.optionalString("section")
        guard index(of: id) != nil else { throw IntentError(.notFound, "the list has no item \"\(id)\"") }
        guard let sectionID else {
            guard (0..<count).contains(position) else { throw IntentError(.outOfRange, "index \(position) is outside 0…\(count - 1)") }
            let item = removeItem(id)!
            place(item, at: position)
            return
        }
        guard let s = sections.firstIndex(where: { $0.id == sectionID }) else {
            throw IntentError(.notFound, "the list has no section \"\(sectionID)\" (it has: \(sections.map(\.id).joined(separator: ", ")))")
        }
        let room = sections[s].items.count - (sections[s].items.contains { $0.id == id } ? 1 : 0)
        guard (0...room).contains(position) else {
            throw IntentError(.outOfRange, "index \(position) is outside 0…\(room) for section \"\(sectionID)\"")
        }
        let item = removeItem(id)!
        sections[s].items.insert(item, at: position)
    }

    /// `edit {id, value}`: the item's value; it keeps its id (and stays selected if it was).
    mutating func edit(_ args: IntentArgs) throws(IntentError) {
        let id = try args.string("id")
        let value = try args.value("value")
        for s in sections.indices {
            if let i = sections[s].items.firstIndex(where: { $0.id == id }) {
                sections[s].items[i] = item(id, value)
                return
            }
        }
        throw IntentError(.notFound, "the list has no item \"\(id)\"")
    }

    /// Puts `item` at flattened position `position` (0…count): before the item now there, or at the end of the last
    /// section.
    private mutating func place(_ item: Item, at position: Int) {
        var before = position
        for s in sections.indices {
            if before < sections[s].items.count {
                sections[s].items.insert(item, at: before)
                return
            }
            before -= sections[s].items.count
        }
        sections[sections.count - 1].items.append(item)
    }
}
