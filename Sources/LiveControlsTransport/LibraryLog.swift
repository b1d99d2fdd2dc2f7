import CLibWebSockets
import Foundation
import Logging
import Synchronization

/// libwebsockets' own log lines, through the server's logger at `debug` (label `libwebsockets`) instead of its raw
/// stderr lines: they came before the server's own message and said less ("E: init server failed" before "cannot
/// listen on 127.0.0.1:8080 (address in use…)", issue 41). Every failure they tell is also told by the server itself.
enum LibraryLog {
    private static let logger = Mutex<Logger?>(nil)

    /// Routes lws's lines to `logger` from now on (one logger per process: the last server's).
    static func route(to logger: Logger) {
        var library = logger
        library[metadataKey: "library"] = "libwebsockets"
        Self.logger.withLock { $0 = library }
        lws_set_log_level(Int32(LLL_ERR) | Int32(LLL_WARN), emit)
    }

    private static let emit: @convention(c) (Int32, UnsafePointer<CChar>?) -> Void = { _, line in
        guard let line else { return }
        let text = String(cString: line).trimmingCharacters(in: .whitespacesAndNewlines)
        LibraryLog.logger.withLock { $0 }?.debug("\(text)")
    }
}
