// Package pipeline defines the literature-search workflow as engine data:
// parse the question, build a strategy, let the researcher confirm it,
// search the sources, deduplicate, score, organise, let the researcher
// review, and iterate with their feedback until they approve or the loop
// bound is reached. The skills do the work; the workflow's shape is the
// embedded definition file search.yaml (docs/workflows.md), which this
// package compiles with its steps and the two gates registered by name,
// so the engine can make every step durable.
package pipeline

import (
	"cmp"
	"context"
	_ "embed" // search.yaml
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"quarry/internal/engine"
	"quarry/internal/engine/def"
	"quarry/internal/engine/flow"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills"
	"quarry/internal/skills/searcher"
	"quarry/internal/skills/sources"
)

// DefaultMaxIterations is how many search iterations a run may take when
// neither the options nor the run say otherwise: enough to refine a search
// a few times, few enough that a forgotten run stops on its own.
const DefaultMaxIterations = 5

// MaxIterationsLimit caps the max_iterations run parameter, so one run cannot
// hammer the sources' APIs indefinitely.
const MaxIterationsLimit = 20

// Skills are the six skills a search run uses. The pipeline sees only these
// interfaces, so offline, LLM-backed and test skills are interchangeable.
type Skills struct {
	Intent  skills.IntentParser
	Queries skills.QueryBuilder
	// Searcher runs strategies; it must list its sources with a
	// Names() []string method (as *searcher.Searcher does), because the
	// run's sources parameter offers exactly those. Leave it nil and set
	// Sources instead to get per-source progress on the run page.
	Searcher skills.Searcher
	// Sources, used when Searcher is nil, are searched by a
	// searcher.Searcher built for each search step with an OnEvent
	// callback that streams per-source progress to the run's watchers.
	Sources []sources.Source
	// SearchOptions tune that per-step searcher (OnEvent is set by the step).
	SearchOptions searcher.Options
	Dedup         skills.Deduplicator
	Scorer        skills.Scorer
	Organizer     skills.Organizer
	// Clarifier proposes clarifying questions for an ambiguous question
	// (nil: runs never ask them, whatever their clarify parameter says).
	Clarifier skills.Clarifier
	// Files reads the records of files attached to a run (nil: runs
	// cannot use attached files, and a strategy naming one reports it as
	// that file's error).
	Files FileSource
}

// FileSource reads the papers of a file attached to a run; *store.Store
// implements it. It takes the run's ID so a strategy cannot read another
// run's file.
type FileSource interface {
	RunFilePapers(ctx context.Context, runID, fileID string) ([]research.RawPaper, error)
}

// Options tune the workflow's defaults; runs may override them with params.
type Options struct {
	// MaxIterations is the default of the max_iterations parameter (0 means
	// DefaultMaxIterations).
	MaxIterations int
	// EnableStrategyCheckpoint is the default of the strategy_checkpoint
	// parameter; nil means true, because a researcher should see what will
	// be searched before the sources are asked.
	EnableStrategyCheckpoint *bool
	// MaxResultsPerSource is what the query builder is asked for (0 means
	// the builder's default).
	MaxResultsPerSource int
	// Now tells the search step the time it asks the sources, which the
	// search-strategy report states per iteration; nil means time.Now.
	// Tests set it so recorded times are deterministic.
	Now func() time.Time
}

// namer is what a Searcher must also do so the run can offer its sources.
type namer interface{ Names() []string }

// pipe holds what the step handlers share; it is immutable once built.
type pipe struct {
	sk      Skills
	opts    Options
	sources []string
}

// New validates the skills and options and returns the search workflow. The
// returned workflow has passed engine validation, so it can be registered.
func New(sk Skills, opts Options) (*engine.Workflow, error) {
	p, err := newPipe(sk, opts)
	if err != nil {
		return nil, err
	}
	wf, err := p.workflow()
	if err != nil {
		return nil, err
	}
	if err := wf.Validate(); err != nil {
		return nil, err
	}
	return wf, nil
}

