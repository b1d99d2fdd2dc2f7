import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// overload: more intents than one room can apply. `clients` connections join room `room` and each sends `rate`
/// intents per second (a stepper's next and prev in turn: under the default rate limit of 50/s), far more than the
/// room applies once every change goes to all of them. A probe in another room (`room`-probe) sends one intent at a
/// time and times its ack: what everyone else on the server sees meanwhile. The server's RSS is sampled every
/// second. Counted: intents sent, acked, refused with `overloaded`, other errors, connections the server closed.
func runOverload(loop: Loop, room: String, clients count: Int, rate: Int, seconds: Double, serverPID: Int32?) -> String {
    let target = Target.livecontrols(room: room, template: nil)
    var acked = 0, overloaded = 0, otherErrors = 0, closed = 0
    let ack = Needle(#""type":"ack""#), overloadedCode = Needle(#""code":"overloaded""#), error = Needle(#""type":"error""#)
    let conns = connectAll(loop, target: target, count: count) { _, bytes in
        if contains(bytes, ack) { acked += 1 }
        else if contains(bytes, overloadedCode) { overloaded += 1 }
        else if contains(bytes, error) { otherErrors += 1 }
    }
    for conn in conns { conn.onClose = { _ in closed += 1 } }
    progress("overload: \(conns.count) clients joined \(room)")

    // The probe: its own room, one intent at a time.
    var probeLatency = Histogram()
    var probeSentAt: UInt64 = 0
    var probeID = 0
    var probeWaiting = false
    let probeRoom = room + "-probe"
    let probeTarget = Target.livecontrols(room: probeRoom, template: nil)
    let probe = connectAll(loop, target: probeTarget, count: 1) { _, bytes in
        guard probeWaiting, contains(bytes, #""type":"ack""#), requestID(bytes) == probeID else { return }
        probeLatency.record(nanos: nowNanos() - probeSentAt)
        probeWaiting = false
    }.first
    func sendProbe() {
        guard let probe, !probeWaiting else { return }
        probeID += 1
        probeWaiting = true
        probeSentAt = nowNanos()
        probe.sendText(#"{"type":"intent","id":\#(probeID),"room":"\#(probeRoom)","control":"quantity","intent":"\#(probeID % 2 == 0 ? "next" : "prev")"}"#)
    }

    // Each client sends once per 1/rate s, the clients spread evenly over that period (10 ms ticks).
    let tickNanos: UInt64 = 10_000_000
    let ticksPerPeriod = max(1, 100 / max(1, rate))
    var sent = 0
    var peakRSS = 0
    var rssSamples: [Int] = []
    let start = nowNanos()
    let end = start + UInt64(seconds * 1e9)
    var tick: UInt64 = 0
    var nextSample = start
    while nowNanos() < end {
        let slot = Int(tick % UInt64(ticksPerPeriod))
        var i = slot
        while i < conns.count {
            let conn = conns[i]
            if conn.state == .open {
                sent += 1
                conn.sendText(#"{"type":"intent","id":\#(sent),"room":"\#(room)","control":"quantity","intent":"\#(sent % 2 == 0 ? "next" : "prev")"}"#)
            }
            i += ticksPerPeriod
        }
        sendProbe()
        if let pid = serverPID, nowNanos() >= nextSample, let sample = ProcessSample.read(pid: pid) {
            rssSamples.append(sample.rssKiB)
            peakRSS = max(peakRSS, sample.rssKiB)
            nextSample += 1_000_000_000
        }
        tick += 1
        loop.run(until: { false }, deadline: start + tick * tickNanos)
    }
    let elapsed = Double(nowNanos() - start) / 1e9
    // What the server still had queued arrives now; the probe gets its last answer.
    loop.run(until: { false }, deadline: nowNanos() + 2_000_000_000)
    let finalRSS = serverPID.flatMap(ProcessSample.read)?.rssKiB ?? 0
    let line = "overload: \(conns.count) clients × \(rate)/s for \(String(format: "%.0f", elapsed)) s: sent \(sent), acked \(acked), "
        + "overloaded \(overloaded), other errors \(otherErrors), closed by the server \(closed); probe in another room: "
        + "p50 \(probeLatency.percentile(0.5)) µs p99 \(probeLatency.percentile(0.99)) µs max \(probeLatency.maxValue) µs "
        + "(\(probeLatency.total) intents); server RSS peak \(peakRSS) KiB, at the end \(finalRSS) KiB"
    print(line)
    let samples = rssSamples.map(String.init).joined(separator: ",")
    return #"{"scenario":"overload","clients":\#(conns.count),"rate":\#(rate),"seconds":\#(String(format: "%.1f", elapsed)),"sent":\#(sent),"#
        + #""acked":\#(acked),"overloaded":\#(overloaded),"otherErrors":\#(otherErrors),"closed":\#(closed),"#
        + #""probeP50Us":\#(probeLatency.percentile(0.5)),"probeP99Us":\#(probeLatency.percentile(0.99)),"probeMaxUs":\#(probeLatency.maxValue),"#
        + #""probeIntents":\#(probeLatency.total),"peakRSSKiB":\#(peakRSS),"finalRSSKiB":\#(finalRSS),"rssKiB":[\#(samples)]}"#
}
