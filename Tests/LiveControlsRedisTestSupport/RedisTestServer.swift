import Foundation
import LiveControlsRedis
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A real `redis-server` for one test, on a free loopback port, without persistence, in its own temporary
/// directory. `stop()` sends SIGTERM and waits; `start()` again listens on the same port.
public final class RedisTestServer {
    public let port: Int
    public let directory: URL
    /// `--requirepass`: clients must `AUTH` with it.
    public let password: String?
    /// TLS only (`--port 0 --tls-port`), with these certificates; `clientCertificates` makes it ask clients for one.
    public let tls: TestCertificates?
    public let clientCertificates: Bool
    private var process: Process?

    /// How clients reach it: over TLS trusting the test CA when it speaks TLS.
    public var endpoint: RedisEndpoint {
        var endpoint = RedisEndpoint(host: "127.0.0.1", port: port, password: password)
        if let tls {
            endpoint.tls = RedisTLS(caCertificateFile: tls.caCertificate, certificateFile: clientCertificates ? tls.clientCertificate : nil,
                                    keyFile: clientCertificates ? tls.clientKey : nil)
        }
        return endpoint
    }
    public var pid: Int32? { process?.processIdentifier }

    public init(password: String? = nil, tls: TestCertificates? = nil, clientCertificates: Bool = false) throws {
        self.password = password
        self.tls = tls
        self.clientCertificates = clientCertificates
        RedisProcess.ignoreSIGPIPE()
        port = try Self.freeLoopbackPort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("redis-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    public func start() throws {
        precondition(process == nil, "already running")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/redis-server")
        let listen = tls.map {
            ["--port", "0", "--tls-port", String(port), "--tls-cert-file", $0.serverCertificate, "--tls-key-file", $0.serverKey,
             "--tls-ca-cert-file", $0.caCertificate, "--tls-auth-clients", clientCertificates ? "yes" : "no"]
        } ?? ["--port", String(port)]
        p.arguments = listen + [
            "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", directory.path, "--logfile", directory.appendingPathComponent("redis.log").path,
        ] + (password.map { ["--requirepass", $0] } ?? [])
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        process = p
        // Ready when it answers PING (checked every 10 ms, for up to 5 s).
        let probe = RedisConnection(endpoint: endpoint, timeoutMilliseconds: 200)
        probe.reconnectIntervalMilliseconds = 0
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if (try? probe.command(["PING"])) == .status("PONG") { return }
            guard p.isRunning else { break }
            usleep(10_000)
        }
        let log = (try? String(contentsOf: directory.appendingPathComponent("redis.log"), encoding: .utf8)) ?? ""
        throw RedisError(.connection, "redis-server on port \(port) did not answer PING; log:\n\(log)")
    }

    /// SIGTERM, then waits for the process to exit. Does nothing when not running.
    public func stop() {
        guard let p = process else { return }
        process = nil
        if p.isRunning { kill(p.processIdentifier, SIGCONT); kill(p.processIdentifier, SIGTERM) }
        p.waitUntilExit()
    }

    public func restart() throws {
        stop()
        try start()
    }

    /// Freezes (SIGSTOP) or thaws (SIGCONT) the server: it keeps its sockets but answers nothing.
    public func pause() { if let pid { kill(pid, SIGSTOP) } }
    public func resume() { if let pid { kill(pid, SIGCONT) } }

    /// Binds 127.0.0.1:0, reads the port the kernel chose, closes the socket.
    public static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RedisError(.connection, "socket: errno \(errno)") }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p -> Bool in
                bind(fd, p, len) == 0 && getsockname(fd, p, &len) == 0
            }
        }
        guard bound else { throw RedisError(.connection, "bind/getsockname: errno \(errno)") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }
}

/// Polls `condition` every 5 ms until it holds or `timeout` passes; fails the test on timeout.
public func waitUntil(
    _ what: String, timeout: TimeInterval = 5, file: StaticString = #filePath, line: UInt = #line,
    _ condition: () -> Bool
) {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() >= deadline {
            XCTFail("timed out after \(timeout) s waiting for \(what)", file: file, line: line)
            return
        }
        usleep(5_000)
    }
}

/// Seconds `body` took.
public func timed<T>(_ body: () throws -> T) rethrows -> (T, TimeInterval) {
    let start = Date()
    let value = try body()
    return (value, Date().timeIntervalSince(start))
}