func newPipe(sk Skills, opts Options) (*pipe, error) {
	fe := fault.FieldErrors{}
	if sk.Intent == nil {
		fe.Add("intent", "an intent parser is required")
	}
	if sk.Queries == nil {
		fe.Add("queries", "a query builder is required")
	}
	if sk.Dedup == nil {
		fe.Add("dedup", "a deduplicator is required")
	}
	if sk.Scorer == nil {
		fe.Add("scorer", "a scorer is required")
	}
	if sk.Organizer == nil {
		fe.Add("organizer", "an organizer is required")
	}
	var names []string
	switch {
	case sk.Searcher != nil:
		n, ok := sk.Searcher.(namer)
		if !ok {
			fe.Add("searcher", fmt.Sprintf("searcher %T does not list its sources (no Names method)", sk.Searcher))
		} else {
			names = n.Names()
		}
	default:
		s, err := searcher.New(sk.Sources, sk.SearchOptions)
		if err != nil {
			fe.Add("sources", fault.ErrorMessage(err))
		} else {
			names = s.Names()
		}
	}
	if len(names) == 0 {
		fe.Add("sources", "at least one source is required")
	}
	if opts.MaxIterations == 0 {
		opts.MaxIterations = DefaultMaxIterations
	}
	if opts.MaxIterations < 1 || opts.MaxIterations > MaxIterationsLimit {
		fe.Add("max_iterations", fmt.Sprintf("must be between 1 and %d", MaxIterationsLimit))
	}
	if opts.MaxResultsPerSource < 0 || opts.MaxResultsPerSource > research.MaxResultsLimit {
		fe.Add("max_results_per_source", fmt.Sprintf("must be between 0 and %d", research.MaxResultsLimit))
	}
	if err := fe.Err("cannot build the search workflow"); err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &pipe{sk: sk, opts: opts, sources: names}, nil
}

func (p *pipe) strategyCheckpointDefault() bool {
	return p.opts.EnableStrategyCheckpoint == nil || *p.opts.EnableStrategyCheckpoint
}

// File is the search workflow's definition file, embedded: the stages,
// their order and transitions, the gates and the params are there; this
// package registers the steps and gates it names (natives, forms) and
// sets on the compiled workflow what depends on the configuration.
const File = "search.yaml"

//go:embed search.yaml
var searchFile []byte

// The names the file calls: its native steps are pipeline.<step id>, its
// gates' forms these two.
const (
	nativePrefix = "pipeline."
	FormStrategy = "strategy"
	FormReview   = "review"
	FormClarify  = "clarify"
)

// Definition loads the embedded search workflow file (with the names
// this package registers, see DefOptions).
func Definition() (*def.Definition, error) {
	return def.Load(File, searchFile, DefOptions(def.Options{}))
}

// DefOptions adds the native steps and forms this package registers to
// o, so a definition naming them validates.
func DefOptions(o def.Options) def.Options {
	var p pipe
	o.Skills = append(slices.Clone(o.Skills), p.natives().Names()...)
	forms := maps.Clone(o.Forms)
	if forms == nil {
		forms = map[string][]string{}
	}
	maps.Copy(forms, p.forms().Outcomes())
	o.Forms = forms
	return o
}

// natives are the search's steps by the names the file gives them.
func (p *pipe) natives() flow.Natives {
	return flow.Natives{
		nativePrefix + StepParse:    noted(p.parse),
		nativePrefix + StepBuild:    noted(p.build),
		nativePrefix + StepSearch:   noted(p.search),
		nativePrefix + StepDedup:    noted(p.dedup),
		nativePrefix + StepScore:    noted(p.score),
		nativePrefix + StepOrganize: noted(p.organize),
		nativePrefix + StepMore:     noted(p.more),
		nativePrefix + StepFinalize: p.finalize,
	}
}

// forms are the two checkpoints: approve goes on, iterate rebuilds the
// strategy (counting an iteration), more shows the next page.
func (p *pipe) forms() flow.Forms {
	return flow.Forms{
		FormStrategy: {Gate: p.strategyGate(), Outcomes: map[string]engine.Outcome{"approve": engine.OK, "iterate": engine.Iterate}},
		FormReview:   {Gate: p.reviewGate(), Outcomes: map[string]engine.Outcome{"approve": engine.OK, "iterate": engine.Iterate, "more": engine.More}},
		FormClarify:  {Gate: p.clarifyGate(), Outcomes: map[string]engine.Outcome{"approve": engine.OK}},
	}
}

