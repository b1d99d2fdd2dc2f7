import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Raises this process's soft open-file limit to its hard limit: every client socket is a file. Returns the limit.
func raiseOpenFileLimit() -> Int {
    var limit = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    return Int(limit.rlim_cur)
}

/// scale: `connections` clients joined to `rooms` rooms (client `t` in room `t % rooms`); the time to connect and
/// join them all, the server's RSS per connection, then `rounds` times one change in every room at once (its first
/// client sends a stepper `next`): how long until each client has the patch, measured from its room's send, and
/// whether every client got it.
///
/// A relay (`--mirror`: uWebSockets or the lws mirror) has one topic: `rooms` must be 1, and the first client sends a
/// number that the relay forwards to every client.
///
/// With `idleSeconds`, the clients first sit idle that long (answering the server's pings): the server's CPU then is
/// what keeping idle connections alive costs.
func runScale(loop: Loop, target relay: Target?, prefix: String, template: String?, connections: Int, rooms: Int, rounds: Int,
              inFlight: Int, idleSeconds: Double, serverPIDs: [Int32]) -> String {
    let target = relay ?? Target.livecontrolsRooms(prefix: prefix, rooms: rooms, template: template)
    let rooms = relay == nil ? rooms : 1
    func cpu() -> Double { serverPIDs.compactMap(ProcessSample.read).reduce(0) { $0 + $1.cpuSeconds } }
    var round = 0
    var sendTimes = [UInt64](repeating: 0, count: rooms)
    var arrived = [Int](repeating: 0, count: connections)  // the last round each client saw a patch of
    var waiting = 0
    var latency = Histogram()
    var roundSpans: [Double] = []  // ms from the first send to the last client's patch, per round
    var lastArrival: UInt64 = 0
    let patchNeedle = Needle(#""type":"patch""#)

    let before = summedRSSKiB(serverPIDs)
    let start = nowNanos()
    let conns = connectAll(loop, target: target, count: connections, inFlight: inFlight, timeoutSeconds: 600) { conn, bytes in
        guard round > 0, conn.tag < connections, arrived[conn.tag] < round, relay != nil || contains(bytes, patchNeedle) else { return }
        arrived[conn.tag] = round
        let now = nowNanos()
        latency.record(nanos: now - sendTimes[conn.tag % rooms])
        lastArrival = max(lastArrival, now)
        waiting -= 1
    }
    let connectSeconds = Double(nowNanos() - start) / 1e9
    loop.run(until: { false }, deadline: nowNanos() + 1_000_000_000)
    let after = summedRSSKiB(serverPIDs)
    let perConnection = (before != nil && after != nil && !conns.isEmpty) ? Double(after! - before!) / Double(conns.count) : 0
    progress("")

    let idleStart = cpu()
    if idleSeconds > 0 { loop.run(until: { false }, deadline: nowNanos() + UInt64(idleSeconds * 1e9)) }
    let idleCPUPercent = idleSeconds > 0 ? (cpu() - idleStart) * 100 / idleSeconds : 0
    let drivers = conns.filter { $0.tag < rooms }.sorted { $0.tag < $1.tag }
    var lost = 0
    let cpuBefore = cpu()
    if drivers.count == rooms {
        for r in 1...max(rounds, 1) {
            round = r
            waiting = conns.count
            lastArrival = 0
            let first = nowNanos()
            for driver in drivers {
                sendTimes[driver.tag] = nowNanos()
                if relay != nil {
                    driver.sendText(String(r))
                } else {
                    driver.sendText(#"{"type":"intent","id":\#(r),"room":"\#(target.room(forTag: driver.tag)!)","control":"quantity","intent":"next"}"#)
                }
            }
            loop.run(until: { waiting == 0 }, deadline: nowNanos() + 60_000_000_000)
            lost += waiting
            roundSpans.append(Double(lastArrival > first ? lastArrival - first : 0) / 1e6)
            loop.run(until: { false }, deadline: nowNanos() + 300_000_000)  // acks and the tail settle
        }
    }
    let cpuPerDelivery = latency.total > 0 ? (cpu() - cpuBefore) * 1e6 / Double(latency.total) : 0
    for conn in conns { loop.close(conn) }
    let span = roundSpans.sorted()
    let medianSpan = span.isEmpty ? 0 : span[span.count / 2]
    let server = relay == nil ? "livecontrols" : "relay"
    print("scale \(server): \(conns.count)/\(connections) joined to \(rooms) room(s) in \(String(format: "%.2f", connectSeconds)) s, "
        + "\(String(format: "%.2f", perConnection)) KiB RSS per connection; one change per room, \(rounds) rounds: "
        + "p50 \(latency.percentile(0.5)) µs p99 \(latency.percentile(0.99)) µs max \(latency.maxValue) µs, "
        + "all reached in \(String(format: "%.1f", medianSpan)) ms (median round), lost \(lost), server CPU \(String(format: "%.2f", cpuPerDelivery)) µs/delivery"
        + (idleSeconds > 0 ? ", idle \(String(format: "%.1f", idleCPUPercent))% CPU" : ""))
    return #"{"scenario":"scale","server":"\#(server)","connections":\#(conns.count),"requested":\#(connections),"rooms":\#(rooms),"#
        + #""connectSeconds":\#(String(format: "%.3f", connectSeconds)),"rssKiBPerConnection":\#(String(format: "%.2f", perConnection)),"#
        + #""rssKiB":\#(after ?? 0),"rounds":\#(rounds),"deliveries":\#(latency.total),"lost":\#(lost),"#
        + #""latencyMicros":{"p50":\#(latency.percentile(0.5)),"p99":\#(latency.percentile(0.99)),"max":\#(latency.maxValue)},"#
        + #""idleCPUPercent":\#(String(format: "%.2f", idleCPUPercent)),"allReachedMs":\#(String(format: "%.1f", medianSpan)),"serverCPUMicrosPerDelivery":\#(String(format: "%.2f", cpuPerDelivery))}"#
}
