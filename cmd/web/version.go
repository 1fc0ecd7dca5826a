package main

// version is the release's version, stamped by `make release` with
// -ldflags "-X main.version=$(VERSION)" (git describe); empty in a
// development build.
var version = ""
