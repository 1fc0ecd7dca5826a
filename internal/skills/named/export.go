package named

import (
	"context"
	"strings"

	"quarry/internal/biblio"
	"quarry/internal/biblio/codecs"
)

// export is papers.export: with {papers, format?} → {format, count,
// text}: the papers written in a bibliographic format (ris by default;
// any of codecs.ExportFormats), the text kept in the run's outputs, where
// the run's page and GET /api/runs/:id show it.
func export(_ context.Context, with map[string]any) (map[string]any, error) {
	papers, err := arg[[]Paper](with, "papers", false)
	if err != nil {
		return nil, err
	}
	format, err := arg[string](with, "format", false)
	if err != nil {
		return nil, err
	}
	if format == "" {
		format = biblio.RIS
	}
	records := make([]biblio.Record, 0, len(papers))
	for _, p := range papers {
		records = append(records, biblio.Record{Paper: p.raw()})
	}
	var b strings.Builder
	if err := codecs.WriteAll(&b, format, records); err != nil {
		return nil, err
	}
	return plain(map[string]any{"format": format, "count": len(records), "text": b.String()})
}
