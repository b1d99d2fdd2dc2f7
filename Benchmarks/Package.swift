// swift-tools-version:6.0
import PackageDescription

// The load tool, kept out of the main package so everyday builds stay fast:
//   swift build -c release --package-path Benchmarks
let package = Package(
    name: "LiveControlsBenchmarks",
    products: [.executable(name: "livecontrols-bench", targets: ["livecontrols-bench"])],
    targets: [
        .target(name: "CEpoll"),
        .executableTarget(name: "livecontrols-bench", dependencies: ["CEpoll"]),
    ],
    swiftLanguageModes: [.v6]
)
