/// The face scan of one video: its samples, checked, and what the report says of them.
public struct FaceScan: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// A face turned to the phone: the tester looks at it (roughly: the eyes are not tracked).
        case frontal
        /// A face turned aside.
        case profile
        case none
    }

    /// fer's seven classes, in its model's output order.
    public enum Emotion: String, Sendable {
        case angry, disgust, fear, happy, sad, surprise, neutral
    }

    public struct Sample: Sendable, Equatable {
        /// Seconds from the video's start.
        public var time: Double
        public var kind: Kind
        /// The face's box as fractions of the frame (x, y, width, height); nil without a face.
        public var box: [Double]?
        /// A frontal face's most probable expression; nil for other faces or without the model.
        public var expression: Expression? = nil
    }

    /// The model's most probable class for one face and the probability it gives it.
    public struct Expression: Sendable, Equatable {
        public var emotion: Emotion
        public var probability: Double
    }

    /// A non-neutral expression held over consecutive samples.
    public struct StrongEmotion: Sendable, Equatable {
        public var emotion: Emotion
        /// From the first sample's time to the last one's plus one sample interval.
        public var span: ClosedRange<Double>
        public var peak: Double

        /// The report moves a run onto the session's clock.
        package init(emotion: Emotion, span: ClosedRange<Double>, peak: Double) {
            self.emotion = emotion
            self.span = span
            self.peak = peak
        }
    }

    public var samples: [Sample]
    /// False when the scan stopped at `maxSamples`.
    public var complete: Bool
    /// Why no expressions were classified (fer or tflite-runtime missing); nil when they were.
    public var emotionsUnavailable: String?

    /// The share of samples with a face, turned to the phone or not.
    public var faceShare: Double { share { $0.kind != .none } }
    /// The share of samples with a face turned to the phone.
    public var facingShare: Double { share { $0.kind == .frontal } }

    private func share(_ test: (Sample) -> Bool) -> Double {
        samples.isEmpty ? 0 : Double(samples.count(where: test)) / Double(samples.count)
    }

    /// Runs of samples without a face turned to the phone: from the first such sample to the next one
    /// facing it (or one sample interval past the last sample).
    public func lookAways(interval: Double) -> [ClosedRange<Double>] {
        var spans: [ClosedRange<Double>] = []
        var start: Double?
        for sample in samples {
            if sample.kind == .frontal {
                if let from = start { spans.append(from...max(from, sample.time)) }
                start = nil
            } else if start == nil {
                start = sample.time
            }
        }
        if let from = start, let last = samples.last { spans.append(from...max(from, last.time + interval)) }
        return spans
    }

    /// Runs of at least `minimumSamples` consecutive samples whose face shows the same non-neutral expression
    /// with at least `threshold` probability.
    public func strongEmotions(threshold: Double, minimumSamples: Int = 2, interval: Double) -> [StrongEmotion] {
        func strong(_ index: Int) -> Emotion? {
            guard index < samples.count, let expression = samples[index].expression, expression.emotion != .neutral,
                  expression.probability >= threshold else { return nil }
            return expression.emotion
        }
        var found: [StrongEmotion] = []
        var index = 0
        while index < samples.count {
            guard let emotion = strong(index) else {
                index += 1
                continue
            }
            var end = index
            while strong(end + 1) == emotion { end += 1 }
            if end - index + 1 >= minimumSamples {
                let run = samples[index...end]
                found.append(StrongEmotion(emotion: emotion, span: samples[index].time...(samples[end].time + interval),
                                           peak: run.compactMap { $0.expression?.probability }.max() ?? 0))
            }
            index = end + 1
        }
        return found
    }
}
