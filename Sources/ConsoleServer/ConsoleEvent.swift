internal import JournalStorage
internal import SessionModel
internal import WireProtocol

/// An event as the pages get it: the line `export --format jsonl` writes, plus `summary`, the
/// one-line description the tail and `muevalctl events` show (PayloadSummary), so that every view
/// of an event describes it in the same words.
enum ConsoleEvent {
    static func json(_ event: StoredEvent) -> [UInt8] {
        var json = event.jsonLine()
        json.removeLast(2)  // the closing brace and the line's end
        JSONObject.key("summary", to: &json)
        JSONString.append(summary(of: event), to: &json)
        json.append(UInt8(ascii: "}"))
        return json
    }

    static func summary(of event: StoredEvent) -> String {
        let payload = (try? TypedJSON.decodeLeavingBlobs(Array(event.payload.utf8))) ?? .dict([:])
        return PayloadSummary.line(eventClass: event.eventClass, payload: payload)
    }
}
