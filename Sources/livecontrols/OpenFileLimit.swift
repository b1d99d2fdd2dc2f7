#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging

/// Every WebSocket is an open file: the process's open-file limit (`ulimit -n`, RLIMIT_NOFILE) must be above
/// `--max-connections`, or accepts start failing (EMFILE) well before the server is full. Many systems start
/// processes with a soft limit of 1,024 and a much higher hard limit, so the server raises its soft limit itself
/// (up to the hard limit; a process allowed to, such as root, raises the hard limit too), before libwebsockets
/// sizes its tables from it. A soft limit far above what `--max-connections` needs (containers often start with
/// 1,048,576) is lowered to twice that: libwebsockets 4.1 as Debian builds it walks its whole descriptor table — one
/// entry per file the limit allows — on every close, so each close would cost a million steps (docs/benchmarks/HISTORY.md).
/// Twice keeps room for what `--max-connections` does not count (handshakes under way, refused connections closing,
/// HTTP requests, webhook and Redis sockets).
enum OpenFileLimit {
    /// Files the server keeps open besides its client connections: the store, Redis, the listening socket, HTTP
    /// requests, webhook deliveries, log and event descriptors.
    static let reserve = 1_024

    struct Outcome: Equatable {
        var before: rlim_t
        var after: rlim_t
        var needed: rlim_t
        var met: Bool { after >= needed }
    }

    /// Fits the soft open-file limit to `maxConnections`: raised to at least `maxConnections` + `reserve` where the hard
    /// limit (or the privilege to raise it) allows, lowered to 2 × `maxConnections` + `reserve` when it was above that.
    static func fit(toServe maxConnections: Int) -> Outcome {
        let connections = min(maxConnections, 1 << 40)
        let needed = rlim_t(connections + reserve)
        let ceiling = rlim_t(2 * connections + reserve)
        var limit = rlimit()
        guard getrlimit(resourceNumber, &limit) == 0 else { return Outcome(before: 0, after: 0, needed: needed) }
        let before = limit.rlim_cur
        if before > ceiling {
            var lowered = rlimit(rlim_cur: ceiling, rlim_max: limit.rlim_max)
            var now = rlimit()
            guard setrlimit(resourceNumber, &lowered) == 0, getrlimit(resourceNumber, &now) == 0 else {
                return Outcome(before: before, after: before, needed: needed)
            }
            return Outcome(before: before, after: now.rlim_cur, needed: needed)
        }
        guard before < needed else { return Outcome(before: before, after: before, needed: needed) }
        if limit.rlim_max < needed {
            var raised = rlimit(rlim_cur: needed, rlim_max: needed)
            var now = rlimit()
            if setrlimit(resourceNumber, &raised) == 0, getrlimit(resourceNumber, &now) == 0, now.rlim_cur >= needed {
                return Outcome(before: before, after: now.rlim_cur, needed: needed)
            }
        }
        var raised = rlimit(rlim_cur: min(needed, limit.rlim_max), rlim_max: limit.rlim_max)
        _ = setrlimit(resourceNumber, &raised)
        var now = rlimit()  // what the kernel granted (it may clamp)
        return Outcome(before: before, after: getrlimit(resourceNumber, &now) == 0 ? now.rlim_cur : before, needed: needed)
    }

    /// Fits the limit and says what it did: a notice when it was raised, an info line when it was lowered, a warning
    /// naming the fix when it stays short of `--max-connections`.
    static func prepare(maxConnections: Int, logger: Logger) {
        let outcome = fit(toServe: maxConnections)
        if outcome.after > outcome.before {
            logger.notice("open-file limit raised", metadata: ["from": "\(outcome.before)", "to": "\(outcome.after)"])
        } else if outcome.after < outcome.before {
            logger.info("open-file limit lowered to twice what --max-connections needs (libwebsockets walks a table of that size on every close)",
                        metadata: ["from": "\(outcome.before)", "to": "\(outcome.after)"])
        }
        if !outcome.met {
            logger.warning(
                "open-file limit too low for --max-connections: new connections will fail before the server is full; raise the hard limit (ulimit -Hn, systemd LimitNOFILE=, compose ulimits.nofile) or lower --max-connections",
                metadata: ["limit": "\(outcome.after)", "needed": "\(outcome.needed)", "maxConnections": "\(maxConnections)"])
        }
    }

    #if canImport(Glibc)
    private static let resourceNumber = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resourceNumber = RLIMIT_NOFILE
    #endif
}
