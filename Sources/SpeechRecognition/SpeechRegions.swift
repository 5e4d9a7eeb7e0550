internal import Glibc

/// Where in a piece of 16 kHz audio someone speaks: an energy detector over 10 ms frames. The
/// recogniser decodes only these regions, each as one utterance, so silence (most of a think-aloud
/// recording) costs nothing, and every word's time is known exactly from its region's start.
struct SpeechRegions {
    static let frameSamples = 160
    /// Frames of silence within speech that still count as one region (300 ms: a pause for breath).
    static let bridgedGap = 30
    /// Shorter bursts are clicks, not words.
    static let shortestRegion = 15
    /// Frames of context kept on either side, so that a word's soft edges are not cut.
    static let padding = 20
    /// Longer regions are split at their quietest frame (the recogniser's search grows with length).
    static let longestRegion = 2000

    /// Each 10 ms frame's energy in dB (of int16 amplitude; digital silence is 0).
    static func frameEnergies(_ samples: UnsafeBufferPointer<Int16>) -> [Double] {
        let frames = samples.count / frameSamples
        var energies = [Double](repeating: 0, count: frames)
        for frame in 0..<frames {
            var sum = 0.0
            for index in frame * frameSamples..<(frame + 1) * frameSamples {
                let value = Double(samples[index])
                sum += value * value
            }
            energies[frame] = 10 * log10(sum / Double(frameSamples) + 1)
        }
        return energies
    }

    /// The speech regions as sample ranges.
    static func find(in samples: UnsafeBufferPointer<Int16>) -> [Range<Int>] {
        let energies = frameEnergies(samples)
        guard !energies.isEmpty else { return [] }
        // The noise floor is what the quietest tenth of the frames holds; speech is well above it.
        let floor = energies.sorted()[energies.count / 10]
        let threshold = max(floor + 15, 30)
        var regions: [Range<Int>] = []
        var start: Int?
        var lastSpeech = -bridgedGap - 1
        for (frame, energy) in energies.enumerated() {
            if energy >= threshold {
                if start == nil || frame - lastSpeech > bridgedGap {
                    if let start { regions.append(start..<(lastSpeech + 1)) }
                    start = frame
                }
                lastSpeech = frame
            }
        }
        if let start { regions.append(start..<(lastSpeech + 1)) }
        var result: [Range<Int>] = []
        for region in regions where region.count >= shortestRegion {
            let padded = max(0, region.lowerBound - padding)..<min(energies.count, region.upperBound + padding)
            result.append(contentsOf: split(padded, energies))
        }
        return result.map { ($0.lowerBound * frameSamples)..<min(samples.count, $0.upperBound * frameSamples) }
    }

    private static func split(_ region: Range<Int>, _ energies: [Double]) -> [Range<Int>] {
        guard region.count > longestRegion else { return [region] }
        let searched = (region.lowerBound + longestRegion / 4)..<(region.upperBound - longestRegion / 4)
        let cut = searched.min { energies[$0] < energies[$1] } ?? region.lowerBound + region.count / 2
        return split(region.lowerBound..<cut, energies) + split(cut..<region.upperBound, energies)
    }

    /// Where to cut a long recording into pieces the workers take: the middle of the quietest
    /// 200 ms within the last `window` samples of `samples`, so that no word is cut.
    static func quietestCut(in samples: ArraySlice<Int16>, window: Int) -> Int {
        let base = samples.startIndex
        let searchStart = max(0, samples.count - window)
        let span = 20 * frameSamples
        var best = samples.count
        var bestEnergy = Double.infinity
        var index = searchStart
        while index + span <= samples.count {
            var sum = 0.0
            var sample = index
            while sample < index + span {
                let value = Double(samples[base + sample])
                sum += value * value
                sample += 4  // a quarter of the samples is plenty to compare windows
            }
            if sum < bestEnergy {
                bestEnergy = sum
                best = index + span / 2
            }
            index += frameSamples * 5
        }
        return best
    }
}
