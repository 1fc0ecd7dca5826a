package app

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"slices"

	"quarry/internal/actions"
	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/engine/flow"
	"quarry/internal/notify"
	"quarry/internal/skills/pipeline"
	"quarry/internal/store"
	"quarry/internal/templates"
	"quarry/internal/webhook"
)

// builtinTemplates loads the embedded workflow templates
// (internal/templates), which every server registers; one that does not
// load is a bug of this binary, so it is an error.
func builtinTemplates(cfg Config) ([]*def.Definition, error) {
	files, err := def.LoadFS(templates.FS(), DefinitionOptions(cfg))
	if err != nil {
		return nil, err
	}
	out := make([]*def.Definition, 0, len(files))
	for _, f := range files {
		if f.Err != nil {
			return nil, errors.Join(errors.New("app: a built-in workflow template does not load"), f.Err)
		}
		out = append(out, f.Def)
	}
	return out, nil
}

// withTemplates adds the built-in templates to reg, their skills from
// skills, and returns the new registry and the templates it holds: they
// are always present, listed and started like the Go workflows. A
// template whose name a workflow already has is left out.
func withTemplates(reg *engine.Registry, tpls []*def.Definition, skills flow.Skills, logger *slog.Logger) (*engine.Registry, []*def.Definition, error) {
	wfs := reg.List()
	var added []*def.Definition
	for _, d := range tpls {
		if _, taken := reg.Get(d.Metadata.Name); taken == nil {
			logger.Warn("a registered workflow has a built-in template's name; the template is left out", "workflow", d.Metadata.Name)
			continue
		}
		wf, err := flow.CompileWith(d, flow.Options{Skills: skills, Scope: pipeline.SkillScope, Gather: pipeline.GatherBranches})
		if err != nil {
			return nil, nil, errors.Join(errors.New("app: compile a built-in workflow template"), err)
		}
		wfs = append(wfs, wf)
		added = append(added, d)
	}
	next, err := engine.NewRegistry(wfs...)
	if err != nil {
		return nil, nil, errors.Join(errors.New("app: register the built-in workflow templates"), err)
	}
	return next, added, nil
}

// withDefinitions adds to reg the workflows of cfg.WorkflowsDir's files
// that load and compile (their skills from skills), so runs of them can
// start, and returns the new
// registry and each added file's content hash by workflow name (what
// GET /api/workflows calls can_start). A file that does not load or
// compile, or whose name a registered workflow already has, is logged and
// left out; /workflows shows why. Files are read once, at start: an edited
// file runs after a restart (its runs record the version and hash they
// started with; see the README).
func withDefinitions(cfg Config, reg *engine.Registry, skills flow.Skills, acts flow.Actions, logger *slog.Logger) (*engine.Registry, map[string]string, error) {
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
		wf, err := flow.CompileWith(f.Def, compileOptions(cfg, skills, acts))
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
// (pinned) compile alike. Their skill stages run in the search's
// SkillScope, so the language-model calls of the search's skills count in
// the run's usage and budget as they do in a search run.
func compileOptions(cfg Config, skills flow.Skills, acts flow.Actions) flow.Options {
	caller := &webhook.Caller{Hosts: cfg.WebhookHosts, Secrets: cfg.WebhookSecrets}
	sender := &notify.Sender{Hosts: slices.Clone(cfg.WebhookHosts), SMTP: cfg.SMTP}
	return flow.Options{Skills: skills, Scope: pipeline.SkillScope, Gather: pipeline.GatherBranches, Webhook: caller.Stage, Secrets: cfg.WebhookSecrets, Actions: acts,
		Notifier: actions.GateNotifier{Send: sender.Send, PublicURL: cfg.PublicURL}}
}

// actionRunner carries out workflows' export, notify and snapshot
// actions with this configuration, recording each attempt in st.
func actionRunner(cfg Config, st *store.Store) *actions.Runner {
	sender := &notify.Sender{Hosts: slices.Clone(cfg.WebhookHosts), SMTP: cfg.SMTP}
	return &actions.Runner{
		ExportDir: cfg.ExportDir,
		Send:      sender.Send,
		Backup: func(ctx context.Context, runID string) (string, int64, error) {
			b, err := st.Backup(ctx, store.BackupRun, runID)
			return b.Path, b.Size, err
		},
		Keep: st.RecordAction,
	}
}
