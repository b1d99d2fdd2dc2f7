import Foundation
import XCTest

/// The real `livecontrols` binary, started on port 0 (or a given port); the test waits for the URL line it prints.
final class ServerProcess: @unchecked Sendable {
    let process = Process()
    let arguments: [String]
    private(set) var port = 0
    private let stdout = Pipe()
    let log: URL

    /// `LIVECONTROLS_BIN`, or the debug build beside these tests.
    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["LIVECONTROLS_BIN"] { return path }
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return repo.appendingPathComponent(".build/debug/livecontrols").path
    }

    init(_ arguments: [String] = [], port: Int = 0) throws {
        self.arguments = arguments
        log = FileManager.default.temporaryDirectory.appendingPathComponent("livecontrols-kit-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["--port", String(port), "--log-level", "info"] + arguments
        process.standardOutput = stdout
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        self.port = try waitForURLLine()
    }

    var wsURL: URL { URL(string: "ws://127.0.0.1:\(port)/ws")! }
    var httpURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Reads stdout until `listening on http://HOST:PORT/`, within 20 s.
    private func waitForURLLine() throws -> Int {
        let handle = stdout.fileHandleForReading
        var text = ""
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let chunk = handle.availableData  // blocks until output or EOF
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            if let range = text.range(of: #"listening on https?://[^/ ]+:(\d+)/"#, options: .regularExpression) {
                let match = String(text[range])
                let digits = match.split(separator: ":").last!.dropLast()
                // Keep draining stdout so the server never blocks on a full pipe.
                handle.readabilityHandler = { $0.availableData.isEmpty ? ($0.readabilityHandler = nil) : () }
                return Int(digits)!
            }
        }
        throw ServerStartFailed(output: text + ((try? String(contentsOf: log, encoding: .utf8)) ?? ""))
    }

    /// SIGTERM, then waits for the exit (the server bounds its own shutdown).
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    deinit { stop() }
}

struct ServerStartFailed: Error, CustomStringConvertible {
    var output: String
    var description: String { "the server did not start: \(output)" }
}
