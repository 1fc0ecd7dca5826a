package biblitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"

	"quarry/internal/biblio"
)

// PeerCase is one fixture from another project's test suite: the input a
// reader reads and the items that project expects from it, in Zotero's
// item JSON (what Zotero's translators' testCases and Better BibTeX's
// fixtures record), so one comparison serves every peer.
type PeerCase struct {
	Name     string
	Input    []byte
	Expected []map[string]any
	// Entries is how many records the input holds by the format's own
	// count (0: as many as expected). A peer's expected library can hold
	// more (Better BibTeX's fixtures keep what an earlier step of the
	// same test imported from another file), and a record the input does
	// not hold cannot be lost.
	Entries int
	// Carried, when set, is the text of every value in the input: a field
	// whose expected value it does not contain is not compared, because
	// the input does not carry it (Better BibTeX's CSL-JSON export leaves
	// Zotero's tags out, so no CSL reader could read them back).
	Carried string
	// CarriedFields, when set, limits the Carried check to these fields:
	// a reader's input can carry LaTeX, so its text is a fair test only
	// of values a peer could have made up, such as a journal's full name
	// from an abbreviation list or a tag of its own.
	CarriedFields []string
}

// PeerResult counts what a format's reader made of the peers' fixtures.
type PeerResult struct {
	Files, Expected, Stored, Reported int
	// Lost counts expected records that were neither stored nor reported.
	Lost int
	// NotInInput counts expected items whose citation key the input does
	// not contain, left out of Expected.
	NotInInput int
	// NotCarried counts field comparisons left out because the input does
	// not carry the expected value (PeerCase.Carried).
	NotCarried int
	// Compared and Agreed count field comparisons over matched records.
	Compared, Agreed int
	// Fields is per field name: compared, agreed.
	Fields map[string][2]int
	// Diffs are the disagreements, "case: field: want … got …".
	Diffs []string
}

// Agreement is Agreed/Compared in percent.
func (r PeerResult) Agreement() float64 {
	if r.Compared == 0 {
		return 100
	}
	return 100 * float64(r.Agreed) / float64(r.Compared)
}

// Line is the summary the peer tests print.
func (r PeerResult) Line(format string) string {
	return fmt.Sprintf("peers: format=%s files=%d expected=%d stored=%d reported=%d lost=%d field_agreement=%.1f%% (compared=%d agreed=%d; left out: expected items not in the input %d, expected values the input does not carry %d)",
		format, r.Files, r.Expected, r.Stored, r.Reported, r.Lost, r.Agreement(), r.Compared, r.Agreed, r.NotInInput, r.NotCarried)
}

// ReadPeers reads every case with newReader and compares each record
// Quarry stores with the item the peer expects, field by field, over the
// fields Quarry keeps (the paper's fields, the authors' split, type,
// keywords, and publisher, place, ISBN, ISSN, edition, series, language
// and editors kept in Extra). Items Quarry has no record for (standalone
// notes, attachments) are not expected.
func ReadPeers(t testing.TB, newReader func(io.Reader) biblio.Reader, cases []PeerCase) PeerResult {
	t.Helper()
	res := PeerResult{Fields: map[string][2]int{}}
	for _, c := range cases {
		res.Files++
		var stored []biblio.Record
		reported := 0
		r := newReader(bytes.NewReader(c.Input))
		for n := 0; ; n++ {
			require.Less(t, n, 100000, "%s: reader does not end", c.Name)
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, c.Name)
			if rec.Problem != "" || rec.Skip != "" {
				reported++
				continue
			}
			stored = append(stored, rec)
		}
		var expected []map[string]any
		for _, it := range c.Expected {
			switch it["itemType"] {
			case "note", "attachment":
				continue
			}
			if k := str(it["citationKey"]); k != "" && !bytes.Contains(c.Input, []byte(k)) {
				// Better BibTeX's expected library can hold items an
				// earlier step of its test imported from another file.
				res.NotInInput++
				continue
			}
			expected = append(expected, it)
		}
		res.Expected += len(expected)
		res.Stored += len(stored)
		res.Reported += reported
		want := len(expected)
		if c.Entries > 0 && c.Entries < want {
			want = c.Entries
		}
		if lost := want - len(stored) - reported; lost > 0 {
			res.Lost += lost
			res.Diffs = append(res.Diffs, fmt.Sprintf("%s: %d records lost without a report", c.Name, lost))
		}
		for i, j := range match(expected, stored) {
			if j < 0 {
				continue
			}
			want := expected[i]
			for _, f := range compareItem(want, stored[j]) {
				raw := f.raw
				if raw == "" {
					raw = f.want
				}
				if c.Carried != "" && (len(c.CarriedFields) == 0 || slices.Contains(c.CarriedFields, f.name)) && !carried(c.Carried, raw) {
					res.NotCarried++
					continue
				}
				s := res.Fields[f.name]
				s[0]++
				res.Compared++
				if f.ok {
					s[1]++
					res.Agreed++
				} else {
					res.Diffs = append(res.Diffs, fmt.Sprintf("%s: %s: want %q got %q", c.Name, f.name, f.want, f.got))
				}
				res.Fields[f.name] = s
			}
		}
	}
	return res
}

