import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// overload: more intents than one room can apply. `clients` connections join room `room` and each sends `rate`
/// intents per second (a stepper's next and prev in turn: under the default rate limit of 50/s), far more than the
/// room applies once every change goes to all of them. The server's RSS is sampled every second. Counted: intents
/// sent, acked, refused with `overloaded`, other errors, connections the server closed. The probe in another room
/// runs in its own process (Benchmarks/overload.py): this loop, busy reading the flood, would delay its acks.
/// "flooding: …" on stderr marks the start of the flood. `presence`: each client sends presence updates (a changing
/// `data`) instead of intents.
func runOverload(loop: Loop, room: String, clients count: Int, rate: Int, seconds: Double, presence: Bool = false, serverPID: Int32?) -> String {
    let target = Target.livecontrols(room: room, template: nil)
    var acked = 0, overloaded = 0, otherErrors = 0, closed = 0
    let ack = Needle(#""type":"ack""#), overloadedCode = Needle(#""code":"overloaded""#), error = Needle(#""type":"error""#)
    let conns = connectAll(loop, target: target, count: count) { _, bytes in
        if contains(bytes, ack) { acked += 1 }
        else if contains(bytes, overloadedCode) { overloaded += 1 }
        else if contains(bytes, error) { otherErrors += 1 }
    }
    for conn in conns { conn.onClose = { _ in closed += 1 } }
    progress("")
    FileHandle.standardError.write("flooding: \(conns.count) clients joined \(room)\n".data(using: .utf8)!)

    // Each client sends once per 1/rate s, the clients spread evenly over that period (10 ms ticks: a client sends
    // in the first tick at or after its turn).
    let tickNanos: UInt64 = 10_000_000
    let period = 1e9 / Double(max(1, rate))
    var turns = (0..<conns.count).map { Double($0) * period / Double(max(1, conns.count)) }
    var sent = 0
    var peakRSS = 0
    var rssSamples: [Int] = []
    let start = nowNanos()
    let end = start + UInt64(seconds * 1e9)
    var tick: UInt64 = 0
    var nextSample = start
    while nowNanos() < end {
        let elapsedNanos = Double(nowNanos() - start)
        for (i, conn) in conns.enumerated() where turns[i] <= elapsedNanos {
            turns[i] += period
            if turns[i] < elapsedNanos { turns[i] = elapsedNanos + period }  // behind: skip, never burst past the rate
            guard conn.state == .open else { continue }
            sent += 1
            if presence {
                conn.sendText(#"{"type":"presence","id":\#(sent),"room":"\#(room)","data":{"x":\#(sent % 1000),"y":\#(i)}}"#)
            } else {
                conn.sendText(#"{"type":"intent","id":\#(sent),"room":"\#(room)","control":"quantity","intent":"\#(sent % 2 == 0 ? "next" : "prev")"}"#)
            }
        }
        if let pid = serverPID, nowNanos() >= nextSample, let sample = ProcessSample.read(pid: pid) {
            rssSamples.append(sample.rssKiB)
            peakRSS = max(peakRSS, sample.rssKiB)
            nextSample += 1_000_000_000
        }
        tick += 1
        loop.run(until: { false }, deadline: start + tick * tickNanos)
    }
    let elapsed = Double(nowNanos() - start) / 1e9
    // What the server still had queued arrives now.
    loop.run(until: { false }, deadline: nowNanos() + 2_000_000_000)
    let finalRSS = serverPID.flatMap(ProcessSample.read)?.rssKiB ?? 0
    let line = "overload: \(conns.count) clients × \(rate) \(presence ? "presence updates" : "intents")/s for \(String(format: "%.0f", elapsed)) s: sent \(sent), acked \(acked), "
        + "overloaded \(overloaded), other errors \(otherErrors), closed by the server \(closed); "
        + "server RSS peak \(peakRSS) KiB, at the end \(finalRSS) KiB"
    print(line)
    let samples = rssSamples.map(String.init).joined(separator: ",")
    return #"{"scenario":"overload","message":"\#(presence ? "presence" : "intent")","clients":\#(conns.count),"rate":\#(rate),"seconds":\#(String(format: "%.1f", elapsed)),"sent":\#(sent),"#
        + #""acked":\#(acked),"overloaded":\#(overloaded),"otherErrors":\#(otherErrors),"closed":\#(closed),"#
        + #""peakRSSKiB":\#(peakRSS),"finalRSSKiB":\#(finalRSS),"rssKiB":[\#(samples)]}"#
}
