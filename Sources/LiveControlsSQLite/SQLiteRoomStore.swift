import Dispatch
import Foundation
import LiveControlsEngine
import LiveControlsProtocol
import Synchronization

/// Rooms persisted in `<data-dir>/livecontrols.sqlite3` (WAL, `synchronous=NORMAL`).
///
/// One writer queue owns the connection. Writes from all rooms queue up while a transaction commits
/// and go together in the next one (group commit); each write's `done` runs after its COMMIT returned,
/// so an acknowledged change survives a crash of the process (`kill -9`). An OS crash or power loss may
/// lose the last commits, never consistency.
public final class SQLiteRoomStore: RoomStore, @unchecked Sendable {
    public let path: String
    /// Owned by `writer` only (and by `init` before any write is queued).
    let db: SQLiteDatabase
    let writer = DispatchQueue(label: "livecontrols.store")
    /// What waits for the next transaction, in submission order: a room's write, or the deletion of a room.
    enum Entry: Sendable {
        case write(StoreWrite)
        case delete(room: String, webhooks: [PendingWebhook])
        /// Webhook events with no change of the room, and whether they tell its unannounced changes.
        case webhooks(room: String, [PendingWebhook], clearsUnannounced: Bool)
        /// A delivery's outcome: delivered (forgotten), or failed for good.
        case delivery(eventID: String, endpoint: String, failure: (attempts: Int, error: String, at: Int)?)

        var room: String? {
            switch self {
            case let .write(w): return w.room
            case let .delete(room, _), let .webhooks(room, _, _): return room
            case .delivery: return nil
            }
        }
    }
    private let pending = Mutex<(writes: [(Entry, @Sendable ((any Error)?) -> Void)], scheduled: Bool)>(([], false))
    private let statements: Statements
    let hooks: WebhookStatements
    /// The names of the stored rooms (from the database at start, then every room reset submitted), so a join
    /// of a room that was never stored — a new room, or a made-up name — costs no trip to the writer queue.
    private let names: Mutex<Set<String>>
    /// Writer queue only: rooms whose write failed. Their later patches are refused without touching the
    /// database (each builds on the one that failed: landing them would leave a hole), until the room is
    /// reset or loaded again.
    private var broken: Set<String> = []

    private struct Statements {
        let upsertRoom, upsertControl, insertMember, deleteMember, insertPatch, prunePatches: SQLiteStatement
        let insertDelta, deleteControlDeltas, deleteRoomDeltas: SQLiteStatement
        let deleteControls, deleteMembers, deletePatches, deleteRoom: SQLiteStatement
        let begin, commit, rollback: SQLiteStatement
    }

    public var isSynchronous: Bool { false }
    /// A control's change is stored as what changed (`room_control_delta`), after its last full state.
    public var takesControlDeltas: Bool { true }

    /// Held for the store's life (so for the server's): no second server touches this data directory.
    private let lock: DataDirectoryLock

