import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// livecontrols-bench: protocol-v1 load tool (and the lws mirror baseline), one process, epoll.
///
///   livecontrols-bench fanout  --port P [--mirror] [--subscribers N] [--window W] [--seconds S] [--server-pid PID]
///   livecontrols-bench latency --port P [--mirror] [--subscribers 100] [--seconds S] [--server-pid PID]
///   livecontrols-bench drag    --port P [--subscribers 1000] [--rate 60] [--seconds 5] [--server-pid PID]   (Benchmarks/drag-config.json: template `drag`, a range `fader`)
///   livecontrols-bench hold    --port P --template bench [--subscribers 1000] [--seconds 10] [--delay-ms 500] [--interval-ms 100] [--intents-per-second 0]
///   livecontrols-bench idle    --port P [--mirror] [--connections 10000] [--in-flight 512] [--server-pid PID]
///   livecontrols-bench churn   --port P --template bench [--cycles 2000] [--server-pid PID]
///   livecontrols-bench overload --port P [--clients 5000] [--rate 10] [--message intent|presence] [--seconds 20] [--server-pid PID]
///   livecontrols-bench scale   --port P --template bench [--connections 100000] [--rooms 1] [--rounds 5] [--idle-seconds 0] [--in-flight 512] [--server-pid PID]
///
/// `--source-addresses 127.0.0.2,127.0.0.3` spreads the sockets over local addresses (one address gives at most
/// ~28,000 connections to one server port: its ephemeral ports). The tool raises its own open-file limit to the hard
/// limit; more clients than that cannot be opened (it says so).
///
/// Cluster mode (fanout, latency, idle): `--ports P0,P1` (and `--hosts H0,H1`, default --host for all) name
/// the nodes; subscribers are spread round-robin over them, and node 0's first subscriber joins before the
/// others, so node 0 owns the room. `--driver-node K` picks the driver's node (default 1 with several nodes:
/// the one that does not own the room). `--server-pid` may be repeated or a comma list (CPU summed over all,
/// each also reported), `--redis-pid PID` adds Redis's CPU as its own figure, `--thread-split` each server
/// thread's CPU.
///
/// Prints a human line and, last, one JSON result on stdout; progress goes to stderr.
let arguments = Array(CommandLine.arguments.dropFirst())
guard let scenario = arguments.first else {
    print("usage: livecontrols-bench fanout|latency --port P [--mirror] [--subscribers N] [--window W] [--seconds S] [--server-pid PID] [--room R] [--template T]")
    exit(2)
}
func option(_ name: String) -> String? {
    guard let i = arguments.firstIndex(of: "--\(name)"), i + 1 < arguments.count else { return nil }
    return arguments[i + 1]
}
/// Every value of a repeatable option, comma lists split.
func options(_ name: String) -> [String] {
    arguments.indices.filter { arguments[$0] == "--\(name)" && $0 + 1 < arguments.count }
        .flatMap { arguments[$0 + 1].split(separator: ",").map(String.init) }
}
let ports = options("ports").map { UInt16($0)! }
let port = UInt16(option("port") ?? "8080")!
let defaultHost = option("host") ?? "127.0.0.1"
let hosts = options("hosts")
let endpoints: [(host: String, port: UInt16)] = ports.isEmpty
    ? [(defaultHost, port)]
    : ports.enumerated().map { (i, p) in (hosts.isEmpty ? defaultHost : hosts[min(i, hosts.count - 1)], p) }
let driverNode = Int(option("driver-node") ?? (endpoints.count > 1 ? "1" : "0"))!
guard driverNode >= 0 && driverNode < endpoints.count else { print("--driver-node must be below the number of --ports"); exit(2) }
let redisPID = option("redis-pid").flatMap { Int32($0) }
let mirror = arguments.contains("--mirror")
/// Mirror peers only: pad each relayed message to this many bytes (0: the bare id).
let mirrorBytes = Int(option("mirror-bytes") ?? "0")!
/// `--intent set` (default: the stepper `quantity`, one view), `vote` (the poll `lunch`: the driver votes and unvotes in
/// turn, so each patch has two views — the voter's, with its ballot, and everyone else's) or `splice` (the text `notes`:
/// a character typed, now and then 32 deleted, transformed against the splices still in flight; `Benchmarks/views-config.json`),
/// or `broadcast` (not an intent: a `broadcast` whose event is padded with `--mirror-bytes` characters).
let fanoutIntent = option("intent") ?? "set"
let room = option("room") ?? "bench-\(getpid())-\(nowNanos() % 1_000_000)"
let target: Target = mirror ? .mirror : .livecontrols(room: room, template: option("template"))
let serverPIDs = options("server-pid").compactMap { Int32($0) }
let serverPID = serverPIDs.first
let seconds = Double(option("seconds") ?? "5")!
signal(SIGPIPE, SIG_IGN)

