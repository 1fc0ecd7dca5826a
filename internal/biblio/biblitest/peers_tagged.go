package biblitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
)

// PeerItem is one record another project expects to read from a file, in
// the shape Zotero's translator test cases write (zotero/translators,
// `testCases` at the end of each translator): the shape other peers'
// expectations are transcribed into too, so one comparison serves all.
type PeerItem struct {
	ItemType         string          `json:"itemType"`
	Title            string          `json:"title"`
	Creators         []PeerCreator   `json:"creators"`
	Date             string          `json:"date"`
	PublicationTitle string          `json:"publicationTitle"`
	BookTitle        string          `json:"bookTitle"`
	ProceedingsTitle string          `json:"proceedingsTitle"`
	Volume           string          `json:"volume"`
	Issue            string          `json:"issue"`
	Pages            string          `json:"pages"`
	DOI              string          `json:"DOI"`
	AbstractNote     string          `json:"abstractNote"`
	URL              string          `json:"url"`
	Extra            string          `json:"extra"`
	Tags             json.RawMessage `json:"tags"`
}

// PeerCreator is one name of a PeerItem: split (firstName, lastName) or
// kept whole (fieldMode 1, the whole name in lastName).
type PeerCreator struct {
	FirstName   string `json:"firstName"`
	LastName    string `json:"lastName"`
	FieldMode   int    `json:"fieldMode"`
	CreatorType string `json:"creatorType"`
}

// TaggedCase is one input with the records a peer expects from it; Count
// alone (no Items) is a peer's expectation of how many records there are.
type TaggedCase struct {
	Name  string
	Input []byte
	Items []PeerItem
	Count int
}

// ZoteroCases loads the import test cases of a Zotero translator, kept as
// the JSON array the translator file holds between its BEGIN and END TEST
// CASES markers.
func ZoteroCases(t testing.TB, path string) []TaggedCase {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var raw []struct {
		Type  string          `json:"type"`
		Input string          `json:"input"`
		Items json.RawMessage `json:"items"`
	}
	require.NoError(t, json.Unmarshal(b, &raw), path)
	var out []TaggedCase
	for i, c := range raw {
		if c.Type != "import" {
			continue
		}
		var items []PeerItem
		if json.Unmarshal(c.Items, &items) != nil {
			continue // "multiple" and other non-lists belong to web cases
		}
		out = append(out, TaggedCase{Name: fmt.Sprintf("%s#%d", filepath.Base(path), i+1), Input: []byte(c.Input), Items: items, Count: len(items)})
	}
	return out
}

// FileCases loads the files of dir (except SOURCE.md and expected.json)
// with the expectations transcribed from the peer's tests into
// dir/expected.json: {"file": {"count": N, "items": [PeerItem...]}}.
func FileCases(t testing.TB, dir string) []TaggedCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	require.NoError(t, err)
	var exp map[string]struct {
		Count int        `json:"count"`
		Items []PeerItem `json:"items"`
	}
	require.NoError(t, json.Unmarshal(b, &exp))
	names := make([]string, 0, len(exp))
	for n := range exp {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []TaggedCase
	for _, n := range names {
		in, err := os.ReadFile(filepath.Join(dir, n))
		require.NoError(t, err)
		e := exp[n]
		if e.Count == 0 {
			e.Count = len(e.Items)
		}
		out = append(out, TaggedCase{Name: filepath.Base(dir) + "/" + n, Input: in, Items: e.Items, Count: e.Count})
	}
	return out
}

// PeerScore adds up a format's agreement with its peers.
type PeerScore struct {
	Files, Expected, Stored, Reported int
	// Lost counts expected records neither stored nor reported.
	Lost              int
	Compared, Agreed  int
	Disagreements     []string
	FieldDisagreement map[string]int
}

// Agreement is the share of compared fields that agree, in percent.
func (s PeerScore) Agreement() float64 {
	if s.Compared == 0 {
		return 100
	}
	return 100 * float64(s.Agreed) / float64(s.Compared)
}

