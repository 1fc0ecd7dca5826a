// Package testapp builds the search workflow the web tests drive: the real
// pipeline with the offline skills, searching a small in-memory library
// instead of the network, so page and browser tests are fast, offline and
// deterministic. Only tests import it.
package testapp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"quarry/internal/engine"
	"quarry/internal/research"
	"quarry/internal/skills/dedup"
	"quarry/internal/skills/intent"
	"quarry/internal/skills/organize"
	"quarry/internal/skills/pipeline"
	"quarry/internal/skills/querybuilder"
	"quarry/internal/skills/relevance"
	"quarry/internal/skills/sources"
)

// ScriptTitle is the title of a library paper carrying markup, so tests can
// check that titles render as text.
const ScriptTitle = `Sleep <script>window.pwned=1</script> and memory consolidation`

// Library is the fixed set of papers the fake sources search.
func Library() []research.RawPaper {
	topics := []struct{ title, abstract string }{
		{"Sleep and memory consolidation in adults", "sleep memory consolidation study in adults"},
		{"REM sleep supports emotional memory", "rem sleep emotional memory consolidation"},
		{"Slow-wave sleep and declarative memory", "slow wave sleep declarative memory consolidation"},
		{"Sleep deprivation impairs working memory", "sleep deprivation working memory performance"},
		{"Napping and memory in older adults", "napping memory older adults sleep"},
		{ScriptTitle, "sleep memory consolidation markup"},
		{"Caffeine, sleep and memory", "caffeine sleep memory"},
		{"Memory reactivation during sleep", "targeted memory reactivation during sleep"},
	}
	out := make([]research.RawPaper, 0, len(topics))
	for i, t := range topics {
		p := research.RawPaper{
			Title: t.title, Abstract: t.abstract, Year: 2010 + i, Venue: "Journal of Sleep Research",
			Authors: []string{fmt.Sprintf("Author %c", 'A'+i)}, DOI: fmt.Sprintf("10.5555/sleep.%d", i),
		}
		p.ID = research.StableID(p)
		out = append(out, p)
	}
	return out
}

// source is an in-memory literature source: it returns the library papers
// sharing a word with the query, in library order, and says how many
// match in all (sources.Counter), as the real sources do.
type source struct {
	name   string
	papers []research.RawPaper
}

var _ sources.Counter = source{}

func (s source) Name() string { return s.name }

func (s source) Search(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
	p, err := s.SearchCounted(ctx, req)
	return p.Papers, err
}

func (s source) SearchCounted(ctx context.Context, req sources.SourceRequest) (sources.Page, error) {
	if err := ctx.Err(); err != nil {
		return sources.Page{Total: sources.TotalUnknown}, err
	}
	words := strings.Fields(strings.ToLower(strings.NewReplacer(`"`, " ", "(", " ", ")", " ").Replace(req.Query)))
	var out []research.RawPaper
	total := 0
	for _, p := range s.papers {
		text := strings.ToLower(p.Title + " " + p.Abstract)
		for _, w := range words {
			if len(w) > 3 && strings.Contains(text, w) {
				total++
				if total > req.Offset && len(out) < req.MaxResults { // from the offset: a next page
					p.Source = s.name
					out = append(out, p)
				}
				break
			}
		}
	}
	return sources.Page{Papers: out, Total: total}, nil
}

// Sources are the source names the test workflow offers.
var Sources = []string{"library", "mirror"}

// Registry returns a registry holding the search pipeline over the library.
func Registry() (*engine.Registry, error) { return RegistryWithFiles(nil) }

// RegistryWithFiles is Registry with runs able to use attached files read
// from files (the app's store).
func RegistryWithFiles(files pipeline.FileSource) (*engine.Registry, error) {
	lib := Library()
	parser := intent.New(func() time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) })
	wf, err := pipeline.New(pipeline.Skills{
		Intent:    parser,
		Clarifier: parser,
		Queries:   querybuilder.New(),
		Sources:   []sources.Source{source{name: Sources[0], papers: lib}, source{name: Sources[1], papers: lib[:3]}},
		Dedup:     dedup.New(),
		Scorer:    relevance.Scorer{},
		Organizer: organize.Organizer{},
		Files:     files,
	}, pipeline.Options{MaxIterations: 3, MaxResultsPerSource: 10})
	if err != nil {
		return nil, err
	}
	return engine.NewRegistry(wf)
}
