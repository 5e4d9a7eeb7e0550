"""The touch events a web phone sends, as capture.js writes them (CaptureLibrary/Web/capture/sources/fingers.js's
`record`, recorder.js's head and spool.js's `messageXML`): class and timestamp, then the seq, then the fields, in that
order, with whole numbers as <integer> and others as <real> (plist.js's encodeValue). A tap is a began and an ended
of one finger on one button, so that a session's report finds taps on elements, as it would from a real page."""

VIEWS = ["NoteList", "NoteEditor", "Search"]
SCREEN_WIDTH, SCREEN_HEIGHT = 412, 915


def _number(value):
    # As encodeValue: a whole number is an <integer>, written without a fraction (muevald refuses "1796175984.0").
    return f"<integer>{int(value)}</integer>" if float(value).is_integer() else f"<real>{value}</real>"


def touch(seq, wall):
    """The `seq`-th event of a phone at `wall` (seconds since 1970): odd seqs put a finger down, even ones lift it."""
    tap = seq // 2 if seq % 2 else seq // 2 - 1
    began = seq % 2 == 1
    button = tap % 12
    left, top = 16 + button % 3 * 128, 120 + button // 3 * 96
    x, y = left + (tap * 37) % 112 + 0.5, top + (tap * 53) % 44
    return (f"<event><key>class</key><string>UserInputEvent</string><key>timestamp</key>{_number(round(wall, 3))}"
            f"<key>seq</key><integer>{seq}</integer>"
            f"<key>type</key><string>touch</string><key>phase</key><string>{'began' if began else 'ended'}</string>"
            f"<key>x</key>{_number(x)}<key>y</key>{_number(y)}<key>tapCount</key><integer>1</integer>"
            f"<key>view</key><string>{VIEWS[tap // 40 % len(VIEWS)]}</string>"
            f"<key>target</key><dict><key>className</key><string>UIButton</string><key>tag</key><string>button</string>"
            f"<key>id</key><string>note-{button}</string><key>title</key><string>Note {button}</string>"
            f"<key>frame</key><dict><key>height</key><integer>44</integer><key>width</key><integer>112</integer>"
            f"<key>x</key><integer>{left}</integer><key>y</key><integer>{top}</integer></dict></dict>"
            f"<key>identifier</key><integer>{tap % 10}</integer><key>pointerType</key><string>touch</string>"
            f"<key>force</key><integer>1</integer><key>radiusX</key><real>11.5</real><key>radiusY</key><real>11.5</real>"
            f"<key>touches</key><integer>{1 if began else 0}</integer></event>\n")
