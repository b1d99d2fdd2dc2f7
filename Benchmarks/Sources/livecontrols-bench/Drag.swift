import Foundation

/// drag: one client drags a `range` (control `fader` of the `drag` template) at `rate` `set`s a second for `seconds`,
/// with `subscribers` watching. Every set carries a new value (its sequence number), so each delivery says which set it
/// shows: the watchers' delay is from that set's send to its arrival, and how many of the sets a watcher saw is the
/// coalescing (`minIntervalMs`). Server CPU per delivery from /proc. Acks and `rate_limited` refusals are counted.
func runDrag(loop: Loop, room: String, subscribers: Int, rate: Int, seconds: Double, serverPIDs: [Int32]) -> String {
    var sentAt: [Int: UInt64] = [:]
    var delay = Histogram()
    var deliveries = 0, lastSeen: [Int: Int] = [:]
    let marker = #""path":"/controls/fader/value""#
    let subs = connectAll(loop, target: .livecontrols(room: room, template: "drag"), count: subscribers) { conn, bytes in
        guard contains(bytes, #""type":"patch""#), contains(bytes, marker), let value = intField(bytes, "value") else { return }
        deliveries += 1
        lastSeen[conn.tag] = value
        if let sent = sentAt[value] { delay.record(nanos: nowNanos() - sent) }
    }
    var acks = 0, refused = 0
    guard let driver = connectAll(loop, target: .livecontrols(room: room, template: "drag"), count: 1, onMessage: { _, bytes in
        if contains(bytes, #""type":"ack""#) { acks += 1 }
        if contains(bytes, #""rate_limited""#) { refused += 1 }
    }).first else {
        return #"{"scenario":"drag","error":"driver could not connect"}"#
    }
    loop.run(until: { false }, deadline: nowNanos() + 300_000_000)  // the joins' presence settles
    let cpuBefore = serverPIDs.map(ProcessSample.read)
    let start = nowNanos(), end = start + UInt64(seconds * 1e9)
    var due = start, value = 1
    deliveries = 0
    while due < end {
        sentAt[value] = nowNanos()
        driver.sendText(#"{"type":"intent","id":\#(value),"room":"\#(room)","control":"fader","intent":"set","args":{"value":\#(value)}}"#)
        value += 1
        due += 1_000_000_000 / UInt64(rate)
        loop.run(until: { false }, deadline: min(due, end))
    }
    let sets = value - 1
    loop.run(until: { lastSeen.count == subs.count && lastSeen.values.allSatisfy { $0 == sets } }, deadline: nowNanos() + 3_000_000_000)
    let elapsed = Double(nowNanos() - start) / 1e9
    let cpuAfter = serverPIDs.map(ProcessSample.read)
    var cpuPerDelivery = "null"
    if !serverPIDs.isEmpty, !cpuBefore.contains(where: { $0 == nil }), !cpuAfter.contains(where: { $0 == nil }), deliveries > 0 {
        let cpu = zip(cpuBefore, cpuAfter).reduce(0) { $0 + $1.1!.cpuSeconds - $1.0!.cpuSeconds }
        cpuPerDelivery = String(format: "%.3f", cpu * 1e6 / Double(deliveries))
    }
    let lastDelivered = subs.allSatisfy { lastSeen[$0.tag] == sets }
    let perWatcher = Double(deliveries) / Double(max(subs.count, 1))
    for conn in subs + [driver] { loop.close(conn) }
    print("drag N=\(subscribers) at \(rate)/s for \(seconds)s: \(sets) sets, \(acks) acks, \(refused) rate_limited, \(String(format: "%.1f", perWatcher)) patches per watcher, "
        + "\(Int(Double(deliveries) / elapsed)) deliveries/s, delay p50 \(delay.percentile(0.5)) µs p99 \(delay.percentile(0.99)) µs, "
        + "last value everywhere: \(lastDelivered), server CPU \(cpuPerDelivery) µs/delivery")
    return #"{"scenario":"drag","server":"livecontrols","subscribers":\#(subscribers),"rate":\#(rate),"sets":\#(sets),"acks":\#(acks),"rateLimited":\#(refused),"patchesPerWatcher":\#(String(format: "%.1f", perWatcher)),"deliveriesPerSecond":\#(Int(Double(deliveries) / elapsed)),"delayMicros":{"p50":\#(delay.percentile(0.5)),"p99":\#(delay.percentile(0.99))},"lastValueEverywhere":\#(lastDelivered),"serverCPUMicrosPerDelivery":\#(cpuPerDelivery)}"#
}
