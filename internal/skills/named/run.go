package named

import (
	"context"
	"fmt"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/searcher"
)

// run is search.run: with {strategy, max_per_source?} → {papers, found,
// errors}: the strategy searched over the enabled sources (the cap, when
// given, replacing the strategy's), each paper as a Paper, each source's
// progress reported as it comes. found counts
// the papers by source; errors holds each failing source's error, which
// never fails the stage while another source answers.
func run(d Deps) Skill {
	return func(ctx context.Context, in In) (map[string]any, error) {
		with := in.With
		if len(d.Sources) == 0 {
			err := d.SearchErr
			if err == nil {
				err = fault.Errorf(fault.EInvalid, "no source can be searched")
			}
			return nil, err
		}
		st, err := arg[research.SearchStrategy](with, "strategy", true)
		if err != nil {
			return nil, err
		}
		max, err := arg[int](with, "max_per_source", false)
		if err != nil {
			return nil, err
		}
		if max > 0 {
			st.MaxResultsPerSource = min(max, research.MaxResultsLimit)
		}
		opts := d.SearchOptions
		opts.OnEvent = func(ev searcher.Event) {
			msg := fmt.Sprintf("%s: %s", ev.Source, ev.Kind)
			switch ev.Kind {
			case searcher.EventDone:
				msg = fmt.Sprintf("%s: %s", ev.Source, ev.Found())
			case searcher.EventError:
				msg = fmt.Sprintf("%s: %s", ev.Source, ev.Error)
			}
			in.progress(msg, ev)
		}
		s, err := searcher.New(d.Sources, opts)
		if err != nil {
			return nil, err
		}
		res, err := s.Search(ctx, st)
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		papers := []Paper{}
		for _, p := range res.Papers {
			if p.Validate() == nil { // a record without a title cannot be shown
				papers = append(papers, summary(p))
			}
		}
		found, errs := map[string]int{}, map[string]string{}
		for name, r := range res.Sources {
			found[name] = r.Count
			if r.Error != "" {
				errs[name] = r.Error
			}
		}
		if len(papers) == 0 && len(errs) > 0 && len(errs) == len(res.Sources) {
			return nil, fmt.Errorf("every source failed: %v", errs)
		}
		return plain(map[string]any{"papers": papers, "found": found, "errors": errs})
	}
}
