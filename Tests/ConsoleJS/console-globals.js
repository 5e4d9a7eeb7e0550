// What the console's common.js reads from its page when imported (the CSRF meta, the navigation): nothing here.
// Imported first by the tests of modules that import common.js (page-view.js, page-live.js). Not a test file.

globalThis.document ??= { querySelector: () => null, getElementById: () => null };
