// Every uncaught error and unhandled rejection of the page, for engines whose WebDriver gives no browser log
// (Firefox's geckodriver, WebKitGTK's WebKitWebDriver): Tests/Browser/engines.py reads them back.
globalThis.pageErrors = [];
addEventListener("error", (e) => pageErrors.push(`${e.message} (${e.filename}:${e.lineno})`));
addEventListener("unhandledrejection", (e) => pageErrors.push(`unhandled rejection: ${e.reason?.stack || e.reason}`));
