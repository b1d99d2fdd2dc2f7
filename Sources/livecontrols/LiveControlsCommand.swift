import ArgumentParser

@main
struct LiveControlsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "livecontrols",
        abstract: "A WebSocket live-sync server for shared UI controls.",
        subcommands: [Serve.self, ConfigCommand.self, Rooms.self, State.self, Intent.self, Token.self],
        defaultSubcommand: Serve.self
    )
}
