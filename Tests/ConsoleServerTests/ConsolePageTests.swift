@testable import ConsoleServer
import Foundation
import NIOCore
import Testing

/// Every page is its body in the one frame, composed at start-up, with the event class names of the
/// one Swift vocabulary.
@Suite struct ConsolePageTests {
    private static let resources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/ConsoleServer/Resources")

    private func page(_ assets: ConsoleAssets, _ file: String) throws -> String {
        let asset = try #require(assets[file])
        return String(buffer: asset.bytes)
    }

    @Test func everyPageHasTheFrameItsScriptAndItsPlaceInTheNavigation() throws {
        let assets = try ConsoleAssets(directory: Self.resources)
        for (_, page) in ConsolePage.routed {
            let html = try self.page(assets, page.file)
            #expect(html.hasPrefix("<!doctype html>\n<html lang=\"en\">\n<head>\n"), "\(page.file)")
            #expect(html.contains("<title>\(page.title) · Mobile Monitor</title>"), "\(page.file)")
            #expect(html.contains(#"<script type="module" src="/assets/\#(page.script ?? "")"></script>"#), "\(page.file)")
            #expect(html.components(separatedBy: #"<nav class="topnav">"#).count == 2, "one navigation: \(page.file)")
            #expect(html.components(separatedBy: #" class="current""#).count == (page.section == nil ? 1 : 2), "\(page.file)")
            if let section = page.section {
                #expect(html.contains(#"id="nav-\#(section.rawValue)" class="current""#), "\(page.file)")
            }
            #expect(!html.contains("{{"), "a placeholder left in \(page.file)")
            #expect(html.hasSuffix("</main>\n</body>\n</html>\n"), "\(page.file)")
        }
        let login = try page(assets, ConsolePage.login.file)
        #expect(!login.contains("<nav"), "the login page has no navigation")
        #expect(!login.contains("<script"), "nor a script")
    }

    @Test func pagesAndScriptsTakeTheClassNamesFromTheVocabulary() throws {
        let assets = try ConsoleAssets(directory: Self.resources)
        #expect(try page(assets, "sessions.html").contains(#"<input type="checkbox" value="UserInterfaceEvent">"#))
        let module = try page(assets, ConsoleVocabulary.moduleName)
        #expect(module.contains(#""userInput":"UserInputEvent""#))
        #expect(module.contains(#""observerNote":"ObserverNote""#))
        #expect(assets[ConsoleVocabulary.moduleName]?.contentType == "text/javascript; charset=utf-8")
        // No script spells a class name itself.
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.resources.path) where name.hasSuffix(".js") {
            let script = try String(contentsOf: Self.resources.appendingPathComponent(name), encoding: .utf8)
            for value in ConsoleVocabulary.classes.values {
                #expect(!script.contains("\"\(value)\""), "\(name) spells \(value)")
            }
        }
    }

    @Test func aPlaceholderTheFrameDoesNotKnowStopsTheStart() throws {
        let frame = ConsoleFrame(frame: "<title>{{title}}</title>{{script}}<body{{body-class}}>{{navigation}}{{main}}{{unknown}}</body>",
                                 navigation: "")
        #expect(throws: ConsoleError.self) { try frame.compose(ConsolePage.login, body: "<main></main>") }
        let body = ConsoleFrame(frame: "{{title}}{{script}}{{body-class}}{{navigation}}{{main}}", navigation: "")
        #expect(throws: ConsoleError.self) { try body.compose(ConsolePage.login, body: "{{class:noSuchClass}}") }
        #expect(try body.compose(ConsolePage.login, body: "{{class:custom}}") == "Log inCustomEvent")
    }
}
