// Package templates embeds the built-in workflow templates: definition
// files (docs/workflows.md) that every server registers at start, beside
// QUARRY_WORKFLOWS_DIR's files, so a researcher can start them from
// /workflows without writing one. They call the named search skills
// (internal/skills/named).
package templates

import (
	"embed"
	"io/fs"
)

//go:embed *.yaml
var files embed.FS

// FS is the templates' directory, for def.LoadFS.
func FS() fs.FS { return files }
