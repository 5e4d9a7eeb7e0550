import OrderedCollections
import Testing
import WireProtocol
@testable import SessionImport

@Suite struct IMUTEventMappingTests {
    private func value(_ mapped: IMUTEventMapping.Mapped, _ key: String) -> Double? { mapped.fields[key]?.number }

    @Test func deltasFollowEachModulesOwnSign() throws {
        var mapping = IMUTEventMapping()
        // Backlight and battery level: new − old; heading: old − new.
        #expect(value(try mapping.map(event: "backlightChange", type: "abs", params: ["val": .real(0.1)], mark: "initial"), "brightness") == 0.1)
        #expect(value(try mapping.map(event: "backlightChange", type: "delta", params: ["val": .real(0.2)], mark: nil), "brightness") == 0.3,
                "rounded to IMUT's 1/100, not 0.30000000000000004")
        #expect(value(try mapping.map(event: "batteryLevelChange", type: "abs", params: ["level": .integer(1)], mark: nil), "level") == 1)
        #expect(value(try mapping.map(event: "batteryLevelChange", type: "delta", params: ["level": .real(-0.25)], mark: nil), "level") == 0.75)
        #expect(value(try mapping.map(event: "headingChange", type: "abs", params: ["heading": .real(10)], mark: nil), "magneticHeading") == 10)
        #expect(value(try mapping.map(event: "headingChange", type: "delta", params: ["heading": .real(20)], mark: nil), "magneticHeading") == 350,
                "10 − 20 wraps to 350")
        #expect(value(try mapping.map(event: "headingChange", type: "delta", params: ["heading": .real(-15)], mark: nil), "magneticHeading") == 5,
                "350 + 15 wraps to 5")
    }

    @Test func aLocationDeltaCarriesTheNewCoordinates() throws {
        var mapping = IMUTEventMapping()
        let moved = try mapping.map(event: "locationChange", type: "delta",
                                    params: ["lat": .real(49.1), "lon": .real(8.5), "distance": .real(12.5)], mark: nil)
        #expect(moved.eventClass == .deviceSensor)
        #expect(moved.fields["sensor"]?.string == "location")
        #expect(value(moved, "latitude") == 49.1 && value(moved, "longitude") == 8.5 && value(moved, "distance") == 12.5)
    }

    @Test func everyEventKeepsWhereItCameFrom() throws {
        var mapping = IMUTEventMapping()
        let view = try mapping.map(event: "uiViewControllerChange", type: "abs", params: ["class-short": .string("Editor")], mark: "final")
        #expect(view.eventClass == .userInterface)
        #expect(view.fields["type"]?.string == "viewDidAppear" && view.fields["view"]?.string == "Editor")
        #expect(view.fields["imut"] == .dict(["event": .string("uiViewControllerChange"), "type": .string("abs"), "mark": .string("final")]))
        let other = try mapping.map(event: "pedometerStep", type: "other", params: ["steps": .integer(3)], mark: nil)
        #expect(other.eventClass == .custom)
        #expect(other.fields["name"]?.string == "pedometerStep" && other.fields["steps"] == .integer(3))
    }

    @Test func aDeltaWithoutAnAbsoluteValueOrOfTheWrongKindIsRefused() {
        var mapping = IMUTEventMapping()
        #expect(throws: IMUTEventMapping.Failure.self) {
            _ = try mapping.map(event: "backlightChange", type: "delta", params: ["val": .real(0.2)], mark: nil)
        }
        #expect(throws: IMUTEventMapping.Failure.self) {
            _ = try mapping.map(event: "backlightChange", type: "abs", params: ["val": .bool(true)], mark: nil)
        }
    }
}
