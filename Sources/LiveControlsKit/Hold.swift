import Observation

/// A running hold-to-repeat, started by `press`: the server steps the control until the hold ends.
///
/// The hold renews the server's lease while it is kept, and ends on ``release()``, when the handle is dropped,
/// when the connection is lost (the server ends it: `disconnect`), or when the server ends it (a bound, another
/// member's press, the lease, a reset…): ``isActive`` turns false and ``endReason`` says why.
/// ``SequentialControl/hold(_:while:)`` scopes a hold to a closure: it ends when the closure returns, throws or
/// its task is cancelled.
@MainActor @Observable
public final class Hold {
    public let room: String
    public let control: String
    /// Where a stepper, list or pager steps; nil for a toggle's confirming hold.
    public let direction: Direction?
    /// True until the hold ends.
    public internal(set) var isActive = true
    /// Why the hold ended: the server's reason (`release`, `bound`, `replaced`, `lease`, `disconnect`, …).
    public internal(set) var endReason: String?

    @ObservationIgnored let client: LiveControlsClient
    @ObservationIgnored let token: Int

    init(room: String, control: String, direction: Direction?, client: LiveControlsClient, token: Int) {
        self.room = room
        self.control = control
        self.direction = direction
        self.client = client
        self.token = token
    }

    /// Ends the hold (`release`); returns once the server acknowledged it, or at once when it already ended.
    public func release() async {
        guard isActive else { return }
        let client = self.client, room = self.room, control = self.control, token = self.token
        // Not tied to the caller's task: a cancelled task still releases.
        await Task { await client.releaseHold(room: room, control: control, token: token) }.value
    }

    func end(_ reason: String) {
        guard isActive else { return }
        isActive = false
        endReason = reason
    }

    deinit {
        let client = self.client, room = self.room, control = self.control, token = self.token
        Task { @MainActor in client.abandonHold(room: room, control: control, token: token) }
    }
}

/// A claim on a control or a part of it: others see who is editing (and, under an exclusive claim, cannot write
/// it). The claim renews its lease until ``release(reason:)``, until the handle is dropped, or until the server
/// ends it (``isActive`` false, ``endReason`` the server's reason).
@MainActor @Observable
public final class Claim {
    public let room: String
    public let control: String
    public let target: String
    public internal(set) var isActive = true
    public internal(set) var endReason: String?

    @ObservationIgnored let client: LiveControlsClient
    @ObservationIgnored let token: Int

    init(room: String, control: String, target: String, client: LiveControlsClient, token: Int) {
        self.room = room
        self.control = control
        self.target = target
        self.client = client
        self.token = token
    }

    /// Why a claim is given up: `release`, or `blur` (the field lost focus).
    public enum Reason: String, Sendable {
        case release, blur
    }

    /// Gives the claim up (`unclaim`); returns once the server acknowledged it, or at once when it already ended.
    public func release(reason: Reason = .release) async {
        guard isActive else { return }
        let client = self.client, room = self.room, control = self.control, target = self.target, token = self.token
        await Task { await client.unclaim(room: room, control: control, target: target, reason: reason, token: token) }.value
    }

    func end(_ reason: String) {
        guard isActive else { return }
        isActive = false
        endReason = reason
    }

    deinit {
        let client = self.client, room = self.room, control = self.control, target = self.target, token = self.token
        Task { @MainActor in client.abandonClaim(room: room, control: control, target: target, token: token) }
    }
}
