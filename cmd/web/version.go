package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// version is the release version, stamped by the release build with
// -ldflags "-X main.version=v1.2.3"; empty in other builds, which report
// the module version Go recorded instead.
var version = ""

// versionCmd implements `quarry version`: the version, the VCS revision the
// binary was built from, and the Go release that built it.
func (c *cli) versionCmd(_ context.Context, args []string) error {
	fs := newFlagSet("version", "quarry version",
		"Prints the version, the revision it was built from (with its time, and\n\"modified\" when the working tree had uncommitted changes) and the Go release.")
	rest, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fs.misuse("unexpected arguments %q", rest)
	}
	bi, _ := debug.ReadBuildInfo()
	_, err = io.WriteString(c.stdout, versionText(version, bi))
	return err
}

// releaseVersion is what the build calls itself: the stamped version, else
// the module version Go recorded (a tag, a pseudo-version or "(devel)").
func releaseVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// versionText describes a build: the stamped version if there is one, else
// the module's (a tagged or pseudo-version, or "(devel)"), then the
// revision and the toolchain from bi, which may be nil (no build
// information).
func versionText(stamped string, bi *debug.BuildInfo) string {
	v, goVersion := stamped, "unknown"
	settings := map[string]string{}
	if bi != nil {
		if v == "" {
			v = bi.Main.Version
		}
		goVersion = bi.GoVersion
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
	}
	if v == "" {
		v = "(devel)"
	}
	rev := "revision unknown (built without version control information)"
	if r := settings["vcs.revision"]; r != "" {
		var about []string
		if t := settings["vcs.time"]; t != "" {
			about = append(about, t)
		}
		if settings["vcs.modified"] == "true" {
			about = append(about, "modified")
		}
		rev = "revision " + r
		if len(about) > 0 {
			rev += " (" + strings.Join(about, ", ") + ")"
		}
	}
	return fmt.Sprintf("quarry %s\n%s\nbuilt with %s\n", v, rev, goVersion)
}
