internal import Foundation
internal import WireProtocol

extension ReplayIndexFile {
    /// What `GET /api/sessions/ID/replay` answered before the index became a file (docs/CONSOLE.md): every
    /// event's id, time, class and summary as columns, and the screenshots, touches, views, notes,
    /// problems and gaps, in one JSON for scripts.
    package func wholeJSON() throws -> [UInt8] {
        let head = try head()
        var classes: [String: Int] = [:], classNames: [String] = []
        var ids: [UInt8] = [], times: [UInt8] = [], classColumn: [UInt8] = [], summaries: [UInt8] = []
        var screenshots: [ReplayIndex.Chunk.Screenshot] = [], touches: [ReplayIndex.Chunk.Touch] = [], views: [ReplayIndex.Chunk.View] = []
        func separate(_ column: inout [UInt8]) { if !column.isEmpty { column.append(UInt8(ascii: ",")) } }
        for entry in head.chunks {
            let chunk = try self.chunk(entry)
            for (index, id) in chunk.id.enumerated() {
                guard chunk.t.indices.contains(index), chunk.c.indices.contains(index), chunk.classes.indices.contains(chunk.c[index]) else {
                    throw ReplayIndexError(damaged: "a chunk's columns differ in length")
                }
                let name = chunk.classes[chunk.c[index]]
                let global: Int
                if let known = classes[name] { global = known } else { global = classNames.count; classes[name] = global; classNames.append(name) }
                separate(&ids); JSONObject.integer(id, to: &ids)
                separate(&times); JSONObject.number(chunk.t[index], to: &times)
                separate(&classColumn); JSONObject.integer(Int64(global), to: &classColumn)
                separate(&summaries); JSONString.append(chunk.s.indices.contains(index) ? chunk.s[index] : "", to: &summaries)
            }
            screenshots += chunk.screenshots
            touches += chunk.touches
            views += chunk.views
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var json: [UInt8] = Array(#"{"session":"#.utf8)
        json.append(contentsOf: try encoder.encode(head.session))
        json.append(contentsOf: #","device":"#.utf8)
        json.append(contentsOf: try head.device.map { Array(try encoder.encode($0)) } ?? Array("null".utf8))
        json.append(contentsOf: #","start":"#.utf8); JSONObject.number(head.start, to: &json)
        json.append(contentsOf: #","end":"#.utf8); JSONObject.number(head.end, to: &json)
        json.append(contentsOf: #","classes":"#.utf8); json.append(contentsOf: try encoder.encode(classNames))
        json.append(contentsOf: #","events":{"id":["#.utf8); json.append(contentsOf: ids)
        json.append(contentsOf: #"],"t":["#.utf8); json.append(contentsOf: times)
        json.append(contentsOf: #"],"c":["#.utf8); json.append(contentsOf: classColumn)
        json.append(contentsOf: #"],"s":["#.utf8); json.append(contentsOf: summaries)
        json.append(contentsOf: #"]},"screenshots":"#.utf8); json.append(contentsOf: try encoder.encode(screenshots))
        json.append(contentsOf: #","touches":"#.utf8); json.append(contentsOf: try encoder.encode(touches))
        json.append(contentsOf: #","views":"#.utf8); json.append(contentsOf: try encoder.encode(views))
        json.append(contentsOf: #","notes":"#.utf8); json.append(contentsOf: try encoder.encode(head.notes))
        json.append(contentsOf: #","problems":"#.utf8); json.append(contentsOf: try encoder.encode(head.problems))
        json.append(contentsOf: #","gaps":"#.utf8); json.append(contentsOf: try encoder.encode(head.gaps))
        json.append(UInt8(ascii: "}"))
        return json
    }
}
