package library

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"quarry/internal/biblio"
	"quarry/internal/research"
	"quarry/internal/store"
)

// An import keys papers by their identifier (research.StableID: DOI, then
// arXiv ID, then PMID), so a record with the DOI of a paper already stored
// updates it. That is right for the same work read again and wrong for a
// different work that shares the identifier, which publishers and
// catalogues produce (a chapter carrying its book's DOI, a collection and
// one of its papers): the import would silently replace one work with
// another. apart finds such records and keys them by title instead, so
// both are kept, and says so as a warning.
type apart struct {
	// seen is the first work this import stored under each identifier
	// key, so two works sharing a DOI within one file are told apart too.
	// Its words are counted only when another record meets it (newWork),
	// which is rare: an import of a corpus pays a map entry per record.
	seen map[string]store.StoredWork
}

// work is what tells two works apart: the words of the title and the
// publication type.
type work struct {
	title string
	words map[string]bool
	typ   string
}

func newWork(title, typ string) work {
	w := work{title: title, typ: typ, words: map[string]bool{}}
	for _, t := range strings.Fields(research.NormalizeTitle(title)) {
		w.words[t] = true
	}
	return w
}

// minSharedWords is the share of the shorter title's words below which two
// records under one identifier are different works. Versions of one work
// differ by a subtitle, punctuation or a corrected word; different works
// sharing a DOI (a book and its chapter) share few words. (Checked, not
// tuned: of the 124 pairs of records sharing a DOI in ../shared/data's
// dedup and corpus sets, none falls below a half.)
const minSharedWords = 0.5

// differs says whether a and b are different works: one is a whole (a
// book) and the other a part of one (a chapter), or their titles share
// under minSharedWords of the shorter one's words.
func (a work) differs(b work) bool {
	if (a.typ == biblio.Book && b.typ == biblio.Chapter) || (a.typ == biblio.Chapter && b.typ == biblio.Book) {
		return true
	}
	if len(a.words) == 0 || len(b.words) == 0 {
		return false
	}
	both := 0
	for t := range a.words {
		if b.words[t] {
			both++
		}
	}
	return float64(both)/float64(min(len(a.words), len(b.words))) < minSharedWords
}

// keepApart rekeys the papers of a batch that share an identifier with a
// different work, stored or earlier in this import, and counts a warning
// for each.
func (ap *apart) keepApart(ctx context.Context, st Store, stats *ImportStats, papers []store.ImportPaper) error {
	if ap.seen == nil {
		ap.seen = map[string]store.StoredWork{}
	}
	var ids []string
	for _, p := range papers {
		if !strings.HasPrefix(p.ID, "t:") {
			ids = append(ids, p.ID)
		}
	}
	stored, err := st.LibraryWorks(ctx, ids)
	if err != nil {
		return err
	}
	for i := range papers {
		p := &papers[i]
		if strings.HasPrefix(p.ID, "t:") {
			continue
		}
		mine := store.StoredWork{Title: p.Title, Type: typeOf(p.Extra)}
		first, ok := ap.seen[p.ID]
		if !ok {
			first, ok = stored[p.ID]
		}
		if !ok {
			ap.seen[p.ID] = mine
			continue
		}
		other := newWork(first.Title, first.Type)
		if !newWork(mine.Title, mine.Type).differs(other) {
			continue
		}
		key := p.ID
		bare := p.RawPaper
		bare.DOI, bare.ArxivID, bare.PMID = "", "", ""
		p.ID = research.StableID(bare)
		stats.Warn(p.Origin, p.Line, fmt.Sprintf("shares %s with a different work (%q); kept as a separate paper", key, other.title))
	}
	return nil
}

// typeOf reads the publication type an import keeps in extra.
func typeOf(extra []byte) string {
	if !bytes.Contains(extra, []byte(`"type"`)) {
		return "" // most records: no JSON to decode
	}
	return biblio.ExtraFields(biblio.Record{Extra: extra})["type"]
}