// Line is the summary the peer tests print.
func (s PeerScore) Line(format string) string {
	return fmt.Sprintf("peers: format=%s files=%d expected=%d stored=%d reported=%d lost=%d field_agreement=%.1f%%",
		format, s.Files, s.Expected, s.Stored, s.Reported, s.Lost, s.Agreement())
}

// Score reads each case with read and compares what Quarry keeps of each
// record (title, authors with their split, year, venue, volume, issue,
// pages, DOI, PMID, abstract, URL, keywords) with the peer's expectation.
// Records are matched by title, then in order.
func Score(cases []TaggedCase, read func([]byte) ([]biblio.Record, error)) PeerScore {
	s := PeerScore{FieldDisagreement: map[string]int{}}
	for _, c := range cases {
		s.Files++
		recs, err := read(c.Input)
		if err != nil {
			s.Disagreements = append(s.Disagreements, fmt.Sprintf("%s: read error %v", c.Name, err))
		}
		stored := 0
		reported := 0
		for _, r := range recs {
			if r.Problem != "" || r.Skip != "" {
				reported++
				s.Disagreements = append(s.Disagreements, fmt.Sprintf("%s line %d: reported %q%s", c.Name, r.Line, r.Problem, r.Skip))
				continue
			}
			stored++
		}
		s.Expected += c.Count
		s.Stored += min(stored, c.Count)
		s.Reported += reported
		if missing := c.Count - stored; missing > reported {
			s.Lost += missing - reported
		}
		usable := func(k int) bool { return recs[k].Problem == "" && recs[k].Skip == "" }
		used := make([]bool, len(recs))
		for i, it := range c.Items {
			j := -1
			for k, r := range recs {
				if !used[k] && usable(k) && normSpace(r.Paper.Title) == normSpace(it.Title) {
					j = k
					break
				}
			}
			if j < 0 && i < len(recs) && !used[i] && usable(i) {
				j = i // the record in the same place
			}
			if j < 0 {
				continue
			}
			used[j] = true
			s.compare(fmt.Sprintf("%s item %d", c.Name, i+1), it, recs[j])
		}
	}
	return s
}

var (
	taggedYearRE = regexp.MustCompile(`\b(\d{4})\b`)
	pmidOf       = regexp.MustCompile(`(?m)^PMID:\s*(\d+)`)
	taggedDashes = strings.NewReplacer("–", "-", "—", "-", "‐", "-")
	doiPref      = regexp.MustCompile(`(?i)^(https?://(dx\.)?doi\.org/|doi:\s*)`)
)

