import Testing
import WireProtocol

/// An observer's note: what is refused with which words, its stored payload, and its one-line summary.
struct ObserverNoteTests {
    @Test func aNoteIsStoredAsTypedJSONWithItsClassKindSourceAndObserver() throws {
        let note = try ObserverNote(text: "cannot find \"Publish\"", kind: "problem", source: .console, observer: "jill")
        let event = note.event(timestamp: 1_300_000_000.5)
        #expect(event.eventClass == "ObserverNote" && event.eventClass == ObserverNote.eventClass)
        #expect(event.timestamp == 1_300_000_000.5 && event.seq == nil && event.blobs.isEmpty)
        #expect(String(decoding: event.payload, as: UTF8.self)
            == #"{"class":"ObserverNote","text":"cannot find \"Publish\"","kind":"problem","source":"console","observer":"jill"}"#)
        #expect(ObserverNote(payload: try TypedJSON.decodeLeavingBlobs(event.payload)) == note)
    }

    @Test func theKindDefaultsToNoteAndAnUnknownObserverIsLeftOut() throws {
        let note = try ObserverNote(text: "starts the second task", source: .muevalctl, observer: "")
        #expect(note.kind == "note")
        #expect(note.payload["observer"] == nil)
        #expect(note.payload["source"]?.string == "muevalctl")
    }

    @Test(arguments: [
        ("", "note", ObserverNoteError.emptyText),
        (" \n\t", "note", .emptyText),
        (String(repeating: "x", count: 4097), "note", .textTooLong(bytes: 4097, limit: 4096)),
        ("text", "", .badKind("", "it is empty")),
        ("text", "  ", .badKind("  ", "it is empty")),
        ("text", "bad\nkind", .badKind("bad\nkind", "it contains control characters")),
        ("text", "bell\u{7}", .badKind("bell\u{7}", "it contains control characters")),
        ("text", String(repeating: "k", count: 65), .badKind(String(repeating: "k", count: 65), "it is longer than 64 bytes")),
    ])
    func badNotesAreRefusedWithTheirReason(text: String, kind: String, expected: ObserverNoteError) {
        #expect(throws: expected) { try ObserverNote(text: text, kind: kind, source: .console) }
    }

    @Test func theLimitsAreInclusiveAndAnyLabelIsAKind() throws {
        let longest = String(repeating: "é", count: 2048)
        #expect(try ObserverNote(text: longest, kind: "wants-coffee ☕", source: .console).text.utf8.count == 4096)
        #expect(throws: Never.self) { try ObserverNote(text: "x", kind: String(repeating: "k", count: 64), source: .console) }
    }

    @Test func errorsTellWhatToGive() {
        #expect(ObserverNoteError.badKind("a\nb", "it contains control characters").description
            == #""a\nb" cannot be a note's kind: it contains control characters; use note, problem, quote, task-done or a short label of your own"#)
        #expect(ObserverNoteError.unknownSource("web").description == #""web" is not a note's source; give console or muevalctl"#)
        #expect(ObserverNoteError.emptyText.description == "a note needs some text")
    }

    @Test func theSummaryIsTheKindAndTheTextOnOneLine() throws {
        let note = try ObserverNote(text: "hesitates\nthen taps Back", kind: "quote", source: .console)
        #expect(PayloadSummary.line(eventClass: ObserverNote.eventClass, payload: note.payload) == #"quote "hesitates then taps Back""#)
        let long = try ObserverNote(text: String(repeating: "a", count: 300), source: .console)
        #expect(PayloadSummary.line(eventClass: ObserverNote.eventClass, payload: long.payload, limit: 10) == "note \"aaaaaaaaa…\"")
        // A device that sends this class without a text is summarised as any event.
        #expect(PayloadSummary.line(eventClass: ObserverNote.eventClass, payload: .dict(["class": .string("ObserverNote"), "x": .integer(1)])) == "x=1")
    }
}

/// Observer task marks (issue 16): notes that say which study task began, ended or how it went.
@Suite struct TaskMarkTests {
    @Test func aTaskMarkIsANoteWithItsTaskAndVerdictAndReadsBack() throws {
        let verdict = try ObserverNote(.outcome, task: "Edit blog posting", outcome: .assisted, comment: "I showed the button",
                                       source: .console, observer: "jill")
        #expect(verdict.kind == "task-outcome")
        #expect(verdict.text == "I showed the button")
        let read = try #require(ObserverNote(payload: verdict.payload))
        #expect(read == verdict)
        #expect(read.taskMark == .outcome)
        #expect(read.outcome == .assisted)
        let begin = try ObserverNote(.begin, task: "Edit blog posting", source: .muevalctl)
        #expect(begin.text == "Edit blog posting begins")
        #expect(begin.summary(limit: 80) == "task-begin \"Edit blog posting begins\"")
        #expect(try ObserverNote(text: "plain", source: .console).taskMark == nil)
    }

    @Test func aVerdictNeedsAnOutcomeAndOnlyAVerdictHasOne() {
        #expect(throws: ObserverNoteError.outcomeOnlyForVerdicts) { try ObserverNote(.outcome, task: "T", source: .console) }
        #expect(throws: ObserverNoteError.outcomeOnlyForVerdicts) { try ObserverNote(.end, task: "T", outcome: .success, source: .console) }
        #expect(throws: ObserverNoteError.badTask(" ")) { try ObserverNote(.begin, task: " ", source: .console) }
        #expect(throws: ObserverNoteError.unknownOutcome("great")) { try TaskOutcome(checking: "great") }
    }
}
