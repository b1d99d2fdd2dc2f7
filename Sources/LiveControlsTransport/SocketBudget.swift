import CLibWebSockets
import Foundation

/// Every socket libwebsockets accepts is an open file, WebSocket or not: plain HTTP connections (and WebSocket
/// handshakes under way) are counted and bounded here, at accept (`FILTER_NETWORK_CONNECTION`), before lws takes
/// them — so the process never reaches its open-file limit from what clients do. At that limit libdispatch traps
/// (it opens `/proc/self/task/…/stat` to watch its threads), and accepts, the store, Redis and webhooks fail (issue 38).
///
/// Three bounds, each refusing a new socket by closing it at once (no answer: nothing has been read):
/// - all sockets lws holds: the open-file limit less the files open at start and `ownFiles` (store, Redis, webhook
///   connections, logs, libdispatch);
/// - sockets not (yet) WebSockets (plain HTTP, WebSocket handshakes under way): `--max-http-connections`;
/// - sockets from one address: `--max-connections-per-address` + `--max-http-connections-per-address` (not for a
///   `--trusted-proxy`, whose clients it cannot tell apart before their headers; 0 for either: no bound).
///
/// Service thread only.
final class SocketBudget {
    /// Files the server keeps for itself beyond those open when the budget is set.
    static let ownFiles = 128

    let maxSockets: Int
    let maxHTTP: Int
    let maxPerAddress: Int
    private let trustedProxies: [AddressPattern]
    private(set) var sockets = 0
    private(set) var http = 0
    private var perAddress: [String: Int] = [:]
    /// The address of each socket counted (by its wsi), and whether it is still counted as HTTP.
    private var counted: [OpaquePointer: (address: String, http: Bool)] = [:]
    /// Accepted sockets between the filter and lws's adoption, by descriptor.
    private var accepting: [Int32: String] = [:]
    /// Sockets refused since the last `takeRefusals`.
    private var refusals: [String: Int] = [:]

    init(openFileLimit: Int, openAtStart: Int, maxConnections: Int, maxHTTP: Int, maxConnectionsPerAddress: Int,
         maxHTTPPerAddress: Int, trustedProxies: [AddressPattern]) {
        maxSockets = max(16, openFileLimit - openAtStart - Self.ownFiles)
        // (No share of the budget is held back for WebSockets: every WebSocket starts as an HTTP handshake, and a
        // crowd reconnecting at once after a restart must find room.)
        self.maxHTTP = max(8, min(maxHTTP, maxSockets))
        maxPerAddress = maxConnectionsPerAddress == 0 || maxHTTPPerAddress == 0 ? 0 : maxConnectionsPerAddress + maxHTTPPerAddress
        self.trustedProxies = trustedProxies
    }

    /// `FILTER_NETWORK_CONNECTION`: whether the socket just accepted from `address` may be served.
    func admit(fd: Int32, address: String) -> Bool {
        let refusal: String?
        if sockets + accepting.count >= maxSockets {
            refusal = "open files"
        } else if http + accepting.count >= maxHTTP {
            refusal = "HTTP connections"
        } else if maxPerAddress > 0, perAddress[address, default: 0] >= maxPerAddress, !trustedProxies.contains(where: { $0.matches(address) }) {
            refusal = "connections from one address"
        } else {
            refusal = nil
        }
        if let refusal {
            refusals[refusal, default: 0] += 1
            return false
        }
        accepting[fd] = address
        return true
    }

    /// `SERVER_NEW_CLIENT_INSTANTIATED`: lws adopted the socket as `wsi`.
    func adopted(_ wsi: OpaquePointer, fd: Int32) {
        guard let address = accepting.removeValue(forKey: fd) else { return }
        counted[wsi] = (address, true)
        sockets += 1
        http += 1
        perAddress[address, default: 0] += 1
    }

    /// `ESTABLISHED`: the socket is a WebSocket now (counted by `--max-connections` from here on).
    func becameWebSocket(_ wsi: OpaquePointer) {
        guard let entry = counted[wsi], entry.http else { return }
        counted[wsi] = (entry.address, false)
        http -= 1
    }

    /// `WSI_DESTROY`.
    func closed(_ wsi: OpaquePointer) {
        guard let entry = counted.removeValue(forKey: wsi) else { return }
        sockets -= 1
        if entry.http { http -= 1 }
        let left = perAddress[entry.address, default: 1] - 1
        perAddress[entry.address] = left > 0 ? left : nil
    }

    /// Sockets refused since the last call, by bound (the sweep logs them once a second, not one line each).
    func takeRefusals() -> [String: Int] {
        defer { refusals.removeAll() }
        // An accept lws did not adopt (it failed) leaves its descriptor here: none is older than one pass.
        accepting.removeAll()
        return refusals
    }

    /// The open-file limit now, and how many files are open (`/proc/self/fd`).
    static func processFiles() -> (limit: Int, open: Int) {
        var limit = rlimit()
        getrlimit(resourceNumber, &limit)
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 64
        return (limit.rlim_cur >= rlim_t(Int.max / 4) ? Int.max / 4 : Int(limit.rlim_cur), open)
    }

    #if canImport(Glibc)
    private static let resourceNumber = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resourceNumber = RLIMIT_NOFILE
    #endif

    /// The peer address of an accepted socket, as text.
    static func peerAddress(fd: Int32) -> String {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let got = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard got == 0 else { return "" }
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let named = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST)
            }
        }
        guard named == 0 else { return "" }
        let text = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.hasPrefix("::ffff:") ? String(text.dropFirst(7)) : text
    }
}
