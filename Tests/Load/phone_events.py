"""The touch events a web phone sends, as capture.js writes them (CaptureLibrary/Web/capture/sources/fingers.js's
`record`, recorder.js's head and spool.js's `messageXML`): class and timestamp, then the seq, then the fields, in that
order, whole numbers as <integer> and others as <real> (plist.js's encodeValue). A tap is a began and an ended of one
finger on one button, so that a session's report finds taps on elements, as it would from a real page."""

VIEWS = ["NoteList", "NoteEditor", "Search"]

# One template filled with %: 500 phones make 10,000 events a second in one Python process, and its CPU is measured
# beside muevald's (a formatted string per field cost three times as much).
TOUCH = ("<event><key>class</key><string>UserInputEvent</string><key>timestamp</key><real>%.3f</real>"
         "<key>seq</key><integer>%d</integer><key>type</key><string>touch</string><key>phase</key><string>%s</string>"
         "<key>x</key><integer>%d</integer><key>y</key><integer>%d</integer><key>tapCount</key><integer>1</integer>"
         "<key>view</key><string>%s</string><key>target</key><dict><key>className</key><string>UIButton</string>"
         "<key>tag</key><string>button</string><key>id</key><string>note-%d</string><key>title</key><string>Note %d</string>"
         "<key>frame</key><dict><key>height</key><integer>44</integer><key>width</key><integer>112</integer>"
         "<key>x</key><integer>%d</integer><key>y</key><integer>%d</integer></dict></dict>"
         "<key>identifier</key><integer>%d</integer><key>pointerType</key><string>touch</string>"
         "<key>force</key><integer>1</integer><key>radiusX</key><real>11.5</real><key>radiusY</key><real>11.5</real>"
         "<key>touches</key><integer>%d</integer></event>\n")


def touch(seq, wall):
    """The `seq`-th event of a phone at `wall` (seconds since 1970): odd seqs put a finger down, even ones lift it."""
    began = seq % 2
    tap = (seq - 1) // 2
    button = tap % 12
    left, top = 16 + button % 3 * 128, 120 + button // 3 * 96
    return TOUCH % (wall, seq, "began" if began else "ended", left + (tap * 37) % 112, top + (tap * 53) % 44,
                    VIEWS[tap // 40 % 3], button, button, left, top, tap % 10, began)
