package app

import (
	"slices"

	"quarry/internal/biblio/codecs"
	"quarry/internal/engine/def"
	"quarry/internal/skills/named"
)

// DefinitionOptions is what checking a workflow definition file needs from
// this program: the names of the skills it registers (internal/skills/named)
// and the hosts webhook stages may call. The CLI (`quarry workflow
// validate`), the /workflows page and the server's registration all take
// it from here, so they judge a file alike.
func DefinitionOptions(c Config) def.Options {
	return def.Options{Skills: named.Names(), WebhookHosts: slices.Clone(c.WebhookHosts), ExportFormats: slices.Clone(codecs.ExportFormats)}
}
