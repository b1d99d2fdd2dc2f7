import Foundation

/// The integer after `"key":` in a message, if any.
func intField(_ bytes: UnsafeBufferPointer<UInt8>, _ key: String) -> Int? {
    let pattern = Array("\"\(key)\":".utf8)
    guard bytes.count > pattern.count else { return nil }
    for i in 0...(bytes.count - pattern.count) where bytes[i] == pattern[0] {
        var match = true
        for j in 1..<pattern.count where bytes[i + j] != pattern[j] { match = false; break }
        if match {
            var value = 0, k = i + pattern.count, digits = 0
            while k < bytes.count, bytes[k] >= 48, bytes[k] <= 57 { value = value * 10 + Int(bytes[k] - 48); k += 1; digits += 1 }
            return digits > 0 ? value : nil
        }
    }
    return nil
}

/// hold: one press held for `seconds`; every subscriber must see the same ticks; lateness of each tick
/// against its scheduled instant (press arrival + delay + (k − 1) × interval, per subscriber). With
/// `intentsPerSecond`, another client of the room sends that many `next` intents a second meanwhile (a busy room:
/// its fan-out can leave the server's writing behind, and the room pausing for it).
func runHold(loop: Loop, room: String, template: String?, subscribers: Int, seconds: Double, delayMs: Int, intervalMs: Int,
             intentsPerSecond: Int = 0) -> String {
    var pressArrival: [Int: UInt64] = [:]
    var sequences: [Int: [Int]] = [:]
    var lateness = Histogram()
    let subs = connectAll(loop, target: .livecontrols(room: room, template: template), count: subscribers) { conn, bytes in
        guard contains(bytes, #""type":"patch""#) else { return }
        let now = nowNanos()
        if contains(bytes, #""intent":"press""#) { pressArrival[conn.tag] = now; return }
        guard contains(bytes, #""kind":"tick""#), let tick = intField(bytes, "tick"), let version = intField(bytes, "version"),
              let pressed = pressArrival[conn.tag] else { return }
        sequences[conn.tag, default: []].append(version)
        let scheduled = pressed + UInt64(delayMs + (tick - 1) * intervalMs) * 1_000_000
        lateness.record(nanos: now > scheduled ? now - scheduled : 0)
    }
    guard let driver = connectAll(loop, target: .livecontrols(room: room, template: template), count: 1, onMessage: { _, _ in }).first else {
        return #"{"scenario":"hold","error":"driver could not connect"}"#
    }
    driver.sendText(#"{"type":"intent","id":1,"room":"\#(room)","control":"quantity","intent":"press","args":{"direction":"next"}}"#)
    let end = nowNanos() + UInt64(seconds * 1e9)
    if intentsPerSecond > 0, let sender = connectAll(loop, target: .livecontrols(room: room, template: template), count: 1,
                                                     onMessage: { _, _ in }).first {
        var due = nowNanos(), id = 10
        while due < end {
            sender.sendText(#"{"type":"intent","id":\#(id),"room":"\#(room)","control":"quantity","intent":"next"}"#)
            id += 1
            due += 1_000_000_000 / UInt64(intentsPerSecond)
            loop.run(until: { false }, deadline: min(due, end))
        }
    } else {
        loop.run(until: { false }, deadline: end)
    }
    driver.sendText(#"{"type":"intent","id":2,"room":"\#(room)","control":"quantity","intent":"release"}"#)
    loop.run(until: { false }, deadline: nowNanos() + 300_000_000)
    let all = subs.map { sequences[$0.tag] ?? [] }
    let identical = Set(all.map { $0.description }).count == 1
    let ticks = all.first?.count ?? 0
    for conn in subs + [driver] { loop.close(conn) }
    print("hold N=\(subscribers) \(seconds)s at \(intervalMs) ms: \(ticks) ticks, identical everywhere: \(identical), lateness p50 \(lateness.percentile(0.5)) µs p99 \(lateness.percentile(0.99)) µs max \(lateness.maxValue) µs")
    return #"{"scenario":"hold","server":"livecontrols","subscribers":\#(subscribers),"ticks":\#(ticks),"identical":\#(identical),"latenessMicros":{"p50":\#(lateness.percentile(0.5)),"p99":\#(lateness.percentile(0.99)),"max":\#(lateness.maxValue)}}"#
}

/// idle: `count` connections joined to one room; time to connect them all, server RSS per connection.
/// With several servers the connections are spread round-robin and RSS is summed over `serverPIDs`.
func runIdle(loop: Loop, target: Target, count: Int, inFlight: Int = 512, serverPIDs: [Int32]) -> String {
    let before = summedRSSKiB(serverPIDs)
    let start = nowNanos()
    let conns = connectAll(loop, target: target, count: count, inFlight: inFlight, timeoutSeconds: 120) { _, _ in }
    let seconds = Double(nowNanos() - start) / 1e9
    loop.run(until: { false }, deadline: nowNanos() + 500_000_000)  // let presence patches settle
    let after = summedRSSKiB(serverPIDs)
    let perConnection = (before != nil && after != nil && !conns.isEmpty) ? Double(after! - before!) / Double(conns.count) : 0
    for conn in conns { loop.close(conn) }
    let server = { if case .mirror = target { return "mirror" } else { return "livecontrols" } }()
    print("idle \(server): \(conns.count)/\(count) connected in \(String(format: "%.2f", seconds)) s, \(String(format: "%.2f", perConnection)) KiB RSS per connection")
    return #"{"scenario":"idle","server":"\#(server)","connections":\#(conns.count),"seconds":\#(String(format: "%.3f", seconds)),"rssKiBPerConnection":\#(String(format: "%.2f", perConnection))}"#
}

/// churn: connect, join, (every 10th: press), drop abruptly — `cycles` times; RSS must stay flat and no hold
/// may outlive its holder.
func runChurn(loop: Loop, room: String, template: String?, cycles: Int, serverPID: Int32?) -> String {
    let target = Target.livecontrols(room: room, template: template)
    func cycle(_ n: Int) {
        var done = 0
        var i = 0
        while done < n {
            let batch = min(50, n - done)
            let conns = connectAll(loop, target: target, count: batch) { _, _ in }
            for conn in conns {
                if i % 10 == 0 { conn.sendText(#"{"type":"intent","id":1,"room":"\#(room)","control":"quantity","intent":"press","args":{"direction":"next"}}"#) }
                i += 1
            }
            loop.run(until: { false }, deadline: nowNanos() + 2_000_000)
            for conn in conns { loop.close(conn, abort: true) }
            done += batch
            if n >= 1000 && done % 1000 == 0 { progress("churn \(done)/\(n)") }
        }
        progress("")
    }
    cycle(min(500, cycles))  // warm up allocator pools
    let before = serverPID.flatMap(ProcessSample.read)
    let start = nowNanos()
    cycle(cycles)
    let seconds = Double(nowNanos() - start) / 1e9
    loop.run(until: { false }, deadline: nowNanos() + 500_000_000)
    let after = serverPID.flatMap(ProcessSample.read)
    // A probe joins and asks again (a resync) to read the stepper's `holding` in a fresh snapshot.
    var held: Bool? = nil
    if let probe = connectAll(loop, target: target, count: 1, onMessage: { _, bytes in
        if contains(bytes, #""type":"snapshot""#) { held = contains(bytes, #""holding":{"#) }
    }).first {
        probe.sendText(#"{"type":"join","room":"\#(room)"}"#)
        loop.run(until: { held != nil }, deadline: nowNanos() + 5_000_000_000)
        loop.close(probe)
    }
    let growth = (before != nil && after != nil) ? after!.rssKiB - before!.rssKiB : 0
    print("churn: \(cycles) cycles in \(String(format: "%.1f", seconds)) s, RSS growth \(growth) KiB, hold left running: \(held ?? true)")
    return #"{"scenario":"churn","server":"livecontrols","cycles":\#(cycles),"seconds":\#(String(format: "%.2f", seconds)),"rssGrowthKiB":\#(growth),"leakedHold":\#(held ?? true)}"#
}
