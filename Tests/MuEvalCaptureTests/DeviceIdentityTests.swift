import Crypto
@testable import MuEvalCapture
import SessionModel
import Testing

@Suite struct DeviceIdentityTests {
    /// The default device id: stable, one per app, and not the machine id (which must stay on the machine).
    @Test func theDefaultDeviceIdIsPerAppAndHidesTheMachineId() {
        let machine = "4f2a9c0d1e3b47a6b8c9d0e1f2a3b4c5"
        let notes = DeviceIdentity.appSpecific(machineID: machine, application: "org.mueval.PlainNote")
        #expect(notes == DeviceIdentity.appSpecific(machineID: machine, application: "org.mueval.PlainNote"))
        #expect(notes != DeviceIdentity.appSpecific(machineID: machine, application: "org.example.Other"))
        #expect(notes.count == 32 && !notes.contains(machine.prefix(8)))
        #expect(CaptureConfiguration(appId: "a").device.deviceId != CaptureConfiguration(appId: "b").device.deviceId)
    }

    /// The id is what swift-crypto's HMAC-SHA256 gives (the library computes it without a crypto library),
    /// for keys shorter and longer than SHA-256's block.
    @Test func theDeviceIdIsHMACSHA256() {
        for (machine, app) in [("4f2a9c0d1e3b47a6b8c9d0e1f2a3b4c5", "org.mueval.PlainNote"), ("", ""),
                               (String(repeating: "k", count: 64), "a"), (String(repeating: "é", count: 100), String(repeating: "x", count: 200))] {
            let code = HMAC<Crypto.SHA256>.authenticationCode(for: Array(app.utf8), using: SymmetricKey(data: Array(machine.utf8)))
            #expect(DeviceIdentity.appSpecific(machineID: machine, application: app) == lowercaseHex(Array(code).prefix(16)))
        }
    }

    /// FIPS 180-2's examples, and lengths around the padding boundary against swift-crypto.
    @Test func sha256MatchesTheStandard() {
        #expect(lowercaseHex(MuEvalCapture.SHA256.hash([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(lowercaseHex(MuEvalCapture.SHA256.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        for length in [55, 56, 63, 64, 65, 119, 120, 1000] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            #expect(MuEvalCapture.SHA256.hash(bytes) == Array(Crypto.SHA256.hash(data: bytes)))
        }
    }
}