// workflow compiles the search workflow file and sets what the
// configuration decides: the sources a run may choose (all by default),
// whether the strategy is confirmed, and the iteration bound.
func (p *pipe) workflow() (*engine.Workflow, error) {
	d, err := Definition()
	if err != nil {
		return nil, err
	}
	wf, err := flow.CompileWith(d, flow.Options{Natives: p.natives(), Forms: p.forms(), ReadBacks: readBacks()})
	if err != nil {
		return nil, err
	}
	wf.MaxIterations = p.opts.MaxIterations
	set := map[string]func(*engine.Param){
		ParamSources: func(q *engine.Param) {
			q.Choices, q.Default = slices.Clone(p.sources), slices.Clone(p.sources)
		},
		ParamStrategyCheckpoint: func(q *engine.Param) { q.Default = p.strategyCheckpointDefault() },
		ParamMaxIterations:      func(q *engine.Param) { q.Default = p.opts.MaxIterations },
	}
	for i := range wf.Steps {
		for j := range wf.Steps[i].Params {
			q := &wf.Steps[i].Params[j]
			if f, ok := set[q.Name]; ok {
				f(q)
				delete(set, q.Name)
			}
		}
	}
	if len(set) > 0 {
		return nil, fault.Errorf(fault.EInternal, "%s does not declare the parameters %v", File, slices.Sorted(maps.Keys(set)))
	}
	return wf, nil
}

// notebook collects the notes skills add during one step, so the step can
// keep them in the run's state next to its output, and meters the step's
// LLM calls on top of what the run spent before. Pipeline steps get one
// from noted; skill stages of workflow files from SkillScope.
type notebook struct {
	mu    sync.Mutex
	notes []research.Note
	meter *research.LLMMeter
	start research.LLMUsage
}

func (n *notebook) add(note research.Note) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.notes = append(n.notes, note)
}

// withNotes attaches a note recorder and the run's LLM meter to ctx for
// the step's skills. The meter starts from the usage in the run's state,
// so a run's token budget holds across steps and restarts, and publishes
// each call as progress (the run page's live log, the metrics).
func withNotes(ctx context.Context, sc engine.StepContext) (context.Context, *notebook) {
	nb := &notebook{}
	// A usage that cannot be decoded starts from zero rather than failing
	// the step: it is a count, not the run's results.
	nb.start, _, _ = engine.Get[research.LLMUsage](sc.State, keyLLMUsage)
	nb.meter = research.NewLLMMeter(nb.start, func(c research.LLMCall) {
		sc.Progress(fmt.Sprintf("%s answered: %d tokens in, %d out, %s", c.Model, c.TokensIn, c.TokensOut, c.Latency.Round(time.Millisecond)), c)
	})
	return research.WithLLMMeter(research.WithNotes(ctx, nb.add), nb.meter), nb
}

// done adds to u the run's LLM usage when the step changed it and, when
// the step succeeded (failed nil), its notes after those already in the
// run's state. A failed step's notes are left out: its retry notes again,
// and nothing else it did is kept; its usage is what it spent, which the
// budget must count whatever happens next.
func (n *notebook) done(sc engine.StepContext, u engine.Update, failed error) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.meter != nil {
		if usage := n.meter.Usage(); usage != n.start {
			if err := u.Set(keyLLMUsage, usage); err != nil {
				return err
			}
		}
	}
	if failed != nil || len(n.notes) == 0 {
		return nil
	}
	prev, _, err := engine.Get[[]research.Note](sc.State, keyNotes)
	if err != nil {
		return err
	}
	return u.Set(keyNotes, append(prev, n.notes...))
}

// noted runs a step with a notebook (withNotes) and keeps what it
// recorded: with the step's update when it succeeds, and when it fails
// the usage alone with the failed attempt (engine.KeepOnFailure), so the
// tokens a failed step spent still count against the run's budget.
func noted(step func(context.Context, engine.StepContext, *notebook) (engine.Outcome, engine.Update, error)) engine.Handler {
	return func(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, error) {
		ctx, nb := withNotes(ctx, sc)
		out, u, err := step(ctx, sc, nb)
		if err != nil {
			kept := engine.Update{}
			if nb.done(sc, kept, err) != nil {
				return out, u, err
			}
			return out, u, engine.KeepOnFailure(err, kept)
		}
		if u == nil {
			u = engine.Update{}
		}
		return out, u, nb.done(sc, u, nil)
	}
}

