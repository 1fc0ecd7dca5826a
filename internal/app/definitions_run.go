package app

import (
	"errors"
	"log/slog"
	"os"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/engine/flow"
	"quarry/internal/webhook"
)

// withDefinitions adds to reg the workflows of cfg.WorkflowsDir's files
// that load and compile, so runs of them can start, and returns the new
// registry and each added file's content hash by workflow name (what
// GET /api/workflows calls can_start). A file that does not load or
// compile, or whose name a registered workflow already has, is logged and
// left out; /workflows shows why. Files are read once, at start: an edited
// file runs after a restart (its runs record the version and hash they
// started with; see the README).
func withDefinitions(cfg Config, reg *engine.Registry, logger *slog.Logger) (*engine.Registry, map[string]string, error) {
	added := map[string]string{}
	if cfg.WorkflowsDir == "" {
		return reg, added, nil
	}
	files, err := def.LoadFS(os.DirFS(cfg.WorkflowsDir), DefinitionOptions(cfg))
	if err != nil {
		logger.Warn("workflows directory", "dir", cfg.WorkflowsDir, "err", err)
	}
	wfs := reg.List()
	for _, f := range files {
		if f.Err != nil {
			logger.Warn("workflow definition does not load; it cannot start runs", "file", f.File, "err", f.Err)
			continue
		}
		name := f.Def.Metadata.Name
		if _, taken := reg.Get(name); taken == nil || added[name] != "" {
			logger.Warn("workflow definition names a workflow already registered; it cannot start runs", "file", f.File, "workflow", name)
			continue
		}
		wf, err := flow.CompileWith(f.Def, compileOptions(cfg))
		if err != nil {
			logger.Warn("workflow definition cannot run here", "file", f.File, "err", err)
			continue
		}
		wfs = append(wfs, wf)
		added[name] = f.Def.Hash
	}
	if len(added) == 0 {
		return reg, added, nil
	}
	next, err := engine.NewRegistry(wfs...)
	if err != nil {
		return nil, nil, errors.Join(errors.New("app: register the workflow files"), err)
	}
	return next, added, nil
}

// compileOptions is what a definition's stages may call in this program:
// the files registered at start and the stored texts of older runs
// (pinned) compile alike.
func compileOptions(cfg Config) flow.Options {
	caller := &webhook.Caller{Hosts: cfg.WebhookHosts, Secrets: cfg.WebhookSecrets}
	return flow.Options{Skills: flow.Skills{}, Webhook: caller.Stage, Secrets: cfg.WebhookSecrets}
}
