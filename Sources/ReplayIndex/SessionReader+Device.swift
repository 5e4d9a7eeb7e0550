package import JournalStorage
package import SessionModel

extension SessionReader {
    /// The device whose screen the pages draw (the replay index's head, the Live page): the session's own, else
    /// the last one seen in the file.
    package func device(of record: SessionRecord) throws -> DeviceRecord? {
        let devices = try devices()
        return devices.last { $0.id == record.device } ?? devices.last
    }
}