// SkillScope is the flow.Scope of workflow files' skill stages: their
// skills (the search's own, by name) run with the run's notes and LLM
// meter as the search's steps do, so their calls count in the run's
// usage, on its page, in the API and the metrics, and its token budget
// holds for them; their notes join the run's notes.
func SkillScope(ctx context.Context, sc engine.StepContext) (context.Context, flow.StageDone) {
	ctx, nb := withNotes(ctx, sc)
	return ctx, func(u engine.Update, failed error) error { return nb.done(sc, u, failed) }
}

// GatherBranches is the flow.Gather of workflow files' parallel stages:
// each branch's skill stages metered from the run's usage at the fan-out
// (SkillScope over the branch's state), so the run's usage after the join
// is that plus every branch's spend, and each branch's new notes join the
// run's. A branch that recorded nothing adds nothing.
func GatherBranches(run engine.State, branches []engine.State) (engine.Update, error) {
	base, _, err := engine.Get[research.LLMUsage](run, keyLLMUsage)
	if err != nil {
		return nil, err
	}
	notes, _, err := engine.Get[[]research.Note](run, keyNotes)
	if err != nil {
		return nil, err
	}
	total, had := base, len(notes)
	for _, b := range branches {
		if used, ok, err := engine.Get[research.LLMUsage](b, keyLLMUsage); err != nil {
			return nil, err
		} else if ok {
			total = total.Plus(used.Minus(base))
		}
		// A branch's notes are the run's followed by its own.
		if bn, ok, err := engine.Get[[]research.Note](b, keyNotes); err != nil {
			return nil, err
		} else if ok && len(bn) > had {
			notes = append(notes, bn[had:]...)
		}
	}
	u := engine.Update{}
	if total != base {
		if err := u.Set(keyLLMUsage, total); err != nil {
			return nil, err
		}
	}
	if len(notes) > had {
		if err := u.Set(keyNotes, notes); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// need decodes a state key a step cannot work without.
func need[T any](s engine.State, key string) (T, error) {
	v, ok, err := engine.Get[T](s, key)
	if err != nil {
		return v, err
	}
	if !ok {
		return v, fault.Errorf(fault.EInternal, "state has no %q (a previous step did not record it)", key)
	}
	return v, nil
}

// marks reads the loop's memory of the researcher's marks: the workflow
// state (relevant papers accumulate there) and the papers marked irrelevant.
func marks(s engine.State) (research.WorkflowState, []research.ScoredPaper, error) {
	wfs, _, err := engine.Get[research.WorkflowState](s, keyWorkflow)
	if err != nil {
		return wfs, nil, err
	}
	irrelevant, _, err := engine.Get[[]research.ScoredPaper](s, keyIrrelevant)
	return wfs, irrelevant, err
}

// set builds an Update from key/value pairs in order.
func set(kv ...any) (engine.Update, error) {
	u := engine.Update{}
	for i := 0; i+1 < len(kv); i += 2 {
		if err := u.Set(kv[i].(string), kv[i+1]); err != nil {
			return nil, err
		}
	}
	return u, nil
}

func (p *pipe) parse(ctx context.Context, sc engine.StepContext, nb *notebook) (engine.Outcome, engine.Update, error) {
	intent, err := p.sk.Intent.ParseIntent(ctx, sc.Params.String(ParamQuestion))
	if err != nil {
		return "", nil, fmt.Errorf("parse the question: %w", err)
	}
	if err := intent.Validate(); err != nil {
		return "", nil, fmt.Errorf("the intent parser returned an invalid intent: %w", err)
	}
	qs, err := p.clarifyingQuestions(ctx, sc, intent)
	if err != nil {
		return "", nil, err
	}
	u, err := set(keyIntent, intent, keyWorkflow, research.WorkflowState{CurrentIteration: sc.Iteration}, keyClarify, qs)
	return engine.OK, u, err
}

// queryInput gathers what the builder may learn from: earlier strategies,
// all feedback so far and the papers it named.
func (p *pipe) queryInput(sc engine.StepContext) (skills.QueryInput, research.WorkflowState, error) {
	intent, err := need[research.ParsedIntent](sc.State, keyIntent)
	if err != nil {
		return skills.QueryInput{}, research.WorkflowState{}, err
	}
	wfs, irrelevant, err := marks(sc.State)
	if err != nil {
		return skills.QueryInput{}, wfs, err
	}
	in := skills.QueryInput{
		Intent:              intent,
		Sources:             sc.Params.Strings(ParamSources),
		MaxResultsPerSource: p.opts.MaxResultsPerSource,
	}
	if len(in.Sources) == 0 {
		in.Sources = slices.Clone(p.sources)
	}
	var last *research.SearchStrategy
	for _, h := range wfs.History {
		in.Previous = append(in.Previous, h.Strategy)
		if h.Feedback != nil {
			in.Feedback = append(in.Feedback, *h.Feedback)
		}
		if h.Searched() {
			last = &h.Strategy
		}
	}
	if last != nil {
		carryForward(&in, *last)
	}
	in.Marked = append(slices.Clone(wfs.AccumulatedPapers), irrelevant...)
	// The last search's papers, marked or not, are the background against
	// which the builder tells which words of the marked ones are theirs.
	coll, _, err := engine.Get[research.PaperCollection](sc.State, keyCollection)
	if err != nil {
		return skills.QueryInput{}, wfs, err
	}
	for _, p := range coll.Papers {
		in.Collection = append(in.Collection, p.RawPaper)
	}
	if in.RemovedLearnedTerms, _, err = engine.Get[[]string](sc.State, keyRemovedLearned); err != nil {
		return skills.QueryInput{}, wfs, err
	}
	return in, wfs, nil
}

// carryForward makes the last searched strategy's settings the starting
// point of the next build: what the researcher chose at checkpoint 1
// (sources, years, result cap, filters added or removed) holds for the
// rest of the run instead of reverting to the question's and the run's
// defaults. Builders read these from the intent and the input, so they
// are set there; the intent stored in the run is not changed. Exclusions
// a builder learned from irrelevant papers are not carried: they are not
// the researcher's, and the next build learns them again from all marks
// so far, so one that a paper marked relevant since uses is dropped.
func carryForward(in *skills.QueryInput, last research.SearchStrategy) {
	in.Sources = slices.Clone(last.Sources)
	in.MaxResultsPerSource = last.MaxResultsPerSource
	in.Intent.YearRange = last.YearRange
	in.Intent.IncludeTerms = slices.Clone(last.Filters.IncludeTerms)
	in.Intent.ExcludeTerms = last.Filters.ResearcherExcludeTerms()
	in.FieldsOfStudy = slices.Clone(last.Filters.FieldsOfStudy)
	in.Intent.StudyTypes = slices.Clone(last.Filters.StudyTypes)
}

func (p *pipe) build(ctx context.Context, sc engine.StepContext, nb *notebook) (engine.Outcome, engine.Update, error) {
	in, wfs, err := p.queryInput(sc)
	if err != nil {
		return "", nil, err
	}
	strategy, err := p.sk.Queries.BuildStrategy(ctx, in)
	if err != nil {
		return "", nil, fmt.Errorf("build the strategy: %w", err)
	}
	if err := strategy.ValidateSources(p.sources); err != nil {
		return "", nil, fmt.Errorf("the query builder returned an invalid strategy: %w", err)
	}
	// Files attached at an earlier checkpoint stay attached: they are part
	// of what the researcher searches, like a source.
	prev, err := optional[research.SearchStrategy](sc.State, keyStrategy)
	if err != nil {
		return "", nil, err
	}
	if prev != nil && len(strategy.Files) == 0 {
		strategy.Files = prev.Files
	}
	wfs.CurrentIteration = sc.Iteration
	u, err := set(keyStrategy, strategy, keyWorkflow, wfs)
	return engine.OK, u, err
}

// searcher returns the searcher for one search step: the configured one,
// or a SourceSearcher whose events become the step's progress. A next
// page (more) is reported as what it added, not as a search's count.
func (p *pipe) searcher(sc engine.StepContext, more bool) (skills.Searcher, bool, error) {
	if p.sk.Searcher != nil {
		return p.sk.Searcher, false, nil
	}
	opts := p.sk.SearchOptions
	opts.OnEvent = func(ev searcher.Event) {
		msg := fmt.Sprintf("%s: %s", ev.Source, ev.Kind)
		switch {
		case ev.Kind == searcher.EventDone && more:
			msg = fmt.Sprintf("%s: next page, %d more", ev.Source, ev.Count)
		case ev.Kind == searcher.EventDone:
			msg = fmt.Sprintf("%s: %s", ev.Source, ev.Found()) // "25 shown of 49 found", never a silent cap
		case ev.Kind == searcher.EventError:
			msg = fmt.Sprintf("%s: %s", ev.Source, ev.Error)
		}
		if ev.Warning != "" { // e.g. PubMed left terms out: say so while it runs
			msg += " (warning: " + ev.Warning + ")"
		}
		sc.Progress(msg, ev)
	}
	s, err := searcher.New(p.sk.Sources, opts)
	return s, true, err
}

// inSelection narrows the local library's searches to the run's
// project's library selection when the run asks for it (ParamLibrary),
// and notes so for the report when the strategy searches the library.
func inSelection(ctx context.Context, sc engine.StepContext, strategy research.SearchStrategy, nb *notebook) context.Context {
	project := librarySelection(sc.Params, sc.Project)
	if project == "" {
		if sc.Params.String(ParamLibrary) == research.LibraryProject && nb != nil {
			nb.add(research.Note{Skill: "search", Message: "the run belongs to no project, so it has no library selection: the whole local library was searched"})
		}
		return ctx
	}
	if slices.Contains(strategy.Sources, research.SourceLocal) && nb != nil {
		nb.add(research.Note{Skill: "search", Message: "the local library was searched only within the project's library selection, not as a whole"})
	}
	return research.WithLibrarySelection(ctx, project)
}

func (p *pipe) search(ctx context.Context, sc engine.StepContext, nb *notebook) (engine.Outcome, engine.Update, error) {
	strategy, err := need[research.SearchStrategy](sc.State, keyStrategy)
	if err != nil {
		return "", nil, err
	}
	s, streams, err := p.searcher(sc, false)
	if err != nil {
		return "", nil, err
	}
	searchedAt := p.opts.Now().UTC()
	ctx = inSelection(ctx, sc, strategy, nb)
	res, err := s.Search(ctx, strategy)
	if err != nil {
		return "", nil, fmt.Errorf("search: %w", err)
	}
	if !streams { // report what the searcher could not stream as it went
		for _, name := range strategy.Sources {
			if r, ok := res.Sources[name]; ok {
				ev := searcher.Event{Source: name, Kind: searcher.EventDone, Count: r.Count, Error: r.Error}
				if r.Error != "" {
					ev.Kind = searcher.EventError
				}
				sc.Progress(fmt.Sprintf("%s: %s", name, r.Found()), ev)
			}
		}
	}
	// A source may return a record with no title; it cannot be shown or
	// referred to, so it is dropped here rather than failing the run.
	kept := res.Papers[:0:0]
	for _, paper := range res.Papers {
		if err := paper.Validate(); err != nil {
			nb.add(research.Note{Skill: "search", Message: fmt.Sprintf("dropped a record from %s: %s", paper.Source, fault.ErrorMessage(err))})
			continue
		}
		kept = append(kept, paper)
	}
	res.Papers = kept
	if res.Sources == nil {
		res.Sources = map[string]research.SourceResult{}
	}
	p.addFiles(ctx, sc, strategy, &res)
	u, err := set(keySearch, res, keySearchedAt, searchedAt)
	return engine.OK, u, err
}

// addFiles adds the records of the strategy's attached files to a search
// result, each file counted as a source of its own. A file that cannot be
// read is that file's error, as a failing source would be, not the run's.
func (p *pipe) addFiles(ctx context.Context, sc engine.StepContext, strategy research.SearchStrategy, res *skills.SearchResult) {
	for _, f := range strategy.Files {
		name := research.FileSourceName(f)
		if p.sk.Files == nil {
			res.Sources[name] = research.SourceResult{Error: "attached files are not available in this configuration"}
			continue
		}
		papers, err := p.sk.Files.RunFilePapers(ctx, sc.RunID, f.ID)
		if err != nil {
			res.Sources[name] = research.SourceResult{Error: fault.ErrorMessage(err)}
			sc.Progress(name+": "+fault.ErrorMessage(err), searcher.Event{Source: name, Kind: searcher.EventError, Error: fault.ErrorMessage(err)})
			continue
		}
		n := 0
		for i, paper := range papers {
			if paper.Validate() != nil {
				continue
			}
			paper.Source, paper.Rank = name, i+1
			res.Papers = append(res.Papers, paper)
			n++
		}
		res.Sources[name] = research.SourceResult{Count: n}
		sc.Progress(fmt.Sprintf("%s: %d papers", name, n), searcher.Event{Source: name, Kind: searcher.EventDone, Count: n})
	}
}

func (p *pipe) dedup(ctx context.Context, sc engine.StepContext, nb *notebook) (engine.Outcome, engine.Update, error) {
	res, err := need[skills.SearchResult](sc.State, keySearch)
	if err != nil {
		return "", nil, err
	}
	papers, stats, err := p.sk.Dedup.Dedup(ctx, res.Papers)
	if err != nil {
		return "", nil, fmt.Errorf("deduplicate: %w", err)
	}
	seen := make(map[string]bool, len(papers))
	for _, paper := range papers {
		if err := paper.Validate(); err != nil {
			return "", nil, fmt.Errorf("the deduplicator returned an invalid paper: %w", err)
		}
		if seen[paper.ID] {
			return "", nil, fault.Errorf(fault.EInternal, "the deduplicator returned paper %s twice", paper.ID)
		}
		seen[paper.ID] = true
	}
	if papers == nil {
		papers = []research.RawPaper{}
	}
	u, err := set(keyDeduped, papers, keyDedupStats, stats)
	return engine.OK, u, err
}

func (p *pipe) score(ctx context.Context, sc engine.StepContext, nb *notebook) (engine.Outcome, engine.Update, error) {
	intent, err := need[research.ParsedIntent](sc.State, keyIntent)
	if err != nil {
		return "", nil, err
	}
	papers, err := need[[]research.RawPaper](sc.State, keyDeduped)
	if err != nil {
		return "", nil, err
	}
	wfs, irrelevant, err := marks(sc.State)
	if err != nil {
		return "", nil, err
	}
	in := skills.ScoreInput{Intent: intent, Papers: papers, Relevant: raw(wfs.AccumulatedPapers), Irrelevant: raw(irrelevant)}
	scored, err := p.sk.Scorer.Score(ctx, in)
	if err != nil {
		return "", nil, fmt.Errorf("score: %w", err)
	}
	if len(scored) != len(papers) {
		return "", nil, fault.Errorf(fault.EInternal, "the scorer returned %d papers for %d", len(scored), len(papers))
	}
	for _, paper := range scored {
		if err := paper.Validate(); err != nil {
			return "", nil, fmt.Errorf("the scorer returned an invalid paper: %w", err)
		}
	}
	// Best first, ties in the order the sources ranked them.
	slices.SortStableFunc(scored, func(a, b research.ScoredPaper) int { return cmp.Compare(b.Score, a.Score) })
	if scored == nil {
		scored = []research.ScoredPaper{}
	}
	u, err := set(keyScored, scored)
	return engine.OK, u, err
}

func raw(ps []research.ScoredPaper) []research.RawPaper {
	out := make([]research.RawPaper, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.RawPaper)
	}
	return out
}

func (p *pipe) organize(ctx context.Context, sc engine.StepContext, nb *notebook) (engine.Outcome, engine.Update, error) {
	scored, err := need[[]research.ScoredPaper](sc.State, keyScored)
	if err != nil {
		return "", nil, err
	}
	res, err := need[skills.SearchResult](sc.State, keySearch)
	if err != nil {
		return "", nil, err
	}
	stats, _, err := engine.Get[research.DedupStats](sc.State, keyDedupStats)
	if err != nil {
		return "", nil, err
	}
	strategy, err := need[research.SearchStrategy](sc.State, keyStrategy)
	if err != nil {
		return "", nil, err
	}
	wfs, _, err := engine.Get[research.WorkflowState](sc.State, keyWorkflow)
	if err != nil {
		return "", nil, err
	}
	searchedAt, _, err := engine.Get[time.Time](sc.State, keySearchedAt)
	if err != nil {
		return "", nil, err
	}
	groups, err := p.sk.Organizer.Organize(ctx, scored)
	if err != nil {
		return "", nil, fmt.Errorf("organise: %w", err)
	}
	if groups == nil {
		groups = []research.Group{}
	}
	coll := research.PaperCollection{Papers: scored, Groups: groups, Sources: res.Sources, Dedup: stats}
	if err := coll.Validate(); err != nil {
		return "", nil, fmt.Errorf("the organised collection is invalid: %w", err)
	}
	wfs.CurrentIteration = sc.Iteration
	wfs.RecordIteration(strategy, len(coll.Papers), nil)
	last := &wfs.History[len(wfs.History)-1]
	last.SearchedAt, last.Sources, last.Dedup = searchedAt, res.Sources, stats
	u, err := set(keyCollection, coll, keyWorkflow, wfs)
	return engine.OK, u, err
}

func (p *pipe) finalize(ctx context.Context, sc engine.StepContext) (engine.Outcome, engine.Update, error) {
	coll, _, err := engine.Get[research.PaperCollection](sc.State, keyCollection)
	if err != nil {
		return "", nil, err
	}
	wfs, irrelevant, err := marks(sc.State)
	if err != nil {
		return "", nil, err
	}
	final := Finalize(withoutPapers(coll, irrelevant), wfs.AccumulatedPapers)
	if err := final.Validate(); err != nil {
		return "", nil, fmt.Errorf("the final collection is invalid: %w", err)
	}
	wfs.CurrentIteration = sc.Iteration
	wfs.IsComplete = true
	u, err := set(keyFinal, final, keyWorkflow, wfs)
	return engine.OK, u, err
}

// withoutPapers leaves papers out of a collection and its groups: the
// final collection is what the researcher keeps, so papers they marked
// irrelevant are not in it (the run's state still lists them apart).
func withoutPapers(c research.PaperCollection, drop []research.ScoredPaper) research.PaperCollection {
	if len(drop) == 0 {
		return c
	}
	ids := make(map[string]bool, len(drop))
	for _, p := range drop {
		ids[p.ID] = true
	}
	out := c
	out.Papers = slices.DeleteFunc(slices.Clone(c.Papers), func(p research.ScoredPaper) bool { return ids[p.ID] })
	out.Groups = nil
	for _, g := range c.Groups {
		g.PaperIDs = slices.DeleteFunc(slices.Clone(g.PaperIDs), func(id string) bool { return ids[id] })
		if len(g.PaperIDs) > 0 {
			out.Groups = append(out.Groups, g)
		}
	}
	return out
}

// AccumulatedGroup labels the papers marked relevant in earlier iterations
// that the last iteration did not find again, so the final collection keeps
// them visibly apart from the last search's themes.
const AccumulatedGroup = "Marked relevant in earlier iterations"

// Finalize merges the accumulated papers into the last iteration's
// collection (by ID: a paper found again keeps its latest score), so that
// nothing the researcher marked relevant is lost when the loop ends.
func Finalize(last research.PaperCollection, accumulated []research.ScoredPaper) research.PaperCollection {
	out := research.PaperCollection{
		Papers:  slices.Clone(last.Papers),
		Groups:  slices.Clone(last.Groups),
		Sources: last.Sources,
		Dedup:   last.Dedup,
	}
	have := make(map[string]bool, len(out.Papers))
	for _, p := range out.Papers {
		have[p.ID] = true
	}
	var extra []research.ScoredPaper
	for _, p := range accumulated {
		if !have[p.ID] {
			have[p.ID] = true
			out.Papers = append(out.Papers, p)
			extra = append(extra, p)
		}
	}
	if len(extra) > 0 {
		// Like every group, best score first (ties by ID, so the order is
		// stable), not in the order they were marked.
		slices.SortStableFunc(extra, func(a, b research.ScoredPaper) int {
			return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ID, b.ID))
		})
		ids := make([]string, len(extra))
		for i, p := range extra {
			ids[i] = p.ID
		}
		out.Groups = append(out.Groups, research.Group{Label: AccumulatedGroup, PaperIDs: ids})
	}
	if out.Papers == nil {
		out.Papers = []research.ScoredPaper{}
	}
	if out.Groups == nil {
		out.Groups = []research.Group{}
	}
	if out.Sources == nil {
		out.Sources = map[string]research.SourceResult{}
	}
	return out
}
