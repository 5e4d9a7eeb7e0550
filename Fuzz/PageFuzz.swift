// Page records (target `page`): what a web page's capture.js sends with `dom: true`, which the lab's browser
// replays. The allowlist (PageRecording) must never crash, must always give JSON, must keep no script element or
// event handler, and must be idempotent: a record sanitised when stored is served unchanged when sanitised again.

internal import Foundation
internal import PageRecording

enum PageFuzz {
    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let selector = input.below(6)
        let rest = Array(bytes.dropFirst())
        // The sixth choice puts the input into a stylesheet, so that the CSS reader sees any text.
        let (pageClass, record) = selector < 5
            ? (PageRecordClass.allCases[selector], rest)
            : (.snapshot, Array(#"{"s":1,"n":0,"root":{"i":1,"c":[{"i":2,"t":"style","css":"#.utf8) + quoted(rest) + Array("}]}}".utf8))
        var storing = PageRecordSanitizer(mode: .storing(assetBytes: PageRecordSanitizer.defaultAssetBytes))
        guard let stored = storing.sanitise(record, as: pageClass) else { return }
        precondition((try? JSONSerialization.jsonObject(with: Data(stored))) != nil, "not JSON: \(String(decoding: stored, as: UTF8.self))")
        let text = String(decoding: stored, as: UTF8.self).lowercased()
        for forbidden in [#""t":"script""#, #""t":"base""#, #""t":"meta""#, #""onload":"#, #""onerror":"#, #""onclick":"#, #""srcdoc":"#] {
            precondition(!text.contains(forbidden), "\(forbidden) kept in \(text)")
        }
        var serving = PageRecordSanitizer(mode: .serving)
        let served = serving.sanitise(stored, as: pageClass)
        precondition(served == stored, "served differs from stored:\n\(text)\n\(served.map { String(decoding: $0, as: UTF8.self) } ?? "nil")")
    }

    /// `bytes` as a JSON string's contents (escaped, without quotes), whatever they are.
    private static func quoted(_ bytes: [UInt8]) -> [UInt8] {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let json = try? JSONSerialization.data(withJSONObject: [text]), json.count >= 4 else { return [] }
        return Array(json.dropFirst(2).dropLast(2))
    }
}