let openFileLimit = raiseOpenFileLimit()
let loop = Loop(endpoints: endpoints, path: target.path, subprotocol: target.subprotocol)
loop.sourceAddresses = options("source-addresses")
switch scenario {
case "fanout", "latency":
    let subscribers = Int(option("subscribers") ?? (scenario == "latency" ? "100" : "1000"))!
    let window = scenario == "latency" ? 1 : Int(option("window") ?? "16")!
    let r = runFanout(loop: loop, target: target, subscribers: subscribers, window: window, seconds: seconds, serverPIDs: serverPIDs,
                      redisPID: redisPID, driverNode: driverNode, threadSplit: arguments.contains("--thread-split"))
    let cpu = r.serverCPUSeconds.map { String(format: "%.2f µs", $0 * 1e6 / Double(max(r.deliveries, 1))) } ?? "–"
    var line = "\(scenario) \(mirror ? "mirror" : "livecontrols") N=\(subscribers) W=\(window): \(Int(r.deliveriesPerSecond)) deliveries/s, "
        + "latency p50 \(r.histogram.percentile(0.5)) µs p90 \(r.histogram.percentile(0.9)) µs p99 \(r.histogram.percentile(0.99)) µs max \(r.histogram.maxValue) µs, "
        + "lost \(r.lost), server CPU \(cpu)/delivery"
    if let c = r.cluster {
        line += " (\(c.nodes) node(s), subscribers \(c.subscribersPerNode), driver on node \(c.driverNode)"
        if let b = c.before.redis, let a = c.after.redis { line += String(format: ", Redis CPU %.2f µs/delivery", (a - b) * 1e6 / Double(max(r.deliveries, 1))) }
        line += ")"
    }
    print(line)
    print(#"{"scenario":"\#(scenario)","server":"\#(mirror ? "mirror" : "livecontrols")",\#(r.json.dropFirst())"#)
case "drag":
    guard case let .livecontrols(room, _) = target else { print("drag needs LiveControls"); exit(2) }
    print(runDrag(loop: loop, room: room, subscribers: Int(option("subscribers") ?? "1000")!, rate: Int(option("rate") ?? "60")!,
                  seconds: seconds, serverPIDs: serverPIDs))
case "hold":
    guard case let .livecontrols(room, template) = target else { print("hold needs LiveControls"); exit(2) }
    let json = runHold(loop: loop, room: room, template: template, subscribers: Int(option("subscribers") ?? "1000")!,
                       seconds: Double(option("seconds") ?? "10")!, delayMs: Int(option("delay-ms") ?? "500")!,
                       intervalMs: Int(option("interval-ms") ?? "100")!,
                       intentsPerSecond: Int(option("intents-per-second") ?? "0")!)
    print(json)
case "idle":
    print(runIdle(loop: loop, target: target, count: Int(option("connections") ?? "10000")!,
                  inFlight: Int(option("in-flight") ?? "512")!, serverPIDs: serverPIDs))
case "churn":
    guard case let .livecontrols(room, template) = target else { print("churn needs LiveControls"); exit(2) }
    print(runChurn(loop: loop, room: room, template: template, cycles: Int(option("cycles") ?? "2000")!, serverPID: serverPID))
case "overload":
    guard case let .livecontrols(room, _) = target else { print("overload needs LiveControls"); exit(2) }
    print(runOverload(loop: loop, room: room, clients: Int(option("clients") ?? "5000")!, rate: Int(option("rate") ?? "10")!,
                      seconds: Double(option("seconds") ?? "20")!, presence: option("message") == "presence", serverPID: serverPID))
case "scale":
    let connections = Int(option("connections") ?? "100000")!
    if connections + 64 > openFileLimit {
        FileHandle.standardError.write(Data("scale: \(connections) connections need more open files than this process may have (\(openFileLimit), the hard limit); raise it (ulimit -Hn) or fewer will connect\n".utf8))
    }
    print(runScale(loop: loop, target: mirror ? target : nil, prefix: room, template: option("template"), connections: connections, rooms: Int(option("rooms") ?? "1")!,
                   rounds: Int(option("rounds") ?? "5")!, inFlight: Int(option("in-flight") ?? "512")!,
                   idleSeconds: Double(option("idle-seconds") ?? "0")!, serverPIDs: serverPIDs))
default:
    print("unknown scenario \(scenario)")
    exit(2)
}
