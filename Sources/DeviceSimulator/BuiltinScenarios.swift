internal import Foundation

/// The scenarios muevalsim plays without a file: the thesis's demo applications (seed 000, sections 4.3 and
/// 5.2) and seed 001's campus app. Each task's last step is a custom event the app sends when the task's goal is
/// reached (`PostPublished`, …): a study's success criterion, which a participant who fails the task never sends. They are written in the scenario file format, so that
/// `muevalsim --print-scenario NAME` gives a working starting point for one's own file.
public enum BuiltinScenarios {
    public static let names = ["wordpress", "plainnote", "campus"]

    public static func named(_ name: String) -> Scenario? {
        let source: String
        switch name {
        case "wordpress": source = wordpress
        case "plainnote": source = plainnote
        case "campus": source = campus
        default: return nil
        }
        // A built-in that does not load is a bug in this file, caught by the tests.
        return try! ScenarioLoader.decode(Data(source.utf8), source: "built-in \(name)")
    }

    /// Wordpress for iOS: a tester (Jack, Jill or Jane on an iPod touch) publishes a new blog posting. Its texts
    /// have font sizes; the tab bar and the buttons under the editor are set in 10 points, under the HIG's 11.
    static let wordpress = #"""
    {
      "name": "wordpress",
      "description": "Wordpress for iOS 2.6: a tester publishes a new posting to a weblog (thesis, section 2.4.1, demo scenario).",
      "app": { "id": "org.wordpress", "name": "WordPress", "version": "2.6.4" },
      "device": { "model": "iPod4,1", "systemVersion": "4.2.1", "width": 320, "height": 480, "scale": 2 },
      "initialView": "BlogsViewController",
      "views": [
        { "name": "BlogsViewController", "title": "Blogs", "elements": [
          { "id": "edit", "class": "UINavigationButton", "frame": [5, 27, 50, 30], "title": "Edit", "action": "edit:", "fontSize": 12 },
          { "id": "addBlog", "class": "UINavigationButton", "frame": [275, 27, 40, 30], "title": "+", "action": "addBlog:", "fontSize": 12 },
          { "id": "blogs", "class": "UITableView", "frame": [0, 64, 320, 416], "rows": ["Jack's Travel Notes", "Work Log"] }
        ]},
        { "name": "PostsViewController", "title": "Posts", "elements": [
          { "id": "back", "class": "UINavigationButton", "frame": [5, 27, 60, 30], "title": "Blogs", "action": "popViewControllerAnimated:", "fontSize": 12 },
          { "id": "compose", "class": "UINavigationButton", "frame": [265, 27, 50, 30], "title": "New", "action": "showAddPostView:", "fontSize": 12 },
          { "id": "posts", "class": "UITableView", "frame": [0, 64, 320, 372],
            "rows": ["Hello world!", "A weekend in the Alps", "Notes from the conference", "Draft: ideas", "Summer recipes",
                     "Why I blog", "Trip photos", "Reading list", "Year in review", "About me"] },
          { "id": "tabs", "class": "UITabBar", "frame": [0, 436, 320, 44], "title": "Posts  Pages  Comments  Stats", "fontSize": 10 }
        ]},
        { "name": "EditPostViewController", "title": "Write", "elements": [
          { "id": "cancel", "class": "UINavigationButton", "frame": [5, 27, 60, 30], "title": "Cancel", "action": "cancelView:", "fontSize": 12 },
          { "id": "publish", "class": "UINavigationButton", "frame": [245, 27, 70, 30], "title": "Publish", "action": "publish:", "fontSize": 12 },
          { "id": "titleLabel", "class": "UILabel", "frame": [10, 74, 60, 31], "text": "Title:", "fontSize": 15 },
          { "id": "titleField", "class": "UITextField", "frame": [75, 74, 235, 31], "placeholder": "Title", "fontSize": 15 },
          { "id": "tagsLabel", "class": "UILabel", "frame": [10, 113, 60, 31], "text": "Tags:", "fontSize": 15 },
          { "id": "tagsField", "class": "UITextField", "frame": [75, 113, 235, 31], "placeholder": "Separate tags with commas", "fontSize": 15 },
          { "id": "categories", "class": "UIButton", "frame": [10, 152, 300, 36], "title": "Categories", "action": "showCategoriesView:", "fontSize": 15 },
          { "id": "content", "class": "UITextView", "frame": [0, 196, 320, 240], "placeholder": "Tap here to begin writing", "fontSize": 15 },
          { "id": "status", "class": "UIButton", "frame": [10, 442, 140, 32], "title": "Status: Draft", "action": "showStatusPicker:", "fontSize": 10 },
          { "id": "photo", "class": "UIButton", "frame": [170, 442, 140, 32], "title": "Add Photo", "action": "showPhotoPicker:", "fontSize": 10 }
        ]},
        { "name": "CategoriesViewController", "title": "Categories", "elements": [
          { "id": "back", "class": "UINavigationButton", "frame": [5, 27, 60, 30], "title": "Write", "action": "popViewControllerAnimated:", "fontSize": 12 },
          { "id": "categories", "class": "UITableView", "frame": [0, 64, 320, 416], "rows": ["Uncategorized", "Travel", "Work", "Photography", "Food"] }
        ]}
      ],
      "tasks": [
        { "name": "Open the blog", "steps": [
          { "do": "say", "text": "okay, I am on the list of blogs now" },
          { "do": "tap", "on": "blogs", "row": 0, "push": "PostsViewController" },
          { "do": "say", "text": "let me look at the posts first" },
          { "do": "scroll", "on": "posts", "direction": "up", "distance": 180 },
          { "do": "scroll", "on": "posts", "direction": "down", "distance": 180 },
          { "do": "miss" },
          { "do": "say", "text": "oh no, what happened" },
          { "do": "custom", "name": "BlogOpened" }
        ]},
        { "name": "Edit blog posting", "steps": [
          { "do": "say", "text": "now I want to write a new post" },
          { "do": "tap", "on": "compose", "modal": "EditPostViewController" },
          { "do": "type", "on": "titleField", "text": "A weekend in the mountains" },
          { "do": "type", "on": "tagsField", "text": "travel, alps" },
          { "do": "tap", "on": "categories", "push": "CategoriesViewController" },
          { "do": "tap", "on": "categories", "row": 2 },
          { "do": "custom", "name": "User selects category “Work”" },
          { "do": "tap", "on": "back", "pop": true },
          { "do": "type", "on": "content", "text": "We left Munich early on Saturday and reached the hut before noon. The view was worth every step." },
          { "do": "background", "seconds": 12 },
          { "do": "rotate", "orientation": "landscapeLeft" },
          { "do": "rotate", "orientation": "portrait" },
          { "do": "tap", "on": "photo" },
          { "do": "exception", "name": "NSInvalidArgumentException", "text": "Source type 1 not available" },
          { "do": "say", "text": "why did the photo not open" },
          { "do": "tap", "on": "titleLabel" },
          { "do": "custom", "name": "PostDrafted" }
        ]},
        { "name": "Publish blog posting", "steps": [
          { "do": "say", "text": "where is the publish button" },
          { "do": "tap", "on": "publish", "dismiss": true },
          { "do": "swipe", "on": "posts", "direction": "left", "name": "showDeleteConfirmation" },
          { "do": "miss" },
          { "do": "say", "text": "I can't see my new post in the list" },
          { "do": "tap", "on": "back", "pop": true },
          { "do": "say", "text": "good, that is done" },
          { "do": "custom", "name": "PostPublished" }
        ]}
      ]
    }
    """#

    /// PlainNote: a tester writes a note, then finds an older one.
    static let plainnote = #"""
    {
      "name": "plainnote",
      "description": "PlainNote, the minimalist note-taking app of the thesis's prototype (section 5.2): a tester writes a note.",
      "app": { "id": "com.plainnote", "name": "PlainNote", "version": "1.3" },
      "initialView": "RootViewController",
      "views": [
        { "name": "RootViewController", "title": "Notes", "elements": [
          { "id": "edit", "class": "UINavigationButton", "frame": [5, 27, 50, 30], "title": "Edit", "action": "edit:" },
          { "id": "add", "class": "UINavigationButton", "frame": [275, 27, 40, 30], "title": "+", "action": "addNote:" },
          { "id": "notes", "class": "UITableView", "frame": [0, 64, 320, 416],
            "rows": ["Groceries", "Meeting notes", "Ideas for the weekend", "Books to read", "Passwords? No!"] }
        ]},
        { "name": "NoteViewController", "title": "Note", "elements": [
          { "id": "back", "class": "UINavigationButton", "frame": [5, 27, 60, 30], "title": "Notes", "action": "popViewControllerAnimated:" },
          { "id": "save", "class": "UINavigationButton", "frame": [255, 27, 60, 30], "title": "Save", "action": "saveNote:" },
          { "id": "text", "class": "UITextView", "frame": [0, 64, 320, 200], "placeholder": "Write your note" }
        ]}
      ],
      "tasks": [
        { "name": "Write a note", "steps": [
          { "do": "say", "text": "I will add a note for the office" },
          { "do": "tap", "on": "add", "push": "NoteViewController" },
          { "do": "type", "on": "text", "text": "Buy milk, bread and coffee for the office" },
          { "do": "miss" },
          { "do": "say", "text": "where is the save button" },
          { "do": "tap", "on": "save", "pop": true },
          { "do": "custom", "name": "NoteSaved" }
        ]},
        { "name": "Find a note", "steps": [
          { "do": "scroll", "on": "notes", "direction": "up", "distance": 120 },
          { "do": "tap", "on": "notes", "row": 1, "push": "NoteViewController" },
          { "do": "wait", "seconds": 4 },
          { "do": "tap", "on": "back", "pop": true },
          { "do": "swipe", "on": "notes", "direction": "right", "name": "showDeleteConfirmation" },
          { "do": "custom", "name": "NoteFound" }
        ]}
      ]
    }
    """#

    /// ZHAW Engineering CampusInfo (seed 001, section 6): timetable and cafeteria, with the gestures and
    /// buttons that change the day or the week.
    static let campus = #"""
    {
      "name": "campus",
      "description": "A campus app (seed 001, section 6): a student checks the timetable with swipes and buttons, then the cafeteria menu.",
      "app": { "id": "ch.zhaw.engineering.campusinfo", "name": "CampusInfo", "version": "3.1" },
      "device": { "model": "iPhone7,2", "systemVersion": "8.4", "width": 375, "height": 667, "scale": 2 },
      "location": [47.4979, 8.7291],
      "initialView": "MenuViewController",
      "views": [
        { "name": "MenuViewController", "title": "CampusInfo", "elements": [
          { "id": "timetable", "class": "UIButton", "frame": [20, 84, 160, 100], "title": "Stundenplan", "action": "showTimetable:" },
          { "id": "mensa", "class": "UIButton", "frame": [195, 84, 160, 100], "title": "Mensa", "action": "showMensa:" },
          { "id": "news", "class": "UIButton", "frame": [20, 199, 160, 100], "title": "News & Events", "action": "showNews:" },
          { "id": "settings", "class": "UIButton", "frame": [195, 199, 160, 100], "title": "Einstellungen", "action": "showSettings:" },
          { "id": "transport", "class": "UIButton", "frame": [20, 314, 160, 100], "title": "ÖV", "action": "showTransport:" },
          { "id": "locations", "class": "UIButton", "frame": [195, 314, 160, 100], "title": "Standorte", "action": "showLocations:" },
          { "id": "logo", "class": "UIImageView", "frame": [112, 480, 150, 80] }
        ]},
        { "name": "TimetableViewController", "title": "Stundenplan", "elements": [
          { "id": "back", "class": "UINavigationButton", "frame": [5, 27, 90, 30], "title": "CampusInfo", "action": "popViewControllerAnimated:" },
          { "id": "previousWeek", "class": "UIButton", "frame": [0, 64, 40, 44], "title": "<", "action": "previousWeek:" },
          { "id": "days", "class": "UISegmentedControl", "frame": [40, 64, 295, 44], "title": "Mo Di Mi Do Fr", "action": "selectDay:" },
          { "id": "nextWeek", "class": "UIButton", "frame": [335, 64, 40, 44], "title": ">", "action": "nextWeek:" },
          { "id": "lessons", "class": "UITableView", "frame": [0, 108, 375, 559],
            "rows": ["08:00 Analysis 2, TB 610", "08:50 Analysis 2, TB 610", "09:55 Programmieren 2, TE 418", "10:45 Programmieren 2, TE 418",
                     "11:35 Mittag", "12:25 Mittag", "13:10 Physik 2, TP 406", "14:00 Physik 2, TP 406", "15:00 Englisch, SM 01.22",
                     "15:50 Englisch, SM 01.22", "16:45 Projektarbeit, TH 567", "17:35 Projektarbeit, TH 567", "18:25 —", "19:15 —"] }
        ]},
        { "name": "MensaViewController", "title": "Mensa", "elements": [
          { "id": "back", "class": "UINavigationButton", "frame": [5, 27, 90, 30], "title": "CampusInfo", "action": "popViewControllerAnimated:" },
          { "id": "menu", "class": "UITableView", "frame": [0, 64, 375, 603],
            "rows": ["Menü 1: Kalbsbratwurst mit Rösti", "Menü 2: Gemüsecurry mit Reis", "Vegi: Spätzlipfanne", "Salatbuffet", "Öffnungszeiten 11:00–14:00"] }
        ]}
      ],
      "tasks": [
        { "name": "Check today's lectures", "steps": [
          { "do": "tap", "on": "timetable", "push": "TimetableViewController" },
          { "do": "scroll", "on": "lessons", "direction": "up", "distance": 250 },
          { "do": "scroll", "on": "lessons", "direction": "down", "distance": 250 },
          { "do": "swipe", "on": "lessons", "direction": "left", "name": "nextDay" },
          { "do": "swipe", "on": "lessons", "direction": "right", "name": "previousDay" },
          { "do": "tap", "on": "days" },
          { "do": "swipe", "on": "days", "direction": "left", "name": "nextWeek" },
          { "do": "tap", "on": "previousWeek" },
          { "do": "tap", "on": "nextWeek" },
          { "do": "background", "seconds": 40 },
          { "do": "tap", "on": "back", "pop": true },
          { "do": "custom", "name": "TimetableChecked" }
        ]},
        { "name": "Look up the cafeteria menu", "steps": [
          { "do": "tap", "on": "mensa", "push": "MensaViewController" },
          { "do": "scroll", "on": "menu", "direction": "up", "distance": 150 },
          { "do": "miss" },
          { "do": "tap", "on": "back", "pop": true },
          { "do": "miss" },
          { "do": "custom", "name": "MenuChecked" }
        ]}
      ]
    }
    """#
}
