import ArgumentParser
import Foundation
import LiveControlsKit

/// Where a client command connects, and as whom.
struct ConnectionFlags: ParsableArguments {
    @Option(help: "The server's WebSocket URL (ws:// or wss://).")
    var url = "ws://127.0.0.1:8080/ws"

    @Option(help: "For wss://: a PEM file of certificates to trust besides the system's (a self-signed server).")
    var caFile: String?

    @Option(help: "Access token for servers that require one (or set LIVECONTROLS_TOKEN).")
    var token: String?

    @Option(help: "Display name shown in presence.")
    var name: String?

    @Option(help: "Seconds to wait for the server.")
    var timeout: Double = 10

    var effectiveToken: String? { token ?? ProcessInfo.processInfo.environment["LIVECONTROLS_TOKEN"] }

    /// A LiveControlsKit client for these flags (not connected yet).
    @MainActor
    func client(reconnecting: Bool) throws -> LiveControlsClient {
        guard let serverURL = URL(string: url), ["ws", "wss"].contains(serverURL.scheme ?? "") else {
            throw ValidationError("--url must be a ws:// or wss:// URL, e.g. ws://127.0.0.1:8080/ws")
        }
        var configuration = LiveControlsClient.Configuration()
        configuration.connectTimeout = .milliseconds(Int(timeout * 1000))
        configuration.requestTimeout = .milliseconds(Int(timeout * 1000))
        if !reconnecting { configuration.maxReconnectAttempts = 0 }
        let transport = try caFile.map { try NIOWebSocketTransport(trustingCertificatesInPEMFile: $0) } ?? NIOWebSocketTransport()
        return LiveControlsClient(url: serverURL, token: effectiveToken, name: name, configuration: configuration,
                                  transport: transport)
    }
}

/// Prints one JSON line and flushes it (so a pipe sees it at once).
func printLine(_ value: JSONValue) {
    print(JSONWriter.string(value))
    fflush(nil)
}

/// Says what failed on standard error; the exit status for a client failure.
func clientFailure(_ error: any Error) -> ExitCode {
    FileHandle.standardError.write(Data("livecontrols-client: \(error)\n".utf8))
    return ExitCode(2)
}


