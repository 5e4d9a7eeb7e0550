internal import Foundation

/// What the browser tests need: Debian's Chromium, its driver and Debian's python3 with selenium
/// (`make test` installs them).
public enum BrowserRequirement {
    /// Debian's python3, where python3-selenium is installed.
    public static let python = "/usr/bin/python3"

    /// Why a browser test cannot run here (for its loud skip), or nil when it can.
    public static func missing() throws -> String? {
        for (path, package) in [("/usr/bin/chromium", "chromium"), ("/usr/bin/chromedriver", "chromium-driver"), (python, "python3")]
        where !FileManager.default.isExecutableFile(atPath: path) {
            return "BROWSER TEST NOT RUN: \(path) is missing (apt-get install \(package); `make test` does)"
        }
        let selenium = try runProcess(python, ["-c", "import selenium"])
        if selenium.status != 0 {
            return "BROWSER TEST NOT RUN: \(python) cannot import selenium (apt-get install python3-selenium): \(selenium.stderr)"
        }
        return nil
    }
}
