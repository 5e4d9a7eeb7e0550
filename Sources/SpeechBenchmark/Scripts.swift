internal import Foundation
internal import SpeechRecognition

/// What the benchmark's recordings say, and how they are put together: lines written for this project, spoken by
/// espeak-ng (`speak`) with pauses between them, at 22,050 Hz.
enum Scripts {
    /// Think-aloud as a tester says it: commentary, now and then an exclamation (the hour, in three voices).
    static let hour = [
        "okay so I am on the start screen now", "let me open the blog first", "where is the publish button",
        "this list looks fine, I can read the titles", "I will tap on the first post", "oh no, what happened",
        "the text is a bit small but it works", "now I want to write a new post", "I can't find the settings",
        "typing the title now, this keyboard is okay", "why did it go back to the list", "I think that was the right button",
        "scrolling down to see more entries", "the map opens and the room is on the second floor", "good, that is done",
    ]

    /// The same kind of session in German, as a lab in Munich hears it.
    static let german = [
        "okay, ich bin jetzt auf der Startseite", "ich öffne zuerst den Blog", "wo ist der Knopf zum Veröffentlichen",
        "die Liste sieht gut aus, ich kann die Titel lesen", "ich tippe auf den ersten Beitrag", "oh nein, was ist passiert",
        "die Schrift ist etwas klein, aber es geht", "jetzt will ich einen neuen Beitrag schreiben", "ich finde die Einstellungen nicht",
        "ich tippe jetzt den Titel, die Tastatur ist in Ordnung", "warum ist es zur Liste zurückgegangen", "ich glaube, das war der richtige Knopf",
        "ich scrolle nach unten, um mehr zu sehen", "die Karte öffnet sich und der Raum ist im zweiten Stock", "gut, das ist erledigt",
        "wo finde ich meine Entwürfe", "das Foto lädt sehr langsam", "ich kann den Text nicht lesen, er ist zu hell",
        "jetzt teile ich die Notiz mit meiner Kollegin", "warum hat sich das Fenster geschlossen",
    ]

    /// A line as said: its text, voice and where it stands in the recording (seconds).
    struct Line {
        var text: String
        var voice: String
        var start: Double
        var end: Double
    }

    /// The lines in turn, each after a pause of 1 to 6 s (the same on every run, so that runs compare word for word),
    /// until `minutes` are full (0: each line once); then a second of silence.
    static func recording(_ lines: [(text: String, voice: String)], minutes: Double) -> (pcm: [UInt8], said: [Line]) {
        let spoken = lines.map { speak($0.text, voice: $0.voice) }
        let rate = 22_050
        var pcm: [UInt8] = []
        pcm.reserveCapacity(Int(max(minutes, 1) * 60) * rate * 2)
        var said: [Line] = []
        while minutes > 0 ? pcm.count < Int(minutes * 60) * rate * 2 : said.count < lines.count {
            pcm += [UInt8](repeating: 0, count: (1 + said.count * 5 % 6) * rate * 2)
            let index = said.count % lines.count
            let start = Double(pcm.count / 2) / Double(rate)
            pcm += spoken[index]
            said.append(Line(text: lines[index].text, voice: lines[index].voice, start: start, end: Double(pcm.count / 2) / Double(rate)))
        }
        pcm += [UInt8](repeating: 0, count: rate * 2)
        return (pcm, said)
    }

    /// The exclamations a line says, by the same matching as the transcriber's (lower case, letters and apostrophes).
    static func phrases(in line: String, exclamations: [ExclamationPhrase]) -> [String] {
        let words = " " + WordErrorRate.words(line).joined(separator: " ") + " "
        return exclamations.map(\.phrase).filter { words.contains(" \($0) ") }
    }

    static func silence(minutes: Double) -> [UInt8] {
        [UInt8](repeating: 0, count: Int(minutes * 60) * 22_050 * 2)
    }

    /// White noise at -30 dBFS (RMS), from a fixed seed: a fan or a busy room without a voice.
    static func noise(minutes: Double) -> [UInt8] {
        let count = Int(minutes * 60) * 22_050
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let peak = 32_768 * pow(10, -30.0 / 20) * 3.0.squareRoot()
        var pcm = [UInt8]()
        pcm.reserveCapacity(count * 2)
        for _ in 0..<count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let uniform = Double(state >> 11) / Double(1 << 53) * 2 - 1
            let sample = UInt16(bitPattern: Int16(uniform * peak))
            pcm.append(UInt8(sample & 0xFF))
            pcm.append(UInt8(sample >> 8))
        }
        return pcm
    }
}
