// swift-tools-version:6.0
import PackageDescription

// Layers point one way: LiveControlsProtocol ← LiveControlsEngine ← LiveControlsRuntime (+ the SQLite and Redis
// adapters) ← LiveControlsTransport ← livecontrols. Only LiveControlsTransport imports the libwebsockets system
// library (and holds the unsafe code besides the C adapters and the encoded message buffer, Runtime's Frame.swift);
// only LiveControlsSQLite imports SQLite; only LiveControlsRedis imports hiredis (vendored C, with TLS); LiveControlsRuntime's webhook transport is the one user of libcurl. LiveControlsRuntime runs rooms
// and knows no transport. LiveControlsKit (the Swift client) depends on LiveControlsProtocol only, and on
// swift-websocket for the network; the `livecontrols-client` executable (`watch`, `send`) uses it. The server
// executable depends on no NIO package: its first release build compiles none of SwiftNIO or BoringSSL.
let package = Package(
    name: "LiveControls",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17)],
    products: [
        .executable(name: "livecontrols", targets: ["livecontrols"]),
        // `watch` and `send` on LiveControlsKit (SwiftNIO): a product of its own, so the server builds without NIO.
        .executable(name: "livecontrols-client", targets: ["livecontrols-client"]),
        .library(name: "LiveControlsTransport", targets: ["LiveControlsTransport"]),
        // The Swift client: async/await, an observable room model, typed controls, holds, reconnect and resume.
        .library(name: "LiveControlsKit", targets: ["LiveControlsKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // GET /metrics: counters, gauges and a histogram in a per-server registry, rendered by the package
        // (brings swift-metrics' CoreMetrics and swift-atomics; no NIO). Cost of a clean debug build on 2 cores,
        // quiet machine: 16.3 → 19.3 s and 17.9 → 21.8 s wall (+3–4 s, ~20%), +4–6 s CPU (docs/ARCHITECTURE.md).
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // LiveControlsKit's WebSocket client (ws and wss on Linux and Apple platforms; URLSession's WebSocket fails on
        // Linux here). Brings SwiftNIO, NIOSSL (BoringSSL), nio-extras and nio-transport-services. Cost of a clean
        // `swift build --build-tests` on 2 cores: see docs/SWIFT.md ("What it costs to build").
        .package(url: "https://github.com/hummingbird-project/swift-websocket", from: "1.6.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // Webhook deliveries (LiveControlsRuntime's CurlWebhookTransport): libcurl's multi interface on one thread, so an
        // answer's body is never read (URLSession on Linux buffers it whole, and goes on after a cancel).
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CLibWebSockets",
            pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // hiredis 1.5 built from its sources (Sources/CHiredis/hiredis/VENDORED.md: Debian 12's 0.14 has no TLS), with
        // LiveControls' TLS helpers (tls.c) on OpenSSL, which libwebsockets-dev already brings (libssl-dev).
        .target(
            name: "CHiredis",
            exclude: ["hiredis/dict.c", "hiredis/COPYING", "hiredis/VENDORED.md"],
            linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]
        ),
        // Linux calls Swift cannot make (sched_setattr is a variadic syscall; eventfd and timerfd are not in Glibc's
        // module) for the thread that fires hold ticks (LiveControlsRuntime/TimerThreadScheduler.swift).
        .target(name: "CThreadTiming"),
        .target(name: "LiveControlsProtocol"),
        .target(name: "LiveControlsEngine", dependencies: ["LiveControlsProtocol"]),
        .target(name: "LiveControlsSQLite", dependencies: ["LiveControlsEngine", "CSQLite"]),
        .target(name: "LiveControlsRedis", dependencies: ["CHiredis"]),
        // The Swift SDK: depends on the protocol's JSON types only (never on the server's layers).
        .target(
            name: "LiveControlsKit",
            dependencies: [
                "LiveControlsProtocol",
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Rooms, registry, timers, unloading, durability queue, cluster mode: no libwebsockets.
        .target(
            name: "LiveControlsRuntime",
            dependencies: [
                "LiveControlsEngine",
                "LiveControlsRedis",
                "CThreadTiming",
                "CCurl",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // libwebsockets: connections, framing, HTTP; the service thread.
        .target(
            name: "LiveControlsTransport",
            dependencies: [
                "LiveControlsRuntime",
                "LiveControlsSQLite",
                "CLibWebSockets",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "livecontrols",
            dependencies: [
                "LiveControlsTransport",
                "LiveControlsRuntime",
                "LiveControlsRedis",
                "LiveControlsCommandLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "livecontrols-client",
            dependencies: [
                "LiveControlsKit",
                "LiveControlsCommandLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // What both executables' commands share (no NIO): the arguments of an intent.
        .target(
            name: "LiveControlsCommandLine",
            dependencies: ["LiveControlsProtocol", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .target(name: "LiveControlsTestSupport", path: "Tests/LiveControlsTestSupport"),
        .testTarget(name: "LiveControlsProtocolTests", dependencies: ["LiveControlsProtocol", "LiveControlsTestSupport"]),
        .testTarget(name: "LiveControlsEngineTests", dependencies: ["LiveControlsEngine", "LiveControlsTestSupport"]),
        .target(name: "LiveControlsRedisTestSupport", dependencies: ["LiveControlsRedis"], path: "Tests/LiveControlsRedisTestSupport"),
        .testTarget(name: "LiveControlsRedisTests", dependencies: ["LiveControlsRedis", "LiveControlsRedisTestSupport"]),
        .testTarget(name: "LiveControlsKitTests", dependencies: ["LiveControlsKit", "LiveControlsProtocol"]),
        .testTarget(name: "LiveControlsTransportTests", dependencies: ["LiveControlsTransport", "LiveControlsRuntime", "LiveControlsEngine"]),
        .testTarget(name: "LiveControlsRuntimeTests", dependencies: ["LiveControlsRuntime", "LiveControlsEngine", "LiveControlsProtocol", "LiveControlsSQLite",
                                                                   "LiveControlsRedis", "LiveControlsRedisTestSupport",
                                                                   .product(name: "Logging", package: "swift-log")]),
    ],
    swiftLanguageModes: [.v6]
)
