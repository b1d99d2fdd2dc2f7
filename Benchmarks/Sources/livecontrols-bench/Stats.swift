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
