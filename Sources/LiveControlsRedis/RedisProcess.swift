#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Process-wide settings the Redis client needs.
public enum RedisProcess {
    /// hiredis writes with `write(2)`: writing to a server that has gone away raises SIGPIPE, which kills the
    /// process (exit 141). With SIGPIPE ignored the write fails with EPIPE and the client reports
    /// `.connection` ("Broken pipe") instead. Call once at startup, before any Redis connection is used:
    /// the server's startup must call it wherever it uses this module, and the tests do.
    /// Safe from any thread; affects the whole process.
    public static func ignoreSIGPIPE() {
        signal(SIGPIPE, SIG_IGN)
    }
}
