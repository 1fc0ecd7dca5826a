package app

import "quarry/internal/engine/def"

// DefinitionOptions is what checking a workflow definition file needs from
// this program: the names of the skills it registers and the hosts webhook
// stages may call. The CLI (`quarry workflow validate`) and the /workflows
// page both take it from here, so they judge a file alike.
//
// Neither list exists yet: no skill handler is registered by name and no
// setting names webhook hosts, so a file with a skill, action or webhook
// stage is reported as naming an unregistered skill or a host that is not
// allowed, which is true of this binary. Fill both here when they exist.
func DefinitionOptions(Config) def.Options { return def.Options{} }
