package app

import (
	"errors"
	"log/slog"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/dedup"
	"quarry/internal/skills/embed"
	"quarry/internal/skills/intent"
	"quarry/internal/skills/llm"
	"quarry/internal/skills/organize"
	"quarry/internal/skills/pipeline"
	"quarry/internal/skills/querybuilder"
	"quarry/internal/skills/relevance"
	"quarry/internal/skills/searcher"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/arxiv"
	"quarry/internal/skills/sources/crossref"
	"quarry/internal/skills/sources/local"
	"quarry/internal/skills/sources/openalex"
	"quarry/internal/skills/sources/pubmed"
	"quarry/internal/skills/sources/semanticscholar"
	"quarry/internal/skills/sources/serpapi"
	"quarry/internal/store"
)

// ErrNoSources is wrapped by NewSearch's error when the only enabled source
// is the local library and none was given, so a server without a library
// can start without the search workflow instead of refusing to start.
var ErrNoSources = errors.New("app: no source can be searched")

// onlineSource is a source that searches a remote API: its name, its
// public API root (the default of its QUARRY_<SOURCE>_URL) and how it is
// built from the search settings and its base URL.
type onlineSource struct {
	name    string
	baseURL string
	build   func(s Search, baseURL string) (sources.Source, error)
}

// onlineSources lists every remote source, in display order.
func onlineSources() []onlineSource {
	return []onlineSource{
		{research.SourceOpenAlex, openalex.DefaultBaseURL, func(s Search, u string) (sources.Source, error) {
			return openalex.New(openalex.Options{BaseURL: u, Contact: s.ContactEmail, APIKey: s.OpenAlexKey})
		}},
		{research.SourceSemanticScholar, semanticscholar.DefaultBaseURL, func(s Search, u string) (sources.Source, error) {
			return semanticscholar.New(semanticscholar.Options{BaseURL: u, Contact: s.ContactEmail, APIKey: s.SemanticScholarKey})
		}},
		{research.SourceArxiv, arxiv.DefaultBaseURL, func(s Search, u string) (sources.Source, error) {
			return arxiv.New(arxiv.Options{BaseURL: u, Contact: s.ContactEmail})
		}},
		{research.SourceCrossref, crossref.DefaultBaseURL, func(s Search, u string) (sources.Source, error) {
			return crossref.New(crossref.Options{BaseURL: u, Contact: s.ContactEmail})
		}},
		{research.SourcePubMed, pubmed.DefaultBaseURL, func(s Search, u string) (sources.Source, error) {
			return pubmed.New(pubmed.Options{BaseURL: u, Contact: s.ContactEmail, APIKey: s.PubMedKey})
		}},
		{research.SourceSerpAPIScholar, serpapi.DefaultBaseURL, func(s Search, u string) (sources.Source, error) {
			return serpapi.New(serpapi.Options{BaseURL: u, Contact: s.ContactEmail, APIKey: s.SerpAPIKey})
		}},
	}
}

// buildSources constructs the enabled sources; lib is the local library's
// source, and "local" is left out when it is nil.
func (s Search) buildSources(lib sources.Source) ([]sources.Source, error) {
	names, err := s.enabled()
	if err != nil {
		return nil, err
	}
	var out []sources.Source
	for _, n := range names {
		if n == research.SourceLocal {
			if lib != nil {
				out = append(out, lib)
			}
			continue
		}
		for _, o := range onlineSources() {
			if o.name != n {
				continue
			}
			src, err := o.build(s, s.BaseURLs[n])
			if err != nil {
				return nil, err
			}
			out = append(out, src)
		}
	}
	if len(out) == 0 {
		return nil, &fault.Error{Code: fault.EInvalid, Message: "no source can be searched", Err: ErrNoSources,
			Fields: map[string]string{"sources": "only the local library is enabled and it is not available; enable an online source with QUARRY_SOURCES"}}
	}
	return out, nil
}

// NewSearch builds the search workflow a deployment runs: the configured
// sources (lib searches the local library, nil when there is none; files
// reads files attached to runs, nil when runs cannot attach files), and
// the skills — LLM-backed where a provider is configured, each falling
// back to its offline heuristic (and noting it in the run) when the model
// fails; offline otherwise.
func NewSearch(s Search, lib sources.Source, files pipeline.FileSource) (*pipeline.SearchWorkflow, error) {
	srcs, err := s.buildSources(lib)
	if err != nil {
		return nil, err
	}
	provider, err := llm.New(s.LLM)
	if err != nil {
		return nil, err
	}
	vectors, err := embed.New(s.Embed)
	if err != nil {
		return nil, err
	}
	parser := intent.New(nil)
	sk := pipeline.Skills{
		Intent:    llm.NewIntentParser(provider, parser),
		Clarifier: llm.NewClarifier(provider, parser),
		Queries:   llm.NewQueryBuilder(provider, querybuilder.New()),
		Sources:   srcs,
		Dedup:     dedup.New(),
		Scorer:    embed.NewScorer(vectors, llm.NewScorer(provider, relevance.Scorer{})),
		Organizer: organize.Organizer{},
		Files:     files,
		// The search step builds its searcher from these (OnEvent aside).
		SearchOptions: searcher.Options{SourceDeadline: s.SourceDeadline},
	}
	confirm := s.StrategyCheckpoint == nil || *s.StrategyCheckpoint
	return pipeline.NewSearchWorkflow(sk, nil, 0, confirm)
}

// Workflows is the registry of what a server runs: the search workflow
// over the configured sources, the local library searching st and runs'
// attached files read from it. With no searchable source the server still
// starts, without search, and says so in the log.
func Workflows(s Search, st *store.Store, logger *slog.Logger) (*engine.Registry, error) {
	opts, err := localOptions(s, st)
	if err != nil {
		return nil, err
	}
	lib, err := local.New(st, opts...)
	if err != nil {
		return nil, err
	}
	var wfs []*engine.Workflow
	switch search, err := NewSearch(s, lib, st); {
	case err == nil:
		wfs = append(wfs, search.Workflow())
	case errors.Is(err, ErrNoSources):
		logger.Warn("search is disabled: no source can be searched; set QUARRY_SOURCES", "err", err)
	default:
		return nil, err
	}
	return engine.NewRegistry(wfs...)
}