    /// Locks the directory (`DataDirectoryLock`: refused at once, before anything is read, when another
    /// process has it), then opens or creates the database in it.
    public init(directory: String) throws {
        lock = try DataDirectoryLock(directory: directory)
        path = (directory as NSString).appendingPathComponent("livecontrols.sqlite3")
        db = try SQLiteDatabase(path: path)
        guard try db.text("PRAGMA journal_mode=WAL")?.lowercased() == "wal" else {
            throw SQLiteError(code: 0, message: "\(path): cannot switch to WAL")
        }
        try db.execute("PRAGMA synchronous=NORMAL")
        try db.execute("""
            CREATE TABLE IF NOT EXISTS room(name TEXT PRIMARY KEY, template TEXT NOT NULL, epoch TEXT NOT NULL,
              version INTEGER NOT NULL) STRICT;
            CREATE TABLE IF NOT EXISTS room_control(room TEXT NOT NULL, id TEXT NOT NULL, kind TEXT NOT NULL,
              state TEXT NOT NULL, PRIMARY KEY (room, id)) STRICT, WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS room_member(room TEXT NOT NULL, session TEXT NOT NULL, name TEXT,
              seq INTEGER NOT NULL, PRIMARY KEY (room, session)) STRICT, WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS room_control_delta(room TEXT NOT NULL, id TEXT NOT NULL, seq INTEGER NOT NULL,
              ops TEXT NOT NULL, PRIMARY KEY (room, id, seq)) STRICT, WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS room_patch(room TEXT NOT NULL, epoch TEXT NOT NULL, version INTEGER NOT NULL,
              ops TEXT NOT NULL, cause TEXT NOT NULL, PRIMARY KEY (room, epoch, version)) STRICT, WITHOUT ROWID;
            """)
        // A member's `user` (the token's `sub`, since presence per user): added to a database made before it.
        if try db.text("SELECT 1 FROM pragma_table_info('room_member') WHERE name = 'user'") == nil {
            try db.execute("ALTER TABLE room_member ADD COLUMN user TEXT")
        }
        statements = Statements(
            upsertRoom: try db.prepare("""
                INSERT INTO room(name, template, epoch, version) VALUES (?1, ?2, ?3, ?4)
                ON CONFLICT(name) DO UPDATE SET template = ?2, epoch = ?3, version = ?4
                """),
            upsertControl: try db.prepare("""
                INSERT INTO room_control(room, id, kind, state) VALUES (?1, ?2, ?3, ?4)
                ON CONFLICT(room, id) DO UPDATE SET kind = ?3, state = ?4
                """),
            insertMember: try db.prepare("INSERT OR REPLACE INTO room_member(room, session, name, seq, user) VALUES (?1, ?2, ?3, ?4, ?5)"),
            deleteMember: try db.prepare("DELETE FROM room_member WHERE room = ?1 AND session = ?2"),
            insertPatch: try db.prepare("INSERT INTO room_patch(room, epoch, version, ops, cause) VALUES (?1, ?2, ?3, ?4, ?5)"),
            prunePatches: try db.prepare("DELETE FROM room_patch WHERE room = ?1 AND (epoch <> ?2 OR version < ?3)"),
            insertDelta: try db.prepare("INSERT OR REPLACE INTO room_control_delta(room, id, seq, ops) VALUES (?1, ?2, ?3, ?4)"),
            deleteControlDeltas: try db.prepare("DELETE FROM room_control_delta WHERE room = ?1 AND id = ?2"),
            deleteRoomDeltas: try db.prepare("DELETE FROM room_control_delta WHERE room = ?1"),
            deleteControls: try db.prepare("DELETE FROM room_control WHERE room = ?1"),
            deleteMembers: try db.prepare("DELETE FROM room_member WHERE room = ?1"),
            deletePatches: try db.prepare("DELETE FROM room_patch WHERE room = ?1"),
            deleteRoom: try db.prepare("DELETE FROM room WHERE name = ?1"),
            begin: try db.prepare("BEGIN IMMEDIATE"),
            commit: try db.prepare("COMMIT"),
            rollback: try db.prepare("ROLLBACK"))
        names = Mutex(Set(try db.prepare("SELECT name FROM room").rows { $0.text(0)! }))
        hooks = try WebhookStatements(db)
    }