func normSpace(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// primary are the Zotero creator types Quarry keeps as a paper's authors.
var primary = map[string]bool{"author": true, "inventor": true, "programmer": true, "artist": true, "presenter": true, "director": true, "podcaster": true, "cartographer": true, "interviewee": true, "performer": true, "composer": true, "sponsor": true}

func (s *PeerScore) compare(where string, it PeerItem, r biblio.Record) {
	p := r.Paper
	check := func(field, want, got string) {
		want, got = normSpace(taggedDashes.Replace(want)), normSpace(taggedDashes.Replace(got))
		if want == "" {
			return
		}
		s.Compared++
		if want == got {
			s.Agreed++
			return
		}
		s.FieldDisagreement[field]++
		s.Disagreements = append(s.Disagreements, fmt.Sprintf("%s %s: want %q got %q", where, field, want, got))
	}
	check("title", it.Title, p.Title)
	var want, got []string
	for _, c := range it.Creators {
		if !primary[c.CreatorType] {
			continue
		}
		if c.FieldMode == 1 {
			want = append(want, "literal:"+c.LastName)
		} else {
			want = append(want, c.LastName+" | "+initials(c.FirstName))
		}
	}
	for _, n := range biblio.NamesOf(r) {
		if n.Literal != "" {
			got = append(got, "literal:"+n.Literal)
		} else {
			got = append(got, strings.TrimSpace(n.Last+" "+n.Suffix)+" | "+initials(n.First))
		}
	}
	if len(want) > 0 {
		check("authors", strings.Join(want, "; "), strings.Join(got, "; "))
	}
	if m := taggedYearRE.FindStringSubmatch(it.Date); m != nil {
		y := strings.TrimLeft(m[1], "0") // Zotero writes an unreadable date as 0000
		if y == "" {
			y = "0"
		}
		check("year", y, fmt.Sprint(p.Year))
	}
	check("venue", first(it.PublicationTitle, it.ProceedingsTitle, it.BookTitle), p.Venue)
	check("volume", it.Volume, p.Volume)
	check("issue", it.Issue, p.Issue)
	check("pages", fullPages(it.Pages), fullPages(p.Pages))
	check("doi", doiPref.ReplaceAllString(strings.TrimSpace(it.DOI), ""), p.DOI)
	if m := pmidOf.FindStringSubmatch(it.Extra); m != nil {
		check("pmid", m[1], p.PMID)
	}
	check("abstract", it.AbstractNote, p.Abstract)
	check("url", it.URL, p.URL)
	var tags []string
	var raw []json.RawMessage
	_ = json.Unmarshal(it.Tags, &raw)
	for _, t := range raw {
		var o struct{ Tag string }
		if json.Unmarshal(t, &o) != nil {
			_ = json.Unmarshal(t, &o.Tag)
		}
		tags = append(tags, heading(o.Tag))
	}
	if len(tags) > 0 {
		var kws []string
		for _, k := range r.Keywords {
			kws = append(kws, heading(k))
		}
		sort.Strings(tags)
		sort.Strings(kws)
		check("keywords", strings.Join(tags, "; "), strings.Join(kws, "; "))
	}
}

var pageSpan = regexp.MustCompile(`^(\d+)-(\d+)$`)

// fullPages writes out an abbreviated end page, so "475-82" (PubMed's
// form, which Quarry keeps as given) and "475-482" (Zotero's) compare equal.
func fullPages(pg string) string {
	pg = strings.TrimSpace(taggedDashes.Replace(pg))
	m := pageSpan.FindStringSubmatch(pg)
	if m == nil || len(m[2]) >= len(m[1]) {
		return pg
	}
	return m[1] + "-" + m[1][:len(m[1])-len(m[2])] + m[2]
}

// initials writes "M J" and "M. J." alike: Zotero adds the periods
// PubMed leaves out, which changes no name.
func initials(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, ".", " ")), " ")
}

// heading compares a MeSH heading by its descriptor: Quarry keeps
// "Brain" of "Brain/*enzymology" (the subheadings and the major-topic
// star are not kept, see package medline), Zotero keeps it whole.
func heading(k string) string {
	if i := strings.IndexByte(k, '/'); i >= 0 {
		k = k[:i]
	}
	return normSpace(strings.ReplaceAll(k, "*", ""))
}

func first(xs ...string) string {
	for _, x := range xs {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}

// ReadRecords reads every record of r, for Score's read functions.
func ReadRecords(r biblio.Reader) ([]biblio.Record, error) {
	var out []biblio.Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
}

// ScoreFormat scores cases read by open (the format's reader as an import
// opens it), logs the disagreements under -v, prints the peers: line make
// test shows for format, and checks what every format must: no record
// lost without a report, and every expected record stored or reported.
func ScoreFormat(t testing.TB, format string, cases []TaggedCase, open func(io.Reader) (biblio.Reader, error)) PeerScore {
	t.Helper()
	s := Score(cases, func(b []byte) ([]biblio.Record, error) {
		o, err := open(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		return ReadRecords(o)
	})
	if testing.Verbose() {
		t.Log(strings.Join(s.Disagreements, "\n"))
		t.Log(s.FieldDisagreement)
	}
	fmt.Println(s.Line(format))
	require.Zero(t, s.Lost, "records lost without a report")
	require.Zero(t, s.Expected-s.Stored-s.Reported)
	return s
}
