import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Latencies in whole microseconds up to 10 s: exact percentiles with fixed memory.
struct Histogram {
    private var counts = [UInt32](repeating: 0, count: 10_000_001)
    private(set) var total = 0
    private(set) var maxValue = 0

    mutating func record(nanos: UInt64) {
        let us = min(Int(nanos / 1_000), counts.count - 1)
        counts[us] &+= 1
        total += 1
        maxValue = max(maxValue, us)
    }

    func percentile(_ p: Double) -> Int {
        guard total > 0 else { return 0 }
        let rank = Int((Double(total) * p).rounded(.up))
        var seen = 0
        for (us, c) in counts.enumerated() where c > 0 {
            seen += Int(c)
            if seen >= rank { return us }
        }
        return maxValue
    }
}

/// The servers' RSS summed (KiB), or nil when any of them cannot be read (or none is named).
func summedRSSKiB(_ pids: [Int32]) -> Int? {
    let samples = pids.map(ProcessSample.read)
    guard !samples.isEmpty, !samples.contains(where: { $0 == nil }) else { return nil }
    return samples.reduce(0) { $0 + $1!.rssKiB }
}

/// A process's CPU time and memory, from /proc.
struct ProcessSample {
    var cpuSeconds: Double
    var rssKiB: Int
    var peakRSSKiB: Int

    static func read(pid: Int32) -> ProcessSample? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let cpu = ((Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)) / ticks
        func kib(_ key: String) -> Int {
            status.split(separator: "\n").first { $0.hasPrefix(key) }.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[1]) } ?? 0
        }
        return ProcessSample(cpuSeconds: cpu, rssKiB: kib("VmRSS:"), peakRSSKiB: kib("VmHWM:"))
    }
}

/// Reads the integer after the last `"id":` in a message (the request id in an ack or a patch's cause),
/// or the whole message as a number (mirror baseline).
func requestID(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
    let pattern: [UInt8] = Array(#""id":"#.utf8)
    var i = bytes.count - pattern.count
    while i >= 0 {
        if bytes[i] == pattern[0] && bytes[i + 1] == pattern[1] && bytes[i + 2] == pattern[2] && bytes[i + 3] == pattern[3] && bytes[i + 4] == pattern[4] {
            return parseInt(bytes, from: i + pattern.count)
        }
        i -= 1
    }
    return parseInt(bytes, from: 0)
}

private func parseInt(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
    var value = 0, i = start, digits = 0
    while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 { value = value * 10 + Int(bytes[i] - 48); i += 1; digits += 1 }
    return digits > 0 ? value : nil
}

/// A byte string to look for, converted once.
struct Needle {
    let bytes: [UInt8]
    init(_ text: String) { bytes = Array(text.utf8) }
}

func contains(_ bytes: UnsafeBufferPointer<UInt8>, _ needle: String) -> Bool {
    contains(bytes, Needle(needle))
}

func contains(_ bytes: UnsafeBufferPointer<UInt8>, _ needle: Needle) -> Bool {
    let n = needle.bytes
    guard bytes.count >= n.count else { return false }
    for i in 0...(bytes.count - n.count) where bytes[i] == n[0] {
        var match = true
        for j in 1..<n.count where bytes[i + j] != n[j] { match = false; break }
        if match { return true }
    }
    return false
}

func progress(_ text: String) {
    FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
}

/// This process's own CPU time (user + system), seconds.
func selfCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

/// CPU seconds of each thread of `pid`, by thread id, with the thread's name (`/proc/<pid>/task/*/stat`).
func threadCPU(pid: Int32) -> [Int: (name: String, seconds: Double)] {
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    var out: [Int: (String, Double)] = [:]
    for tid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/stat", encoding: .utf8),
              let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")"), let id = Int(tid) else { continue }
        let name = String(stat[stat.index(after: open)..<close])
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        out[id] = (name, ((Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)) / ticks)
    }
    return out
}

/// CPU counters of a cluster run's processes at one instant.
struct ClusterSample {
    var order: [Int32]
    var servers: [Int32: Double] = [:]
    var redis: Double?
    var tool = selfCPUSeconds()
    var threads: [Int32: [Int: (name: String, seconds: Double)]] = [:]

    init(serverPIDs: [Int32], redisPID: Int32?, threads: Bool) {
        order = serverPIDs
        for pid in serverPIDs { servers[pid] = ProcessSample.read(pid: pid)?.cpuSeconds }
        redis = redisPID.flatMap(ProcessSample.read)?.cpuSeconds
        if threads { for pid in serverPIDs { self.threads[pid] = threadCPU(pid: pid) } }
    }
}

/// What a cluster run adds to the JSON: where the subscribers were, and each process's CPU over the run.
struct ClusterFigures {
    var nodes: Int
    var driverNode: Int
    var subscribersPerNode: [Int]
    var before: ClusterSample
    var after: ClusterSample

    func json(deliveries: Int, sent: Int, seconds: Double) -> String {
        let perDelivery = { (s: Double) in String(format: "%.3f", deliveries > 0 ? s * 1e6 / Double(deliveries) : 0) }
        var fields = [#""nodes":\#(nodes)"#, #""driverNode":\#(driverNode)"#, #""subscribersPerNode":\#(subscribersPerNode)"#,
                      #""intentsPerSecond":\#(Int(Double(sent) / seconds))"#]
        // In the order the pids were given (node 0 first, as with --ports).
        let servers = before.order.compactMap { pid -> String? in
            guard let b = before.servers[pid], let a = after.servers[pid] else { return nil }
            return #""\#(pid)":\#(String(format: "%.3f", a - b))"#
        }
        fields.append(#""serverCPUSecondsByPid":{\#(servers.joined(separator: ","))}"#)
        if let b = before.redis, let a = after.redis {
            fields.append(#""redisCPUSeconds":\#(String(format: "%.3f", a - b))"#)
            fields.append(#""redisCPUMicrosPerDelivery":\#(perDelivery(a - b))"#)
        }
        fields.append(#""toolCPUSeconds":\#(String(format: "%.3f", after.tool - before.tool))"#)
        if !after.threads.isEmpty {
            var perPid: [String] = []
            for pid in before.order {
                // Each thread that used CPU, busiest first, as "name/tid" (dispatch's worker threads are
                // unnamed and serve whichever queue has work, so a worker is not one queue).
                let threads = after.threads[pid] ?? [:]
                let used = threads.map { (tid, t) in ("\(t.name)/\(tid)", t.seconds - (before.threads[pid]?[tid]?.seconds ?? 0)) }
                let items = used.filter { $0.1 >= 0.005 }.sorted { $0.1 > $1.1 }.prefix(8)
                    .map { #""\#($0.0)":\#(String(format: "%.3f", $0.1))"# }
                perPid.append(#""\#(pid)":{\#(items.joined(separator: ","))}"#)
            }
            fields.append(#""threadCPUSeconds":{\#(perPid.joined(separator: ","))}"#)
        }
        return #""cluster":{\#(fields.joined(separator: ","))}"#
    }
}
