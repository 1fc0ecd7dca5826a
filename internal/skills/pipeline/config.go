package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/dedup"
	"quarry/internal/skills/intent"
	"quarry/internal/skills/llm"
	"quarry/internal/skills/organize"
	"quarry/internal/skills/querybuilder"
	"quarry/internal/skills/relevance"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/arxiv"
	"quarry/internal/skills/sources/crossref"
	"quarry/internal/skills/sources/openalex"
	"quarry/internal/skills/sources/pubmed"
	"quarry/internal/skills/sources/semanticscholar"
	"quarry/internal/skills/sources/serpapi"
)

// Config says which sources a deployment searches, how to reach them and
// which language model the skills use. It is read from a JSON file
// (QUARRY_CONFIG) and the environment, the environment winning key by key,
// so a container can override one key without a file.
type Config struct {
	// Sources are the enabled source names; empty means just "local", the
	// one source that needs no network or account.
	Sources []string `json:"sources,omitempty"`
	// ContactEmail is sent to APIs with polite pools (OpenAlex, Crossref,
	// PubMed), which serve identified clients faster and contact them
	// before blocking.
	ContactEmail       string `json:"contact_email,omitempty"`
	SemanticScholarKey string `json:"semantic_scholar_key,omitempty"`
	SerpAPIKey         string `json:"serpapi_key,omitempty"`
	OpenAlexKey        string `json:"openalex_key,omitempty"`
	PubMedKey          string `json:"pubmed_key,omitempty"`
	// BaseURLs override a source's API root by source name (tests point
	// them at httptest servers; mirrors and proxies use them too).
	BaseURLs map[string]string `json:"base_urls,omitempty"`
	// StrategyCheckpoint is the default of the strategy_checkpoint run
	// parameter (nil means true).
	StrategyCheckpoint *bool `json:"strategy_checkpoint,omitempty"`
	// Local is the local library's source (local.New(lib)); nil means the
	// local library is unavailable, and "local" is then left out.
	Local sources.Source `json:"-"`
	// Files reads files attached to runs (the store); nil means runs
	// cannot use attached files.
	Files FileSource `json:"-"`
	// LLM selects the model behind the intent parser, query builder and
	// scorer (offline heuristics by default). It is resolved from the
	// file's "llm" object (llm.FileConfig) and QUARRY_LLM_* by
	// llm.ConfigFrom, because the file's shape differs from the resolved
	// one (durations as text, absent keys); llm.Config never serialises
	// its API key.
	LLM llm.Config `json:"-"`
}

// fileConfig is the QUARRY_CONFIG file: Config's keys plus the raw "llm"
// object, which the embedded Config's LLM (tagged "-") cannot decode.
type fileConfig struct {
	Config
	LLM llm.FileConfig `json:"llm"`
}

// ErrNoSources is wrapped by FromConfig's error when the only enabled source
// is the local library and none was given, so a server without a library
// can start without the search workflow instead of refusing to start.
var ErrNoSources = errors.New("pipeline: no source can be searched")

// knownSources lists every source FromConfig can build, in display order.
func knownSources() []string {
	return []string{research.SourceLocal, research.SourceOpenAlex, research.SourceSemanticScholar, research.SourceArxiv,
		research.SourceCrossref, research.SourcePubMed, research.SourceSerpAPIScholar}
}

// ConfigFromEnv reads QUARRY_CONFIG (a JSON file with Config's keys and an
// "llm" object), then overrides it with QUARRY_SOURCES (comma-separated),
// QUARRY_CONTACT_EMAIL, QUARRY_SEMANTIC_SCHOLAR_KEY, QUARRY_SERPAPI_KEY,
// QUARRY_OPENALEX_KEY, QUARRY_PUBMED_KEY, QUARRY_STRATEGY_CHECKPOINT
// (true/false), QUARRY_<SOURCE>_URL for each source's base URL and
// QUARRY_LLM_* for each LLM setting (see llm.ConfigFrom). getenv is passed
// in so tests never touch the process environment.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	var file fileConfig
	if path := strings.TrimSpace(getenv("QUARRY_CONFIG")); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return Config{}, &fault.Error{Code: fault.EInvalid, Message: "cannot read the QUARRY_CONFIG file", Err: err,
				Fields: map[string]string{"QUARRY_CONFIG": err.Error()}}
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&file); err != nil {
			return Config{}, &fault.Error{Code: fault.EInvalid, Message: "the QUARRY_CONFIG file is not a valid configuration",
				Fields: map[string]string{"QUARRY_CONFIG": fmt.Sprintf("%s: %v", path, err)}}
		}
	}
	cfg := file.Config
	if v := strings.TrimSpace(getenv("QUARRY_SOURCES")); v != "" {
		cfg.Sources = nil
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				cfg.Sources = append(cfg.Sources, s)
			}
		}
	}
	for env, dst := range map[string]*string{
		"QUARRY_CONTACT_EMAIL":        &cfg.ContactEmail,
		"QUARRY_SEMANTIC_SCHOLAR_KEY": &cfg.SemanticScholarKey,
		"QUARRY_SERPAPI_KEY":          &cfg.SerpAPIKey,
		"QUARRY_OPENALEX_KEY":         &cfg.OpenAlexKey,
		"QUARRY_PUBMED_KEY":           &cfg.PubMedKey,
	} {
		if v := strings.TrimSpace(getenv(env)); v != "" {
			*dst = v
		}
	}
	lc, err := llm.ConfigFrom(file.LLM, getenv)
	if err != nil {
		return Config{}, err
	}
	cfg.LLM = lc
	switch v := strings.ToLower(strings.TrimSpace(getenv("QUARRY_STRATEGY_CHECKPOINT"))); v {
	case "":
	case "1", "true", "yes", "on":
		t := true
		cfg.StrategyCheckpoint = &t
	case "0", "false", "no", "off":
		f := false
		cfg.StrategyCheckpoint = &f
	default:
		return Config{}, &fault.Error{Code: fault.EInvalid, Message: "invalid configuration",
			Fields: map[string]string{"QUARRY_STRATEGY_CHECKPOINT": fmt.Sprintf("%q is not true or false", v)}}
	}
	for _, name := range knownSources() {
		if v := strings.TrimSpace(getenv("QUARRY_" + strings.ToUpper(name) + "_URL")); v != "" {
			if cfg.BaseURLs == nil {
				cfg.BaseURLs = map[string]string{}
			}
			cfg.BaseURLs[name] = v
		}
	}
	return cfg, nil
}

