package app

import (
	"slices"

	"quarry/internal/engine/def"
)

// DefinitionOptions is what checking a workflow definition file needs from
// this program: the names of the skills it registers and the hosts webhook
// stages may call. The CLI (`quarry workflow validate`) and the /workflows
// page both take it from here, so they judge a file alike.
//
// No skill handler is registered by name yet, so a file with a skill or
// action stage is reported as naming an unregistered skill, which is true
// of this binary; fill Skills here when the registry exists.
func DefinitionOptions(c Config) def.Options {
	return def.Options{WebhookHosts: slices.Clone(c.WebhookHosts)}
}
