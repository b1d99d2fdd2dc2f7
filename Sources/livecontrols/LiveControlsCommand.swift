import ArgumentParser

@main
struct LiveControlsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "livecontrols",
        abstract: "A WebSocket live-sync server for shared UI controls.",
        subcommands: [Serve.self, Watch.self, Send.self, Rooms.self, State.self, Intent.self, Token.self],
        defaultSubcommand: Serve.self
    )
}