// enabled returns the configured source names, defaulted and checked.
func (c Config) enabled() ([]string, error) {
	names := c.Sources
	if len(names) == 0 {
		names = []string{research.SourceLocal}
	}
	fe := fault.FieldErrors{}
	var out []string
	for i, n := range names {
		n = strings.TrimSpace(n)
		switch {
		case !slices.Contains(knownSources(), n):
			fe.Add(fmt.Sprintf("sources[%d]", i), fmt.Sprintf("unknown source %q (known: %s)", n, strings.Join(knownSources(), ", ")))
		case slices.Contains(out, n):
		default:
			out = append(out, n)
		}
	}
	for name := range c.BaseURLs {
		if !slices.Contains(knownSources(), name) {
			fe.Add("base_urls."+name, fmt.Sprintf("unknown source %q", name))
		}
	}
	if slices.Contains(out, research.SourceSerpAPIScholar) && strings.TrimSpace(c.SerpAPIKey) == "" {
		fe.Add("serpapi_key", "serpapi_scholar is enabled but has no API key: set QUARRY_SERPAPI_KEY or disable it")
	}
	return out, fe.Err("invalid search configuration")
}

// buildSources constructs the enabled sources, leaving out "local" when no
// library was given.
func (c Config) buildSources() ([]sources.Source, error) {
	names, err := c.enabled()
	if err != nil {
		return nil, err
	}
	var out []sources.Source
	for _, n := range names {
		var src sources.Source
		url := c.BaseURLs[n]
		switch n {
		case research.SourceLocal:
			if c.Local == nil {
				continue
			}
			src = c.Local
		case research.SourceOpenAlex:
			src, err = openalex.New(openalex.Options{BaseURL: url, Contact: c.ContactEmail, APIKey: c.OpenAlexKey})
		case research.SourceSemanticScholar:
			src, err = semanticscholar.New(semanticscholar.Options{BaseURL: url, Contact: c.ContactEmail, APIKey: c.SemanticScholarKey})
		case research.SourceArxiv:
			src, err = arxiv.New(arxiv.Options{BaseURL: url, Contact: c.ContactEmail})
		case research.SourceCrossref:
			src, err = crossref.New(crossref.Options{BaseURL: url, Contact: c.ContactEmail})
		case research.SourcePubMed:
			src, err = pubmed.New(pubmed.Options{BaseURL: url, Contact: c.ContactEmail, APIKey: c.PubMedKey})
		case research.SourceSerpAPIScholar:
			src, err = serpapi.New(serpapi.Options{BaseURL: url, Contact: c.ContactEmail, APIKey: c.SerpAPIKey})
		}
		if err != nil {
			return nil, err
		}
		out = append(out, src)
	}
	if len(out) == 0 {
		return nil, &fault.Error{Code: fault.EInvalid, Message: "no source can be searched", Err: ErrNoSources,
			Fields: map[string]string{"sources": "only the local library is enabled and it is not available; enable an online source with QUARRY_SOURCES"}}
	}
	return out, nil
}

// FromConfig builds the search workflow a deployment runs: the configured
// sources, and the skills — LLM-backed where a provider is configured, each
// falling back to its offline heuristic (and noting it in the run) when the
// model fails; offline otherwise.
func FromConfig(cfg Config, handler engine.CheckpointHandler, maxIterations int) (*SearchWorkflow, error) {
	srcs, err := cfg.buildSources()
	if err != nil {
		return nil, err
	}
	provider, err := llm.New(cfg.LLM)
	if err != nil {
		return nil, err
	}
	sk := Skills{
		Intent:    llm.NewIntentParser(provider, intent.New(nil)),
		Queries:   llm.NewQueryBuilder(provider, querybuilder.New()),
		Sources:   srcs,
		Dedup:     dedup.New(),
		Scorer:    llm.NewScorer(provider, relevance.Scorer{}),
		Organizer: organize.Organizer{},
		Files:     cfg.Files,
	}
	confirm := cfg.StrategyCheckpoint == nil || *cfg.StrategyCheckpoint
	return NewSearchWorkflow(sk, handler, maxIterations, confirm)
}
