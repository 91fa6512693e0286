// Package browser runs a real headless Chromium for tests: it loads a local
// file and returns the DOM as the browser left it, a screenshot or a PDF, so
// that the HTML report is judged by what a browser does with it rather than
// by what its source looks like.
//
// It owns the Chromium process and its profile: every run gets a fresh
// --user-data-dir in the test's temporary directory, its own process group,
// and a deadline after which the whole group is killed. It never opens
// anything but a file:// URL, must not be imported outside tests, and finds
// Chromium through testtools.Find, so a missing browser skips locally and
// fails in CI.
package browser
