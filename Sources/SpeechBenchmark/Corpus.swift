/// The think-aloud corpus the exclamation figures of docs/SPEECH.md are measured on: what a tester
/// says while using blog, notes and map apps. Lines are written for this project.
enum Corpus {
    /// Eight lines for each default exclamation, as testers say them: alone, leading, after a filler.
    static let exclamations: [(phrase: String, lines: [String])] = [
        ("oh no", ["oh no", "oh no, it closed", "oh no, the text is gone", "oh no, not again", "oh no, I lost it",
                   "oh no, that was wrong", "oh no, where did it go", "oh no, the photo"]),
        ("what happened", ["what happened", "wait, what happened", "what happened to my post", "what happened here",
                           "hmm, what happened now", "what happened to the list", "what happened, it froze", "so what happened there"]),
        ("where is", ["where is the publish button", "where is the menu", "where is the save button", "where is my draft",
                      "so where is the settings page", "where is the back arrow", "where is it", "where is the search field"]),
        ("i can't", ["I can't find it", "I can't see my new post in the list", "I can't tap this", "I can't read the text",
                     "I can't go back", "hmm, I can't do that", "I can't type here", "I can't scroll down"]),
        ("why did", ["why did it go back to the list", "why did it do that", "why did the photo not open", "why did that happen",
                     "why did it close", "hmm, why did it stop", "why did the screen change", "why did my text vanish"]),
    ]

    /// Commentary without an exclamation: every phrase found in it is a false alarm.
    static let ordinary = [
        "okay so I am on the start screen now", "this list looks fine, I can read the titles", "I will tap on the first post",
        "the text is a bit small but it works", "now I want to write a new post", "typing the title now, this keyboard is okay",
        "okay, I am on the list of blogs now", "let me look at the posts first", "good, that is done", "I will add a note for the office",
        "the colours are nice", "I am scrolling down to see more", "that was quick", "let me try the other tab", "this looks like the settings",
        "I think this is the right place", "now I press the big button at the bottom", "the picture is loading", "fine, it saved my changes",
        "I would like to change the font size", "this icon probably means share", "let me go back one step", "the title is already filled in",
        "I am writing a short text about my holiday", "now I add a photo from the gallery", "the photo looks good", "okay the post is online",
        "I can see the comments below", "there are three comments", "let me answer the first one", "the keyboard covers the field a bit",
        "I will close the keyboard", "that is much better", "now I open the menu", "there are many options here", "I choose the statistics",
        "the chart shows the visits of this week", "interesting, more visitors on monday", "I go back to the start", "that is all for this task",
        "let me read the instructions again", "the next task is to edit a post", "I select the second post", "I change the first sentence",
        "this works as I expected", "the button is green now", "I think it is saved automatically", "let me check the preview",
        "the preview looks the same as the post", "okay, I am done with this part", "now the notes app", "I create a new note",
        "the note is about the meeting tomorrow", "I type the time and the place", "this is easy", "I add a reminder as well",
        "the reminder is set for nine in the morning", "now I share the note with my colleague", "I pick her name from the list", "sent, good",
        "the app asks for permission", "I allow it", "the map opens", "I can see my position", "let me zoom in a little",
        "the street names are readable", "I tap on the cafe", "it shows the opening hours", "that is useful", "I save it as a favourite",
        "the favourites are in the second tab", "yes, there it is", "now I try the search", "I type coffee", "three results",
        "the first one is the closest", "I open the directions", "walking takes ten minutes", "okay, that is fine",
        "I go back to the home screen", "the battery is still full", "the sound is off", "I turn the phone to landscape", "the layout adapts nicely",
        "back to portrait", "I think I have seen everything", "the settings have a dark mode", "let me switch it on", "this is easier on the eyes",
        "I switch it off again", "I log out now", "it asks me to confirm", "yes, log out", "the login screen appears", "I type my password",
        "logged in again", "everything is still there", "that is reassuring", "the last task is to delete a draft", "I swipe left on the draft",
        "a red button appears", "I tap delete", "it is gone", "that was the last task", "thank you, that was interesting",
    ]

    /// The session as said: each exclamation line followed by a commentary line, then the rest of the
    /// commentary; every line with the exclamation phrase it contains, if any.
    static var session: [(text: String, phrase: String?)] {
        var said: [(String, String?)] = []
        var commentary = ordinary[...]
        for index in 0..<exclamations[0].lines.count {
            for (phrase, lines) in exclamations {
                said.append((lines[index], phrase))
                if let next = commentary.popFirst() { said.append((next, nil)) }
            }
        }
        return said + commentary.map { ($0, nil) }
    }
}
