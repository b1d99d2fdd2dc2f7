import ArgumentParser
import Dispatch

@main
struct LiveControlsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "livecontrols",
        abstract: "A WebSocket live-sync server for shared UI controls.",
        subcommands: [Serve.self, Watch.self, Send.self, Rooms.self, State.self, Intent.self, Token.self],
        defaultSubcommand: Serve.self
    )
}

/// Runs a client command's async body on the main actor (LiveControlsKit's models live there) and exits with its
/// outcome. The root command stays synchronous: `serve` blocks SIGINT and SIGTERM in the main thread before any
/// other thread exists and takes them on its own thread — an async main would start the concurrency runtime's
/// threads first, with the signals unblocked, and SIGTERM would kill the process.
func runClientCommand(_ body: @escaping @MainActor () async throws -> Void) -> Never {
    Task { @MainActor in
        do {
            try await body()
            LiveControlsCommand.exit()
        } catch {
            LiveControlsCommand.exit(withError: error)
        }
    }
    dispatchMain()
}
