internal import Foundation

extension FaceScan {
    /// Reads the script's output, which is untrusted: anything not of the expected form is refused with what is wrong.
    static func parse(_ data: Data, limits: FaceScanner) throws(FaceScanError) -> FaceScanner.Outcome {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw FaceScanError("the face scan's output is not a JSON object")
        }
        if let reason = object["unavailable"] as? String { return .unavailable(String(reason.prefix(300))) }
        if let reason = object["error"] as? String { return .failed(String(reason.prefix(300))) }
        guard let rows = object["samples"] as? [[Any]], rows.count <= limits.maxSamples else {
            throw FaceScanError("the face scan's output has no list of at most \(limits.maxSamples) samples")
        }
        let emotionsUnavailable = (object["emotionsUnavailable"] as? String).map { String($0.prefix(300)) }
        if object["emotionsUnavailable"] != nil, emotionsUnavailable == nil {
            throw FaceScanError("the face scan's emotionsUnavailable is not text")
        }
        var samples: [Sample] = []
        for (index, row) in rows.enumerated() {
            guard let time = (row.first as? NSNumber)?.doubleValue, time.isFinite, time >= (samples.last?.time ?? 0), time < 1e7,
                  row.count > 1, let name = row[1] as? String, let kind = Kind(rawValue: name) else {
                throw FaceScanError("the face scan's sample \(index + 1) is not [seconds in order, frontal|profile|none, …]")
            }
            // A frontal face carries its expression exactly when the model ran.
            let length = kind == .none ? 2 : kind == .frontal && emotionsUnavailable == nil ? 8 : 6
            let box = row.prefix(6).dropFirst(2).compactMap { ($0 as? NSNumber)?.doubleValue }
            guard row.count == length, kind == .none || box.count == 4 && box.allSatisfy({ $0.isFinite && (0...1).contains($0) }) else {
                throw FaceScanError("the face scan's sample \(index + 1) is not [seconds, \(kind), \(kind == .none ? "" : "four fractions of the frame")"
                    + "\(length == 8 ? ", expression, probability" : "")]")
            }
            var expression: Expression?
            if length == 8 {
                guard let name = row[6] as? String, let label = Emotion(rawValue: name),
                      let probability = (row[7] as? NSNumber)?.doubleValue, probability.isFinite, (0...1).contains(probability) else {
                    throw FaceScanError("the face scan's sample \(index + 1) has no expression (one of fer's seven) with a probability in 0…1")
                }
                expression = Expression(emotion: label, probability: probability)
            }
            samples.append(Sample(time: time, kind: kind, box: kind == .none ? nil : box, expression: expression))
        }
        return .scanned(FaceScan(samples: samples, complete: object["complete"] as? Bool ?? true, emotionsUnavailable: emotionsUnavailable))
    }
}

/// The face scan's output could not be used.
public struct FaceScanError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

