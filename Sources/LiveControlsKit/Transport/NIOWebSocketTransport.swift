import Foundation
import HTTPTypes
import Logging
import NIOSSL
import NIOWebSocket
import WSClient

/// The default transport: hummingbird-project/swift-websocket's client on SwiftNIO — `ws://` and `wss://` on Linux
/// and Apple platforms, the handshake's `Sec-WebSocket-Accept` checked, frames and messages bounded.
public struct NIOWebSocketTransport: WebSocketTransport {
    /// TLS settings for `wss://` (default: the system's trust roots, host name verified).
    public var tlsConfiguration: TLSConfiguration
    /// The largest message (and frame) accepted from the server; a larger one closes the connection (1009).
    /// The server's snapshots are bounded by a room's `maxStateBytes` (8 MiB by default).
    public var maxMessageBytes: Int
    /// Sends a ping this often and closes a connection whose pong does not come in time (nil: off).
    public var pingInterval: Duration?

    public init(tlsConfiguration: TLSConfiguration = .makeClientConfiguration(), maxMessageBytes: Int = 16 << 20,
                pingInterval: Duration? = .seconds(30)) {
        self.tlsConfiguration = tlsConfiguration
        self.maxMessageBytes = maxMessageBytes
        self.pingInterval = pingInterval
    }

    /// Trusts the certificate(s) in a PEM file (a self-signed development server), host name still verified
    /// unless `verifyHostname` is false.
    public init(trustingCertificatesInPEMFile path: String, verifyHostname: Bool = true) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(path))
        if !verifyHostname { tls.certificateVerification = .noHostnameVerification }
        self.init(tlsConfiguration: tls)
    }

    public func connect(to url: URL, headers: [String: String]) async throws -> any WebSocketConnection {
        var fields = HTTPFields()
        for (name, value) in headers {
            guard let field = HTTPField.Name(name) else { continue }
            fields[field] = value
        }
        let configuration = WebSocketClientConfiguration(
            maxFrameSize: maxMessageBytes, additionalHeaders: fields,
            closeTimeout: .seconds(2), autoPing: pingInterval.map { .enabled(timePeriod: $0) } ?? .disabled,
            validateUTF8: true)
        let (opened, openedContinuation) = AsyncThrowingStream<WebSocketOutboundWriter, any Error>.makeStream()
        let inbox = Inbox(limit: 16)
        let maxSize = maxMessageBytes
        let client = WebSocketClient(
            url: url.absoluteString, configuration: configuration,
            tlsConfiguration: url.scheme == "wss" || url.scheme == "https" ? tlsConfiguration : nil,
            logger: Logger(label: "LiveControlsKit.websocket", factory: { _ in SwiftLogNoOpLogHandler() })
        ) { inbound, outbound, _ in
            openedContinuation.yield(outbound)
            openedContinuation.finish()
            // Reads the next frame only once the inbox has room: the reader's pace reaches the server.
            for try await message in inbound.messages(maxSize: maxSize) {
                if case let .text(text) = message { await inbox.push(text) }
            }
        }
        let run = Task {
            do {
                let frame = try await client.run()
                openedContinuation.finish(throwing: WebSocketClosed(code: nil, reason: "closed during the handshake"))
                await inbox.finish(WebSocketClosed(code: frame.map { Int(UInt16(webSocketErrorCode: $0.closeCode)) },
                                                   reason: frame?.reason ?? ""))
            } catch {
                openedContinuation.finish(throwing: error)
                await inbox.finish(WebSocketClosed(code: nil, reason: "\(error)"))
            }
        }
        // A connect given up (cancelled, timed out) must not leave a connection behind that nobody reads.
        do {
            let writer = try await withTaskCancellationHandler {
                for try await writer in opened { return writer }
                throw WebSocketClosed(code: nil, reason: "closed during the handshake")
            } onCancel: {
                run.cancel()
            }
            try Task.checkCancellation()
            return NIOWebSocketConnection(writer: writer, inbox: inbox, run: run)
        } catch {
            run.cancel()
            await inbox.finish(nil)
            throw error
        }
    }
}

/// A connection opened by ``NIOWebSocketTransport``.
final class NIOWebSocketConnection: WebSocketConnection {
    let writer: WebSocketOutboundWriter
    let inbox: Inbox
    let run: Task<Void, Never>

    init(writer: WebSocketOutboundWriter, inbox: Inbox, run: Task<Void, Never>) {
        self.writer = writer
        self.inbox = inbox
        self.run = run
    }

    func receive() async throws -> String? {
        try await inbox.pop()
    }

    func send(_ text: String) async throws {
        try await writer.write(.text(text))
    }

    func close() async {
        await inbox.finish(nil)  // ours: receive() returns nil, not the close handshake's own end
        try? await writer.close(.normalClosure, reason: nil)
        await run.value
    }
}
