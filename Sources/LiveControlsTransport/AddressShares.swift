import Foundation
import LiveControlsEngine
import LiveControlsRuntime
import Synchronization

/// What one client address may take of the server: WebSocket connections held at once, and rooms its joins create
/// (a token bucket per address, refilled over a minute). So one client — or one script with many sockets — cannot
/// take every connection slot or every room slot from everyone else.
///
/// The address is the peer's, or, when the peer is a trusted proxy (`--trusted-proxy`), the last address of the
/// `X-Forwarded-For` header that proxy sent (the one it saw).
final class AddressShares: Sendable {
    let maxConnections: Int
    let roomCreationsPerMinute: Int
    let trustedProxies: [AddressPattern]

    private struct State {
        var connections: [String: Int] = [:]
        var creations: [String: RateLimiter] = [:]
    }
    private let state = Mutex(State())

    init(limits: Limits, trustedProxies: [AddressPattern]) {
        self.maxConnections = limits.maxConnectionsPerAddress
        self.roomCreationsPerMinute = limits.roomCreationsPerMinute
        self.trustedProxies = trustedProxies
    }

    /// The address a request counts against: `peer`, unless `peer` is a trusted proxy that forwarded another.
    func clientAddress(peer: String, forwardedFor: String?) -> String {
        guard let forwardedFor, trustedProxies.contains(where: { $0.matches(peer) }),
              let last = forwardedFor.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty
        else { return peer }
        return last
    }

    /// Counts one more connection from `address`; false (nothing counted) when it already holds its share.
    func openConnection(from address: String) -> Bool {
        state.withLock { state in
            let held = state.connections[address, default: 0]
            guard maxConnections == 0 || held < maxConnections else { return false }
            state.connections[address] = held + 1
            return true
        }
    }

    func closeConnection(from address: String) {
        state.withLock { state in
            guard let held = state.connections[address] else { return }
            state.connections[address] = held > 1 ? held - 1 : nil
        }
    }

    /// Takes one room creation from `address`'s bucket: nil when it may create one now, else how many seconds until
    /// it may.
    func takeRoomCreation(by address: String, now: Instant) -> Int? {
        guard roomCreationsPerMinute > 0 else { return nil }
        let perMinute = Double(roomCreationsPerMinute)
        return state.withLock { state in
            var bucket = state.creations[address]
                ?? RateLimiter(rate: perMinute / 60, burst: perMinute, strikeLimit: .max, now: now)
            let admitted = bucket.admit(now: now) == .accept
            state.creations[address] = bucket
            return admitted ? nil : max(1, Int((60 / perMinute).rounded(.up)))
        }
    }

    /// Forgets the buckets that have refilled (an address that has not created rooms for a minute): memory follows
    /// the addresses that create rooms now, not every address ever seen.
    func sweep(now: Instant) {
        state.withLock { state in
            state.creations = state.creations.filter { !$0.value.isFull(now: now) }
        }
    }
}

/// One `--trusted-proxy` entry: an address, or a network in CIDR notation (`10.0.0.0/8`, `fd00::/8`).
public struct AddressPattern: Sendable, Equatable {
    let bytes: [UInt8]
    let prefixBits: Int

    /// Nil when `text` is not an IPv4 or IPv6 address with an optional `/bits`.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
        guard let first = parts.first, let bytes = AddressPattern.parse(first) else { return nil }
        let bits = parts.count == 2 ? Int(parts[1]) : bytes.count * 8
        guard let bits, (0...(bytes.count * 8)).contains(bits) else { return nil }
        self.bytes = bytes
        self.prefixBits = bits
    }

    func matches(_ address: String) -> Bool {
        guard var other = AddressPattern.parse(address) else { return false }
        // An IPv4 peer seen through an IPv6 socket (::ffff:a.b.c.d) is compared as IPv4.
        if bytes.count == 4, other.count == 16, other.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]) {
            other = Array(other.suffix(4))
        }
        guard other.count == bytes.count else { return false }
        var left = prefixBits
        for (a, b) in zip(bytes, other) where left > 0 {
            let mask: UInt8 = left >= 8 ? 0xFF : ~(0xFF >> UInt8(left))
            if a & mask != b & mask { return false }
            left -= 8
        }
        return true
    }

    private static func parse(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}
