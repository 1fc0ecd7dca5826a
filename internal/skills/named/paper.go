package named

import (
	"quarry/internal/research"
)

// abstractRunes bounds the abstract a Paper keeps: enough for the
// relevance scorer and a reader, small enough that a few hundred papers
// stay a modest run state.
const abstractRunes = 400

// Paper is a paper as the named skills pass it between stages: the
// fields people and the next skills read, not the sources' whole records.
type Paper struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Authors []string `json:"authors,omitempty"`
	// AuthorNames is the source's split of Authors, so an export
	// writes "Wong Kee Song, Louis M." as PubMed gave it.
	AuthorNames []research.AuthorName `json:"author_names,omitempty"`
	Year        int                   `json:"year,omitempty"`
	Venue       string                `json:"venue,omitempty"`
	DOI         string                `json:"doi,omitempty"`
	ArxivID     string                `json:"arxiv_id,omitempty"`
	URL         string                `json:"url,omitempty"`
	Source      string                `json:"source,omitempty"`
	Abstract    string                `json:"abstract,omitempty"`
	Score       float64               `json:"score,omitempty"`
	// Position is a paper's place in a screening batch (1 is the first),
	// what a person types at the gate to keep it.
	Position int `json:"position,omitempty"`
}

// summary is p as a Paper, its abstract clipped.
func summary(p research.RawPaper) Paper {
	abs := []rune(p.Abstract)
	if len(abs) > abstractRunes {
		abs = append(abs[:abstractRunes], '…')
	}
	return Paper{ID: p.ID, Title: p.Title, Authors: p.Authors, AuthorNames: p.AuthorNames, Year: p.Year, Venue: p.Venue, DOI: p.DOI,
		ArxivID: p.ArxivID, URL: p.URL, Source: p.Source, Abstract: string(abs)}
}

// raw is the paper as the pipeline's skills take it.
func (p Paper) raw() research.RawPaper {
	return research.RawPaper{ID: p.ID, Title: p.Title, Authors: p.Authors, AuthorNames: p.AuthorNames, Year: p.Year, Venue: p.Venue, DOI: p.DOI,
		ArxivID: p.ArxivID, URL: p.URL, Source: p.Source, Abstract: p.Abstract}
}

// nonNil keeps an empty list a list (not null) in outputs, so
// len(outputs.x.papers) works on it.
func nonNil(papers []Paper) []Paper {
	if papers == nil {
		return []Paper{}
	}
	return papers
}
