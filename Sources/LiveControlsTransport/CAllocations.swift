import CLibWebSockets
import Foundation

/// C memory libwebsockets keeps pointers to for the context's whole life (names, protocols,
/// mounts, per-vhost options). Allocated before `lws_create_context`, freed after
/// `lws_context_destroy` — never earlier.
final class CAllocations {
    private var strings: [UnsafeMutablePointer<CChar>] = []
    private var blocks: [UnsafeMutableRawPointer] = []

    func string(_ s: String) -> UnsafePointer<CChar> {
        let p = strdup(s)!
        strings.append(p)
        return UnsafePointer(p)
    }

    /// A zero-initialised C struct (or array of them) that lives as long as this object.
    func allocate<T>(_ type: T.Type, count: Int = 1) -> UnsafeMutablePointer<T> {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<T>.stride * count, alignment: MemoryLayout<T>.alignment)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<T>.stride * count)
        blocks.append(raw)
        return raw.bindMemory(to: T.self, capacity: count)
    }

    deinit {
        for s in strings { free(s) }
        for b in blocks { b.deallocate() }
    }
}