    /// On the writer queue, so after every write queued before (those not yet picked up are committed first).
    /// A name never stored answers nil at once.
    public func loadRoom(named name: String, historyLimit: Int) throws -> StoredRoom? {
        guard names.withLock({ $0.contains(name) }) else { return nil }
        return try writer.sync {
            flush()
            broken.remove(name)  // the room starts again from what is stored
            let rooms = try db.prepare("SELECT name, template, epoch, version FROM room WHERE name = ?1").rows([.text(name)]) { row in
                (row.text(0)!, row.text(1)!, row.text(2)!, row.int(3))
            }
            let controls = try db.prepare("SELECT id, state FROM room_control WHERE room = ?1")
            let deltas = try db.prepare("SELECT id, seq, ops FROM room_control_delta WHERE room = ?1 ORDER BY id, seq")
            let members = try db.prepare("SELECT session, name, user FROM room_member WHERE room = ?1 ORDER BY seq, session")
            let patches = try db.prepare("""
                SELECT version, ops, cause FROM room_patch WHERE room = ?1 AND epoch = ?2 AND version > ?3 ORDER BY version
                """)
            return try rooms.map { name, template, epoch, version in
                var stored = StoredRoom(name: name, template: template, epoch: epoch, version: version, controls: [:], members: [], history: [])
                for (id, state) in try controls.rows([.text(name)], { ($0.text(0)!, $0.text(1)!) }) {
                    stored.controls[ControlID(id)] = state
                }
                let changes = try deltas.rows([.text(name)], { (ControlID($0.text(0)!), $0.int(1), $0.text(2)!) })
                StoredRoom.replay(changes, onto: &stored.controls)  // (a control it cannot rebuild is left out: a new epoch)
                stored.members = try members.rows([.text(name)]) { StoredMember(session: SessionID($0.text(0)!), name: $0.text(1), user: $0.text(2)) }
                stored.unannounced = try self.hooks.unannounced(room: name)
                stored.history = try patches.rows([.text(name), .text(epoch), .int(version - historyLimit)]) { row in
                    guard let patch = Patch(version: row.int(0), storedOps: try JSONParser.parse(row.text(1)!), cause: try JSONParser.parse(row.text(2)!)) else {
                        throw StoredStateError(path: "/history/\(row.int(0))", message: "a stored patch's ops do not parse")
                    }
                    return patch
                }
                return stored
            }.first
        }
    }

    public func contains(room name: String) -> Bool { names.withLock { $0.contains(name) } }

    /// On the writer queue, after every write queued before.
    public func listRooms() throws -> [StoredRoomSummary] {
        try writer.sync {
            flush()
            return try db.prepare("SELECT name, template, epoch, version FROM room ORDER BY name").rows { row in
                StoredRoomSummary(name: row.text(0)!, template: row.text(1)!, epoch: row.text(2)!, version: row.int(3))
            }
        }
    }

    /// In order with the writes: those queued before land first, a room of the same name created after
    /// (its reset write) lands after. From now on a load of the name finds nothing.
    /// The deletion, with the webhook events it stands for (`room.deleted`) in the same transaction.
    public func deleteRoom(named name: String, webhooks: [PendingWebhook], done: @escaping @Sendable ((any Error)?) -> Void) {
        names.withLock { _ = $0.remove(name) }
        enqueue(.delete(room: name, webhooks: webhooks), done)
    }

    public func recordWebhooks(_ webhooks: [PendingWebhook], room: String, clearsUnannounced: Bool,
                               done: @escaping @Sendable ((any Error)?) -> Void) {
        enqueue(.webhooks(room: room, webhooks, clearsUnannounced: clearsUnannounced), done)
    }

    public func write(_ write: StoreWrite, done: @escaping @Sendable ((any Error)?) -> Void) {
        if case .reset = write.kind { names.withLock { _ = $0.insert(write.room) } }
        enqueue(.write(write), done)
    }

    func enqueue(_ entry: Entry, _ done: @escaping @Sendable ((any Error)?) -> Void) {
        let schedule = pending.withLock { p -> Bool in
            p.writes.append((entry, done))
            defer { p.scheduled = true }
            return !p.scheduled
        }
        if schedule { writer.async { self.flush() } }
    }

    public func waitUntilIdle() {
        writer.sync { flush() }
    }

