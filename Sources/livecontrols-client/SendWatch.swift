import ArgumentParser
import LiveControlsCommandLine
import Foundation
import LiveControlsKit

/// `livecontrols-client send ROOM CONTROL INTENT [ARGS]`: one intent; prints the ack or error; exit 0 on ack.
struct Send: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send one intent and print the server's ack or error (exit status 0 on ack, 1 on error, 2 when the server cannot be reached).",
        discussion: #"Example: livecontrols-client send demo quantity set '{"value": 5}'"#
    )

    @OptionGroup var target: IntentArguments
    @OptionGroup var connection: ConnectionFlags

    func run() throws {
        let args = try target.parsedArgs() ?? [:]
        let command = self
        runClientCommand { try await command.send(args) }
    }

    @MainActor
    private func send(_ args: JSONObject) async throws {
        let client = try connection.client(reconnecting: false)
        let room: Room
        do {
            room = try await client.join(target.room)
        } catch {
            throw clientFailure(error)
        }
        do {
            let version = try await room.send(control: target.control, intent: target.intent, args: args)
            printLine(["type": "ack", "room": .string(target.room), "version": .int(version)])
        } catch let LiveControlsError.refused(refusal) {
            var error: JSONObject = ["type": "error", "code": .string(refusal.rawCode), "message": .string(refusal.message)]
            if let room = refusal.room { error["room"] = .string(room) }
            printLine(.object(error))
            await client.close()
            throw ExitCode(1)
        } catch {
            await client.close()
            throw clientFailure(error)
        }
        await client.close()
    }
}

/// `livecontrols-client watch ROOM`: prints the snapshot and every patch (or the live state) as JSON lines.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Join a room and print its snapshot and each patch as JSON lines, until interrupted.",
        discussion: """
            With --state, print the whole room state after each change instead. A lost connection is reconnected \
            with backoff and the room resumed from the version printed last (the missed patches are printed; a \
            snapshot when they cannot be).
            """
    )

    @Argument(help: "Room name.") var room: String
    @Flag(help: "Print the whole state (one JSON line per version) instead of the messages.") var state = false
    @Option(help: "Stop after this many patches (for scripts).") var count: Int?
    @OptionGroup var connection: ConnectionFlags

    func run() throws {
        let command = self
        runClientCommand { try await command.watch() }
    }

    @MainActor
    private func watch() async throws {
        let client = try connection.client(reconnecting: true)
        let joined: Room
        do {
            joined = try await client.join(room)
        } catch {
            throw clientFailure(error)
        }
        let events = joined.events()
        emit(["type": "snapshot", "room": .string(room), "epoch": .string(joined.epoch ?? ""),
              "version": .int(joined.version), "state": joined.state], version: joined.version, state: joined.state)
        var seen = 0
        if count != 0 {
            for await event in events {
                switch event.kind {
                case .snapshot:
                    emit(.object(event.message), version: event.version, state: event.state)
                case .patch:
                    seen += 1
                    emit(.object(event.message), version: event.version, state: event.state)
                case .error, .broadcast:
                    if !state { printLine(.object(event.message)) }  // (watch prints others' broadcasts as they come)
                case .resumed:
                    continue
                }
                if let count, seen >= count { break }
            }
        }
        await client.close()
        if case let .left(error) = joined.status, let error, count.map({ seen < $0 }) ?? true {
            throw clientFailure(error)
        }
    }

    private func emit(_ message: JSONValue, version: Int, state document: JSONValue) {
        printLine(state ? ["version": .int(version), "state": document] : message)
    }
}