// FieldLine lists per-field agreement, worst first, for the test log.
func (r PeerResult) FieldLine() string {
	names := make([]string, 0, len(r.Fields))
	for n := range r.Fields {
		names = append(names, n)
	}
	rate := func(n string) float64 { s := r.Fields[n]; return float64(s[1]) / float64(s[0]) }
	sort.Slice(names, func(i, j int) bool {
		if rate(names[i]) != rate(names[j]) {
			return rate(names[i]) < rate(names[j])
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, n := range names {
		s := r.Fields[n]
		parts[i] = fmt.Sprintf("%s=%d/%d", n, s[1], s[0])
	}
	return "fields: " + strings.Join(parts, " ")
}

// match pairs each expected item with a stored record (-1: none): the
// same title first, then the most title words in common (peers do not
// keep the file's order), then the same position.
func match(expected []map[string]any, stored []biblio.Record) []int {
	out := make([]int, len(expected))
	used := make([]bool, len(stored))
	for i, want := range expected {
		out[i] = -1
		title := normText(str(want["title"]))
		best, bestN := -1, -1
		for j, rec := range stored {
			if used[j] || title == "" || normText(rec.Paper.Title) != title {
				continue
			}
			// Several records can share a title: take the one that
			// agrees on most fields.
			n := 0
			for _, f := range compareItem(want, rec) {
				if f.ok {
					n++
				}
			}
			if n > bestN {
				best, bestN = j, n
			}
		}
		if best >= 0 {
			out[i], used[best] = best, true
		}
	}
	for i, want := range expected {
		if out[i] >= 0 {
			continue
		}
		words := strings.Fields(normText(str(want["title"])))
		best, bestN := -1, 0
		for j, rec := range stored {
			if used[j] {
				continue
			}
			got := " " + normText(rec.Paper.Title) + " "
			n := 0
			for _, w := range words {
				if strings.Contains(got, " "+w+" ") {
					n++
				}
			}
			if n > bestN && 2*n >= len(words) {
				best, bestN = j, n
			}
		}
		if best < 0 && i < len(stored) && !used[i] {
			best = i
		}
		if best >= 0 {
			out[i], used[best] = best, true
		}
	}
	return out
}

type fieldCheck struct {
	name, want, got string
	ok              bool
	// raw is the expected value as the peer wrote it, for
	// PeerCase.Carried (want may be normalised: ISBNs without hyphens).
	raw string
}

// venueFields are the Zotero fields that hold what Quarry calls the venue.
var venueFields = []string{"publicationTitle", "bookTitle", "proceedingsTitle", "university", "websiteTitle", "blogTitle", "encyclopediaTitle", "dictionaryTitle", "forumTitle", "programTitle"}

// extraKeys are where Quarry keeps Zotero fields that have no column,
// under the BibTeX field names every reader uses in Extra.
var extraKeys = map[string][]string{
	"publisher": {"publisher", "institution", "organization", "school"},
	"place":     {"address", "location"},
	"ISBN":      {"isbn"},
	"ISSN":      {"issn"},
	"edition":   {"edition"},
	"series":    {"series"},
	"language":  {"language", "langid"},
}

// zoteroTypes maps the item types with a Quarry type of their own.
var zoteroTypes = map[string]string{
	"journalArticle": biblio.Article, "magazineArticle": biblio.Article, "newspaperArticle": biblio.Article,
	"conferencePaper": biblio.Conference, "preprint": biblio.Preprint, "book": biblio.Book,
	"bookSection": biblio.Chapter, "thesis": biblio.Thesis, "report": biblio.Report,
}

func compareItem(want map[string]any, rec biblio.Record) []fieldCheck {
	var out []fieldCheck
	text := func(name, w, g string) {
		if strings.TrimSpace(w) == "" {
			return
		}
		out = append(out, fieldCheck{name: name, want: w, got: g, ok: normText(w) == normText(g)})
	}
	p := rec.Paper
	extra := map[string]any{}
	_ = json.Unmarshal(rec.Extra, &extra)
	text("title", str(want["title"]), p.Title)
	if t, ok := zoteroTypes[str(want["itemType"])]; ok {
		out = append(out, fieldCheck{name: "type", want: t, got: rec.Type, ok: t == rec.Type})
	}
	if d := str(want["date"]); d != "" {
		if y := yearOf(d); y != 0 || bcRE.MatchString(d) {
			// A date before the common era is imported without a year
			// (Quarry's years cannot hold one) and with a warning.
			out = append(out, fieldCheck{name: "year", want: strconv.Itoa(y), got: strconv.Itoa(p.Year), ok: y == p.Year})
		}
	}
	for _, f := range venueFields {
		if v := str(want[f]); v != "" {
			text("venue", v, p.Venue)
			break
		}
	}
	if str(want["itemType"]) == "report" {
		text("venue", str(want["institution"]), p.Venue)
	}
	text("volume", str(want["volume"]), p.Volume)
	text("issue", str(want["issue"]), p.Issue)
	text("pages", str(want["pages"]), p.Pages)
	text("doi", str(want["DOI"]), p.DOI)
	text("url", str(want["url"]), p.URL)
	text("abstract", str(want["abstractNote"]), p.Abstract)
	for zf, keys := range extraKeys {
		w := str(want[zf])
		if w == "" {
			continue
		}
		// Zotero has one field where Quarry keeps several (a conference
		// paper's address and location are both places): Quarry agrees
		// when it kept the value under any of them.
		got := ""
		for _, k := range keys {
			if g := str(extra[k]); g != "" && (got == "" || normText(g) == normText(w)) {
				got = g
			}
		}
		if got == "" && zf == "publisher" && (rec.Type == biblio.Book || rec.Type == biblio.Report || rec.Type == biblio.Thesis) {
			got = p.Venue // Zotero's publisher, Quarry's venue
		}
		if zf == "edition" {
			// Zotero writes "2nd" as 2.
			w, got = ordinalRE.ReplaceAllString(w, "$1"), ordinalRE.ReplaceAllString(got, "$1")
		}
		raw := w
		if zf == "ISBN" || zf == "ISSN" {
			w, got = strings.ReplaceAll(w, "-", ""), strings.ReplaceAll(got, "-", "")
		}
		text(strings.ToLower(zf), w, got)
		if n := len(out) - 1; n >= 0 && out[n].name == strings.ToLower(zf) {
			out[n].raw = raw
		}
	}
	if tags, ok := want["tags"].([]any); ok && len(tags) > 0 {
		var w []string
		for _, tg := range tags {
			switch tg := tg.(type) {
			case string:
				w = append(w, tg)
			case map[string]any:
				w = append(w, str(tg["tag"]))
			}
		}
		out = append(out, setCheck("keywords", w, rec.Keywords))
	}
	if creators, ok := want["creators"].([]any); ok {
		var w []string
		for _, c := range creators {
			c, _ := c.(map[string]any)
			if c == nil || (str(c["creatorType"]) != "author" && str(c["creatorType"]) != "") {
				continue
			}
			if n := str(c["name"]); n != "" || str(c["firstName"]) == "" {
				w = append(w, "{"+n+str(c["lastName"])+"}")
			} else {
				w = append(w, str(c["lastName"])+" | "+str(c["firstName"]))
			}
		}
		if len(w) > 0 {
			var g []string
			for _, n := range biblio.NamesOf(rec) {
				if n.Literal != "" || n.First == "" && n.Suffix == "" {
					// A one-part name is one field whichever it is in.
					g = append(g, "{"+n.Literal+n.Last+"}")
					continue
				}
				first := n.First
				if n.Suffix != "" {
					first = strings.TrimSpace(first + ", " + n.Suffix)
				}
				g = append(g, n.Last+" | "+first)
			}
			ws, gs := strings.Join(w, "; "), strings.Join(g, "; ")
			out = append(out, fieldCheck{name: "authors", want: ws, got: gs, ok: normNames(ws) == normNames(gs)})
		}
	}
	return out
}

// carried reports whether every part of an expected value (a name, a
// keyword) occurs in the input's text, a short one ("en") as a word of
// its own rather than inside another.
func carried(input, want string) bool {
	hay := normText(input)
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(hay, notWordRune) {
		words[w] = true
	}
	for _, part := range strings.FieldsFunc(want, func(r rune) bool { return r == ';' || r == '|' || r == '{' || r == '}' }) {
		p := normText(part)
		if p == "" {
			continue
		}
		if !strings.Contains(hay, p) {
			return false
		}
		for _, w := range strings.FieldsFunc(p, notWordRune) {
			if len(w) < 6 && !words[w] {
				return false
			}
		}
	}
	return true
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// Strings is the text of every string and number in a JSON document, one
// per line, for PeerCase.Carried.
func Strings(doc []byte) string {
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return string(doc)
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case string, float64:
			b.WriteString(str(v) + "\n")
		}
	}
	walk(v)
	return b.String()
}

func setCheck(name string, want, got []string) fieldCheck {
	norm := func(xs []string) string {
		ys := make([]string, 0, len(xs))
		for _, x := range xs {
			if x = strings.ToLower(normText(x)); x != "" {
				ys = append(ys, x)
			}
		}
		sort.Strings(ys)
		return strings.Join(ys, "; ")
	}
	w, g := norm(want), norm(got)
	return fieldCheck{name: name, want: w, got: g, ok: w == g}
}

var (
	scriptRE         = regexp.MustCompile(`<(sub|sup)>([^<>]*)</(?:sub|sup)>`)
	bcRE             = regexp.MustCompile(`^\s*-\d`)
	ordinalRE        = regexp.MustCompile(`^(\d+)(st|nd|rd|th)$`)
	tagRE            = regexp.MustCompile(`</?(i|b|sup|sub|sc|span|em|strong|a)( [^>]*)?>`)
	accentedDotlessI = regexp.MustCompile(`ı(\p{Mn})`)
	yearRE           = regexp.MustCompile(`(^|[^0-9])(\d{4})([^0-9]|$)`)
	dashes           = strings.NewReplacer("–", "-", "—", "-", "‐", "-", "‑", "-", "\u00a0", " ", "‘", "'", "’", "'", "“", "\"", "”", "\"", "∼", "~")
)

// normText is how two values are compared: markup Zotero keeps in rich
// text stripped, dashes, quotes and tildes of any kind alike, blanks
// collapsed, Unicode compatibility-composed (a mathematical italic μ is a
// μ, a thin space a space, ℡ is TEL), a dotless ı under an accent an i
// (TeX's \'{\i} is how í is typed), and case ignored: Better BibTeX sentence-cases titles
// on import (a preference of its own, not a parse Quarry should copy).
func normText(s string) string {
	s = scriptRE.ReplaceAllStringFunc(s, func(m string) string {
		sm := scriptRE.FindStringSubmatch(m)
		conv := biblio.Subscript
		if sm[1] == "sup" {
			conv = biblio.Superscript
		}
		out, _ := conv(sm[2])
		return out
	})
	s = tagRE.ReplaceAllString(s, "")
	s = accentedDotlessI.ReplaceAllString(s, "i$1")
	s = dashes.Replace(strings.ToLower(norm.NFKC.String(s)))
	return strings.Join(strings.Fields(s), " ")
}

// normNames is normText for a list of "family | given" names, with
// initials written with or without stops and spaces alike ("K. C." is
// "KC"): how initials are punctuated is a house style, not a parse.
func normNames(s string) string {
	names := strings.Split(normText(s), "; ")
	for i, n := range names {
		family, given, ok := strings.Cut(n, " | ")
		if !ok {
			continue
		}
		var words []string
		run := ""
		for _, w := range strings.Fields(strings.ReplaceAll(given, ".", " ")) {
			if utf8.RuneCountInString(w) == 1 {
				run += w
				continue
			}
			if run != "" {
				words, run = append(words, run), ""
			}
			words = append(words, w)
		}
		if run != "" {
			words = append(words, run)
		}
		names[i] = family + " | " + strings.Join(words, " ")
	}
	return strings.Join(names, "; ")
}

func yearOf(d string) int {
	if bcRE.MatchString(d) {
		return 0
	}
	m := yearRE.FindStringSubmatch(d)
	if m == nil {
		return 0
	}
	y, _ := strconv.Atoi(m[2])
	return y
}

func str(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case []any:
		parts := make([]string, 0, len(v))
		for _, x := range v {
			parts = append(parts, str(x))
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// PeerRoundTrip writes the records a reader stored from the peers'
// fixtures and reads them back, returning every difference in what Quarry
// keeps: biblio.Comparable, the authors' split (Names), Extra (as JSON,
// less the keys in ignoreExtra) and warnings. The export of a library
// must re-import without losing any of it.
func PeerRoundTrip(t testing.TB, f Format, cases []PeerCase, ignoreExtra ...string) (records int, diffs []string) {
	t.Helper()
	for _, c := range cases {
		var recs []biblio.Record
		for _, rec := range ReadAll(t, f.NewReader(bytes.NewReader(c.Input))) {
			if rec.Problem == "" && rec.Skip == "" {
				recs = append(recs, rec)
			}
		}
		var b bytes.Buffer
		w := f.NewWriter(&b)
		for _, rec := range recs {
			require.NoError(t, w.Write(rec))
		}
		require.NoError(t, w.Close())
		back := ReadAll(t, f.NewReader(bytes.NewReader(b.Bytes())))
		if len(back) != len(recs) {
			diffs = append(diffs, fmt.Sprintf("%s: %d records written, %d read back", c.Name, len(recs), len(back)))
			continue
		}
		for i, want := range recs {
			got := back[i]
			records++
			where := fmt.Sprintf("%s: record %d (%q)", c.Name, i+1, want.Paper.Title)
			if got.Problem != "" {
				diffs = append(diffs, where+": read back as a problem: "+got.Problem)
				continue
			}
			cw, cg := biblio.Comparable(want), biblio.Comparable(got)
			if fmt.Sprintf("%#v", cw) != fmt.Sprintf("%#v", cg) {
				diffs = append(diffs, fmt.Sprintf("%s: record differs:\n  wrote %#v\n  read  %#v", where, cw, cg))
			}
			if fmt.Sprint(biblio.NamesOf(want)) != fmt.Sprint(biblio.NamesOf(got)) {
				diffs = append(diffs, fmt.Sprintf("%s: names %v read back as %v", where, biblio.NamesOf(want), biblio.NamesOf(got)))
			}
			if d := extraDiff(want.Extra, got.Extra, ignoreExtra); d != "" {
				diffs = append(diffs, where+": extra "+d)
			}
			if fmt.Sprint(want.Warnings) != fmt.Sprint(got.Warnings) {
				diffs = append(diffs, fmt.Sprintf("%s: warnings %q read back as %q", where, want.Warnings, got.Warnings))
			}
		}
	}
	return records, diffs
}

// extraDiff lists the keys of Extra whose values differ, less the
// ignored ones; "" when none does.
func extraDiff(want, got []byte, ignore []string) string {
	var w, g map[string]any
	_ = json.Unmarshal(want, &w)
	_ = json.Unmarshal(got, &g)
	keys := map[string]bool{}
	for k := range w {
		keys[k] = true
	}
	for k := range g {
		keys[k] = true
	}
	for _, k := range ignore {
		delete(keys, k)
	}
	var out []string
	for k := range keys {
		wb, _ := json.Marshal(w[k])
		gb, _ := json.Marshal(g[k])
		if string(wb) != string(gb) {
			out = append(out, fmt.Sprintf("%s: %s read back as %s", k, wb, gb))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}
