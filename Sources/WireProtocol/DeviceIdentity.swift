internal import Crypto

/// A device id for one application derived from the machine's id, as systemd's
/// `sd_id128_get_machine_app_specific` derives one: the machine id itself must not go on the network
/// (machine-id(5)), and each app gets its own id, stable across launches.
public enum DeviceIdentity {
    /// 32 lower-case hex digits: HMAC-SHA256 keyed with the machine id over the application's name.
    public static func appSpecific(machineID: String, application: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Array(application.utf8), using: SymmetricKey(data: Array(machineID.utf8)))
        return lowercaseHex(Array(code).prefix(16))
    }
}
