public import SessionModel

/// What a code typed or linked into the console's invitation page (`/i/CODE`) comes to.
public enum InvitationCheck: Sendable, Equatable {
    case found(Invitation)
    /// No invitation has the code: counted against the address as a wrong pairing code is.
    case wrong
    /// The address sent too many wrong codes (to the capture port or the web): not looked up.
    case refused(retryAfter: Double)
}

/// Invitation codes from the web share the per-address limits of the codes devices present
/// (`PairingGuard`): a guesser gains nothing by switching from the capture port to the console.
extension SessionRegistry {
    /// The invitation `code` names, unless `address` must wait; a wrong code is counted and logged as a
    /// device's would be. Reads the catalog: call it off the event loop.
    package func checkInvitation(_ code: String, address: String, limits: PairingLimits, now: Double) throws -> InvitationCheck {
        let retryAfter = lock.withLock {
            let (retryAfter, actions) = machine.webInvitation(address: address, limits: limits, now: now)
            _ = perform(actions)
            return retryAfter
        }
        if let retryAfter { return .refused(retryAfter: retryAfter) }
        // Found forgives nothing (`PairingGuard`): the visitor's own invitation must not pay for guesses at others'.
        if Invitation.isCode(code), let invitation = try catalog.invitation(code: code) { return .found(invitation) }
        decide { $0.webInvitationWrong(code, address: address, limits: limits, now: now) }
        return .wrong
    }
}
