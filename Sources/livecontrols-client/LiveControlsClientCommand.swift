import ArgumentParser
import Dispatch

/// The command-line client, on LiveControlsKit: a product of its own, so that the server (`livecontrols`) builds
/// without SwiftNIO and BoringSSL, which LiveControlsKit's WebSocket client brings (the server's first release build
/// went from ~10 minutes to a few: README, "Run it").
@main
struct LiveControlsClientCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "livecontrols-client",
        abstract: "Watch a LiveControls room or send it an intent, from the command line.",
        subcommands: [Watch.self, Send.self]
    )
}

/// Runs a client command's async body on the main actor (LiveControlsKit's models live there) and exits with its
/// outcome.
func runClientCommand(_ body: @escaping @MainActor () async throws -> Void) -> Never {
    Task { @MainActor in
        do {
            try await body()
            LiveControlsClientCommand.exit()
        } catch {
            LiveControlsClientCommand.exit(withError: error)
        }
    }
    dispatchMain()
}
