// Package browser holds the console's real-browser test: headless
// Chromium, driven over the DevTools protocol (chromedp), uses the /ui
// console of a server running the embedded demo. It has no non-test code.
package browser