    /// Writer queue: commits everything pending in one transaction, then reports to each writer in order.
    func flush() {
        let batch = pending.withLock { p -> [(Entry, @Sendable ((any Error)?) -> Void)] in
            defer { p.writes.removeAll(); p.scheduled = false }
            return p.writes
        }
        guard !batch.isEmpty else { return }
        var failure: (any Error)? = nil
        var refused: [Bool] = []
        refused.reserveCapacity(batch.count)
        do {
            try statements.begin.run()
            for (entry, _) in batch {
                switch entry {
                case let .write(write):
                    if case .reset = write.kind { broken.remove(write.room) }
                    let skip = broken.contains(write.room)
                    refused.append(skip)
                    if !skip { try apply(write) }
                case let .delete(room, webhooks):
                    broken.remove(room)
                    refused.append(false)
                    for statement in [statements.deleteControls, statements.deleteRoomDeltas, statements.deleteMembers, statements.deletePatches,
                                      statements.deleteRoom, hooks.clearUnannounced] {
                        try statement.run([.text(room)])
                    }
                    try hooks.insert(webhooks)
                case let .webhooks(room, webhooks, clears):
                    // Built on the room's writes: not after one that failed (they could tell versions never stored).
                    let skip = broken.contains(room)
                    refused.append(skip)
                    if skip { continue }
                    try hooks.insert(webhooks)
                    if clears { try hooks.clearUnannounced.run([.text(room)]) }
                case let .delivery(eventID, endpoint, failure):
                    refused.append(false)
                    try hooks.record(eventID: eventID, endpoint: endpoint, failure: failure)
                }
            }
            try statements.commit.run()
            hooks.bounds.committed()
        } catch {
            hooks.bounds.rolledBack()
            failure = error
            try? statements.rollback.run()
            try? hooks.bounds.reload(db)  // (what the rolled-back writes counted)
            for (entry, _) in batch {
                if let room = entry.room { broken.insert(room) }
                // A deletion that did not happen: the room is still stored, and a load must find it again.
                if case let .delete(room, _) = entry { names.withLock { _ = $0.insert(room) } }
            }
        }
        for (i, (entry, done)) in batch.enumerated() {
            if let failure {
                done(failure)
            } else if i < refused.count, refused[i], case let .write(write) = entry {
                done(SQLiteError(code: 0, message: "room \(write.room): an earlier write failed; version \(write.version) is not stored"))
            } else if i < refused.count, refused[i] {
                done(SQLiteError(code: 0, message: "room \(entry.room ?? ""): an earlier write failed; not stored"))
            } else {
                done(nil)
            }
        }
    }

    private func apply(_ w: StoreWrite) throws {
        let s = statements
        try s.upsertRoom.run([.text(w.room), .text(w.template), .text(w.epoch), .int(w.version)])
        switch w.kind {
        case .reset:
            try hooks.clearUnannounced.run([.text(w.room)])
            try s.deleteControls.run([.text(w.room)])
            try s.deleteRoomDeltas.run([.text(w.room)])
            try s.deleteMembers.run([.text(w.room)])
            try s.deletePatches.run([.text(w.room)])
        case let .patch(patch):
            let ops = String(decoding: JSONWriter.encode(patch.storedOps), as: UTF8.self)
            try s.insertPatch.run([.text(w.room), .text(w.epoch), .int(patch.version), .text(ops), .text(JSONWriter.string(patch.cause))])
            if patch.version % 64 == 0 { try s.prunePatches.run([.text(w.room), .text(w.epoch), .int(w.keepFromVersion)]) }
        }
        try hooks.insert(w.webhooks)
        if let changes = w.unannouncedChanges { try hooks.setUnannounced(room: w.room, changes) }
        for control in w.controls {
            try s.upsertControl.run([.text(w.room), .text(control.id.rawValue), .text(control.kind), .text(control.state)])
            try s.deleteControlDeltas.run([.text(w.room), .text(control.id.rawValue)])
        }
        for delta in w.controlDeltas {
            try s.insertDelta.run([.text(w.room), .text(delta.id.rawValue), .int(delta.seq), .text(delta.ops)])
        }
        for member in w.joined {
            try s.insertMember.run([.text(w.room), .text(member.session.rawValue), member.name.map { .text($0) } ?? .null, .int(w.version),
                                    member.user.map { .text($0) } ?? .null])
        }
        for session in w.left { try s.deleteMember.run([.text(w.room), .text(session.rawValue)]) }
    }
}
