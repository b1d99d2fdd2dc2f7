import Foundation

/// What one fan-out or latency run measured.
struct FanoutResult {
    var subscribers: Int
    var window: Int
    var seconds: Double
    var sent = 0
    var deliveries = 0
    /// Payload bytes of the deliveries counted (their mean is the size of the message each subscriber gets).
    var deliveredBytes = 0
    var expected = 0
    /// Intents the server refused (each also counts as lost deliveries).
    var errors = 0
    var histogram = Histogram()
    var serverCPUSeconds: Double?
    var serverPeakRSSKiB: Int?
    /// Cluster runs only (several servers, or a Redis pid given): nil otherwise, so a single-node run's JSON
    /// keeps its fields.
    var cluster: ClusterFigures?

    var deliveriesPerSecond: Double { Double(deliveries) / seconds }
    var lost: Int { max(0, expected - deliveries) }

    var json: String {
        var fields = [
            #""subscribers":\#(subscribers)"#, #""window":\#(window)"#, #""seconds":\#(String(format: "%.2f", seconds))"#,
            #""sent":\#(sent)"#, #""errors":\#(errors)"#, #""deliveries":\#(deliveries)"#, #""deliveriesPerSecond":\#(Int(deliveriesPerSecond))"#, #""lost":\#(lost)"#,
            #""messageBytes":\#(deliveries > 0 ? deliveredBytes / deliveries : 0)"#,
            #""latencyMicros":{"p50":\#(histogram.percentile(0.5)),"p90":\#(histogram.percentile(0.9)),"p99":\#(histogram.percentile(0.99)),"max":\#(histogram.maxValue)}"#,
        ]
        if let cpu = serverCPUSeconds, deliveries > 0 { fields.append(#""serverCPUMicrosPerDelivery":\#(String(format: "%.3f", cpu * 1e6 / Double(deliveries)))"#) }
        if let rss = serverPeakRSSKiB { fields.append(#""serverPeakRSSKiB":\#(rss)"#) }
        if let cluster { fields.append(cluster.json(deliveries: deliveries, sent: sent, seconds: seconds)) }
        return "{" + fields.joined(separator: ",") + "}"
    }
}

/// N subscribers in one room; one driver keeps `window` messages outstanding for `seconds`.
/// Latency is send → receive at each subscriber; every message sent must reach every subscriber.
/// Several servers (`loop.endpoints`): subscribers round-robin over them (node 0 joins first and so owns the
/// room), the driver on `driverNode`; server CPU is summed over `serverPIDs`, Redis's reported apart.
func runFanout(loop: Loop, target: Target, subscribers: Int, window: Int, seconds: Double, serverPIDs: [Int32],
               redisPID: Int32? = nil, driverNode: Int = 0, threadSplit: Bool = false) -> FanoutResult {
    var result = FanoutResult(subscribers: subscribers, window: window, seconds: seconds)
    let isCluster = loop.endpoints.count > 1 || redisPID != nil
    var sendTimes: [UInt64] = []
    var counting = false
    var sending = false
    var outstanding = 0
    var next = 0
    let subs = connectAll(loop, target: target, count: subscribers) { _, bytes in
        guard counting, let id = requestID(bytes), id < sendTimes.count else { return }
        result.deliveries += 1
        result.deliveredBytes += bytes.count
        result.histogram.record(nanos: nowNanos() &- sendTimes[id])
    }
    guard subs.count == subscribers else {
        FileHandle.standardError.write(Data("only \(subs.count) of \(subscribers) subscribers connected\n".utf8))
        return result
    }
    var driver: WSConn?
    var answered = 0  // the driver's acks so far: a text's revision (`--intent splice`), each splice being one
    func send(_ conn: WSConn) {
        let id = next
        next += 1
        sendTimes.append(nowNanos())
        outstanding += 1
        switch target {
        case .livecontrols where fanoutIntent == "splice", .livecontrolsRooms where fanoutIntent == "splice":
            // A character typed at offset 10, and every 64th splice the 63 typed since deleted at the start: the note stays 64–127
            // characters. (No two splices in flight undo each other: each changes the text, so each is a patch.)
            let edit = id % 64 == 63 ? #""at":0,"delete":63"# : #""at":10,"insert":"x""#
            conn.sendText(#"{"type":"intent","id":\#(id),"room":"\#(target.room(forTag: conn.tag)!)","control":"notes","intent":"splice","args":{\#(edit),"base":\#(answered)}}"#)
        case .livecontrols where fanoutIntent == "broadcast", .livecontrolsRooms where fanoutIntent == "broadcast":
            // Not an intent: a broadcast, its event padded (`--mirror-bytes`: the padding) so its message can be made the
            // size of a `set` patch's; its id last in the event (where the scan finds it first).
            let pad = String(repeating: "x", count: mirrorBytes)
            conn.sendText(#"{"type":"broadcast","id":\#(id),"room":"\#(target.room(forTag: conn.tag)!)","event":{"pad":"\#(pad)","id":\#(id)}}"#)
        case .livecontrols where fanoutIntent == "vote", .livecontrolsRooms where fanoutIntent == "vote":
            conn.sendText(#"{"type":"intent","id":\#(id),"room":"\#(target.room(forTag: conn.tag)!)","control":"lunch","intent":"\#(id % 2 == 0 ? "vote" : "unvote")","args":{"option":"Pizza"}}"#)
        case .livecontrols, .livecontrolsRooms:
            conn.sendText(#"{"type":"intent","id":\#(id),"room":"\#(target.room(forTag: conn.tag)!)","control":"quantity","intent":"set","args":{"value":\#(id % 2 + 10)}}"#)
        case .mirror:
            // `--mirror-bytes N`: the relayed message padded to N bytes, its id last (where the scan finds it first).
            let text = mirrorBytes > 0 ? #""id":\#(id)"# : String(id)
            conn.sendText(String(repeating: "x", count: max(0, mirrorBytes - text.utf8.count)) + text)
        }
    }
    let drivers = connectAll(loop, target: target, count: 1, node: driverNode, firstTag: subscribers) { conn, bytes in
        // The driver's own answer (an ack, or its echo) frees a slot in the window.
        let isAnswer: Bool
        if case .mirror = target { isAnswer = true } else { isAnswer = contains(bytes, #""type":"ack""#) || contains(bytes, #""type":"error""#) }
        guard isAnswer, requestID(bytes) != nil else { return }
        if case .livecontrols = target, contains(bytes, #""type":"error""#) {
            if result.errors == 0 { FileHandle.standardError.write(Data("first refused intent: \(String(decoding: bytes, as: UTF8.self))\n".utf8)) }
            result.errors += 1
        }
        outstanding -= 1
        answered += 1
        if sending { send(conn) }
    }
    driver = drivers.first
    guard let driver else { return result }
    let cpuBefore = serverPIDs.map(ProcessSample.read)
    let clusterBefore = isCluster ? ClusterSample(serverPIDs: serverPIDs, redisPID: redisPID, threads: threadSplit) : nil
    counting = true
    sending = true
    let start = nowNanos()
    for _ in 0..<window { send(driver) }
    let end = start + UInt64(seconds * 1e9)
    var lastProgress = start
    loop.run(until: {
        let now = nowNanos()
        if now - lastProgress > 1_000_000_000 {
            lastProgress = now
            progress("fanout N=\(subscribers) W=\(window): \(result.deliveries) deliveries")
        }
        return false
    }, deadline: end)
    sending = false
    result.sent = next
    // Let what is in flight arrive (counted), then compare with what should have.
    let sentCount = next
    result.expected = sentCount * subscribers
    let stopSending = nowNanos() + 5_000_000_000
    loop.run(until: { result.deliveries >= result.expected }, deadline: stopSending)
    counting = false
    result.seconds = Double(nowNanos() - start) / 1e9
    progress("")
    let cpuAfter = serverPIDs.map(ProcessSample.read)
    if !serverPIDs.isEmpty, !cpuBefore.contains(where: { $0 == nil }), !cpuAfter.contains(where: { $0 == nil }) {
        result.serverCPUSeconds = zip(cpuBefore, cpuAfter).reduce(0) { $0 + $1.1!.cpuSeconds - $1.0!.cpuSeconds }
        result.serverPeakRSSKiB = cpuAfter.reduce(0) { $0 + $1!.peakRSSKiB }
    }
    if let clusterBefore {
        result.cluster = ClusterFigures(nodes: loop.endpoints.count, driverNode: driverNode,
                                        subscribersPerNode: (0..<loop.endpoints.count).map { n in subs.filter { $0.node == n }.count },
                                        before: clusterBefore, after: ClusterSample(serverPIDs: serverPIDs, redisPID: redisPID, threads: threadSplit))
    }
    for conn in subs + [driver] { loop.close(conn) }
    return result
}
