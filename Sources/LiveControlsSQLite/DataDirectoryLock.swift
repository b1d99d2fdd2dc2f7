#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// An exclusive lock on a data directory, held for the life of the process that took it: `flock` on
/// `<dir>/livecontrols.lock`, which the kernel releases when the process ends however it ends (even
/// `kill -9`). A second server given the same `--data-dir` is refused before it reads or writes anything.
/// (`flock` locks are per host: a data directory on a network file system shared by two hosts is not
/// protected.)
public final class DataDirectoryLock: Sendable {
    public let path: String
    private let descriptor: Int32

    /// Why the lock could not be taken.
    public struct Refused: Error, CustomStringConvertible {
        public let description: String
    }

    /// Takes the lock, creating the directory and the lock file when needed; throws at once (never waits)
    /// when another process holds it, naming that process's pid when the file says it.
    public init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        path = (directory as NSString).appendingPathComponent("livecontrols.lock")
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw Refused(description: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let why = errno
            let holder = Self.readPID(fd)
            close(fd)
            if why == EWOULDBLOCK {
                let who = holder.map { "process \($0)" } ?? "another process"
                throw Refused(description: "the data directory \(directory) is in use by \(who) (another LiveControls server?): "
                              + "two servers must never share one store; stop that one or give this one another --data-dir")
            }
            throw Refused(description: "cannot lock \(path): \(String(cString: strerror(why)))")
        }
        descriptor = fd
        // For the message a second server prints: who holds it.
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    private static func readPID(_ fd: Int32) -> Int? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        return Int(String(decoding: buffer.prefix(n), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
