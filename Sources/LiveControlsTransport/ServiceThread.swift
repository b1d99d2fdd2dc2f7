import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The lws service thread's identity, for ownership checks: state documented "service thread only" is touched
/// in code that says `serviceThread.assertOn()`. Debug builds (which CI and the tests run) trap when another
/// thread gets there; release builds compile the check away.
final class ServiceThread: Sendable {
    /// `pthread_self()` of the thread running the service loop (set before the context is created, kept
    /// until the server has stopped: lws calls back during `lws_context_destroy` too); 0 before.
    private let id = Atomic<UInt>(0)

    /// Called first thing on the service thread.
    func claim() {
        id.store(UInt(pthread_self()), ordering: .releasing)
    }

    @inline(__always)
    func assertOn() {
        #if DEBUG
        let owner = id.load(ordering: .acquiring)
        precondition(owner != 0 && pthread_equal(pthread_t(owner), pthread_self()) != 0,
                     "service-thread-only state touched off the lws service thread")
        #endif
    }
}
