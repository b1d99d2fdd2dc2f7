import ArgumentParser
import Dispatch
import Foundation
import LiveControlsEngine
import LiveControlsRuntime
import LiveControlsTransport
import Logging

/// `livecontrols serve` (the default): run the server until SIGINT or SIGTERM.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the server (the default command).")

    @Option(help: "Address to listen on; 0.0.0.0 for every interface.")
    var host = "127.0.0.1"

    @Option(help: "TCP port; 0 picks a free port.")
    var port = 8080

    @Option(help: "JSON config file with templates and rooms (default: the built-in demo config).")
    var config: String?

    @Option(help: "Directory of static files served at /.")
    var webRoot = "web"

    @Option(help: "Directory for the embedded store (SQLite); rooms survive restarts. Without it rooms live in memory.")
    var dataDir: String?

    @Option(help: "Seconds SIGINT or SIGTERM may take at most: clients are closed with 1001 within 2 s, then rooms stop and the store is flushed; whatever is still under way then is abandoned and the process exits with status 1. A second signal exits at once.")
    var shutdownTimeout = 10

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    @OptionGroup(title: "Limits")
    var limitFlags: LimitFlags

    @OptionGroup(title: "Access")
    var authFlags: AuthFlags

    @OptionGroup(title: "Cluster")
    var clusterFlags: ClusterFlags

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard (1...3600).contains(shutdownTimeout) else { throw ValidationError("--shutdown-timeout must be between 1 and 3600 seconds") }
        if clusterFlags.redis != nil, dataDir != nil {
            throw ValidationError("--data-dir and --redis exclude each other: in cluster mode rooms live in Redis")
        }
    }

    /// SIGINT and SIGTERM, blocked in every thread and taken by one `sigwait` thread, so a signal that
    /// arrives early (even before the URL line) is never lost or fatal.
    static var shutdownSignals: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        return set
    }

    func run() throws {
        var blocked = Self.shutdownSignals
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        var logger = Logger(label: "livecontrols") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = logLevel

        var options = ServerOptions()
        options.host = host
        options.port = port
        options.limits = limitFlags.limits
        options.trustedProxies = limitFlags.trustedProxies.compactMap(AddressPattern.init)
        options.dataDirectory = dataDir
        // Closes may wait for a slow store's last writes (their acks go first) until 1.5 s before the stop's bound.
        options.shutdownRoomWaitMilliseconds = max(0, shutdownTimeout * 1000 - 1_500)
        options.auth = authFlags.policy
        options.metricsNeedCredential = authFlags.metricsAccess == .key
        options.tls = authFlags.tls
        options.cluster = try clusterFlags.options { "n" + String(UInt64.random(in: 0...UInt64.max), radix: 36) }
        if authFlags.auth == .open {
            logger.notice("auth: open mode — anyone who can reach this port may join and act; use --auth required to demand tokens")
        } else {
            logger.notice("auth: tokens required for every join")
        }
        options.config = try loadConfig()
        OpenFileLimit.prepare(maxConnections: options.limits.maxConnections, logger: logger)
        options.webRoot = Self.findWebRoot(webRoot, logger: logger)

        let server = try LiveControlsServer(options: options, logger: logger)
        let stopper = Thread { [server, shutdownTimeout, logger] in
            var received: Int32 = 0
            var set = Self.shutdownSignals
            sigwait(&set, &received)
            server.shutdown()
            // The bound: a clean stop ends the process (run returns) before this thread wakes again.
            let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(shutdownTimeout) * 1_000_000_000
            var second: Int32 = -1
            repeat {  // EINTR (another signal arrived): wait on for what is left
                let left = Int(deadline - min(deadline, DispatchTime.now().uptimeNanoseconds))
                var timeout = timespec(tv_sec: left / 1_000_000_000, tv_nsec: left % 1_000_000_000)
                second = sigtimedwait(&set, nil, &timeout)
            } while second < 0 && errno == EINTR
            if second > 0 {
                logger.warning("second signal during shutdown: exiting now", metadata: ["signal": "\(second)"])
            } else {
                logger.error("shutdown did not finish in time: exiting now", metadata: ["shutdownTimeout": "\(shutdownTimeout) s"])
            }
            // Acked changes are already stored (each is acked only once written); what is abandoned was never acked.
            _exit(1)
        }
        stopper.start()
        let boundPort = try server.start()
        let shownHost = (host == "0.0.0.0" || host.isEmpty) ? "localhost" : (host.contains(":") ? "[\(host)]" : host)
        let (http, ws) = options.tls == nil ? ("http", "ws") : ("https", "wss")
        print("LiveControls listening on \(http)://\(shownHost):\(boundPort)/ (WebSocket \(ws)://\(shownHost):\(boundPort)/ws)")
        fflush(nil)
        logger.info("started", metadata: ["port": "\(boundPort)", "config": "\(config ?? "<built-in>")"])
        switch TimerThreadScheduler.shared.start() {
        case .realtime:
            logger.info("timer thread: real-time priority (SCHED_FIFO 1)")
        case .shortSlices:
            logger.info("timer thread: 100 µs scheduling slices; with CAP_SYS_NICE or an rtprio limit of 1 (systemd LimitRTPRIO=1) it would run at real-time priority, for ticks on time while every core is busy")
        case .ordinary(_, let slice):
            logger.notice("timer thread: ordinary scheduling (no real-time priority, and this kernel takes no short slices: Linux 6.12+ does); hold ticks may fire some ms late while every core is busy",
                          metadata: ["slice": "\(slice)"])
        }

        server.waitUntilStopped()
    }

    private func loadConfig() throws -> ServerConfig {
        let today = CivilDate.today(fromUnixSeconds: Int(time(nil)))
        guard let config else { return .builtin(today: today) }
        return try ConfigFile.load(config, today: today)
    }
}

/// A config problem: printed as `livecontrols: config error: FILE:LINE:COLUMN: at PATH: WHAT` (`serve` exits with status
/// 1, `config --check` with 2).
struct ConfigFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { "config error: \(message)" }
}

extension Logger.Level: @retroactive ExpressibleByArgument {
}

extension Serve {
    /// The web root: `given` (relative to the working folder). When it is the default, `web`, and the server was started
    /// from another folder, the repository's `web/` beside the binary (`.build/release/livecontrols` → `web/`) or an
    /// installed one (`<prefix>/share/livecontrols/web`); nil, said in a warning that names each place looked in, when
    /// none is there (the printed URL would answer 404).
    static func findWebRoot(_ given: String, logger: Logger) -> String? {
        var candidates = [given]
        if given == "web" {
            // The running executable itself (/proc/self/exe): argv[0] has no folder when the binary was found on PATH.
            let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
            let binary = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
            // (.build/release is a link to .build/<triple>/release: the repository is two or three levels up.)
            candidates += ["web", "../../web", "../../../web", "../share/livecontrols/web"].map {
                binary.appendingPathComponent($0).standardizedFileURL.path
            }
        }
        // A web root beside the binary counts only with its page in it (not any folder named web).
        let isPage = { (path: String) in FileManager.default.fileExists(atPath: path + "/index.html") }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: given, isDirectory: &isDirectory), isDirectory.boolValue { return given }
        if let found = candidates.dropFirst().first(where: isPage) {
            if found != given { logger.notice("web root", metadata: ["webRoot": "\(found)"]) }
            return found
        }
        let looked = candidates.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        logger.warning("web root not found; serving no static files (the page at the printed URL answers 404): pass --web-root DIR",
                       metadata: ["lookedIn": "\(looked.joined(separator: ", "))"])
        return nil
    }
}
