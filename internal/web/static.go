package web

import "embed"

// staticFiles is the page and its assets. static/vendor/ (xterm.js, its
// stylesheet and the fit add-on) is copied in from npm at build time by
// scripts/web-assets.sh and is not committed; when it is absent the build
// still succeeds and the page says that the terminal is missing.
//
//go:embed static
var staticFiles embed.FS
