// Package semanticscholar searches Semantic Scholar's Academic Graph API
// (https://api.semanticscholar.org/api-docs/graph) through its paper
// relevance search, /graph/v1/paper/search. The pipeline keeps each source's
// first results, so it needs them ranked by relevance: the bulk search
// (/paper/search/bulk) is documented as "intended for bulk retrieval of
// basic paper data without search relevance", which made its first 25 an
// arbitrary sample of the matches.
//
// The relevance search takes "a plain-text search query string": "no
// special query syntax is supported" and "hyphenated query terms yield no
// matches (replace it with space to find matches)". The query renderer
// writes exactly that for this source (query.Render's bag of words), and
// PlainQuery passes it through unchanged; queries written in the bulk
// search's syntax (+ | - "phrases" (groups) prefix* term~N), which the
// renderer wrote before, are turned into plain text by PlainQuery before
// they are sent. SentQuery reports the text sent, so the search report
// shows what the API really received.
//
// The strategy's fields of study are sent as the search's fieldsOfStudy
// filter, which only takes names from Semantic Scholar's fixed list
// (FieldsOfStudy); names that are not on it are left out rather than sent,
// and SentQuery appends the filter as sent to the query it reports.
package semanticscholar

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/query"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/httpclient"
)

// DefaultBaseURL is the public API.
const DefaultBaseURL = "https://api.semanticscholar.org"

// fields are the paper fields requested; anything else costs bandwidth.
const fields = "title,authors,year,venue,abstract,externalIds,url"

const (
	// pageSize is the relevance search's largest limit per call.
	pageSize = 100
	// maxRanked is how deep the relevance search ranks: it "can only return
	// up to 1,000 relevance-ranked results", so offset+limit stays within it
	// (research.MaxResultsLimit is the same 1000).
	maxRanked = 1000
	// pastTheEnd is the 400 the live API answers for a page beyond the
	// matches (observed, not documented); on a later page it means the
	// results ran out, not that the query was bad.
	pastTheEnd = "Requested data for this limit and/or offset is not available"
)

// Options configure a Client. APIKey is optional; sent as x-api-key it
// gives a rate of our own instead of the pool every unauthenticated caller
// shares. Contact only identifies us in User-Agent.
type Options httpclient.EndpointOptions

// Client is the Semantic Scholar Source.
type Client struct {
	ep httpclient.Endpoint
}

var (
	_ sources.Source      = (*Client)(nil)
	_ sources.QueryFolder = (*Client)(nil)
)

// New returns a Client.
func New(opts Options) (*Client, error) {
	ep, err := httpclient.NewEndpoint(research.SourceSemanticScholar, DefaultBaseURL, httpclient.EndpointOptions(opts), RateLimit)
	if err != nil {
		return nil, err
	}
	return &Client{ep: ep}, nil
}

// RateLimit is one request per second. An API key's introductory rate is 1
// request/s on all endpoints; without a key, requests share one pool with
// every other unauthenticated caller and are throttled when it is busy, so
// going faster would only earn 429s
// (https://www.semanticscholar.org/product/api, "Rate limits").
func RateLimit(contact, apiKey string) httpclient.Limit {
	return httpclient.Limit{Every: time.Second, Burst: 1}
}

// Name implements sources.Source.
func (c *Client) Name() string { return research.SourceSemanticScholar }

// Search implements sources.Source: SearchCounted without the total.
func (c *Client) Search(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
	p, err := c.SearchCounted(ctx, req)
	return p.Papers, err
}

// SearchCounted implements sources.Counter: pages of up to 100 papers in
// relevance order, following next until req.MaxResults papers (at most
// 1000) are in hand or the results run out; the total is the first page's
// total.
func (c *Client) SearchCounted(ctx context.Context, req sources.SourceRequest) (sources.Page, error) {
	if err := req.Check(c.Name()); err != nil {
		return sources.Page{Total: sources.TotalUnknown}, err
	}
	query, fos := PlainQuery(req.Query), FieldsOfStudy(req.Filters.FieldsOfStudy)
	if query == "" {
		return sources.Page{Total: sources.TotalUnknown}, fault.Errorf(fault.EInvalid, "semantic_scholar: the query %q has no word to search for once the syntax the relevance search does not support is removed", req.Query)
	}
	var header http.Header
	if c.ep.APIKey != "" {
		header = http.Header{"x-api-key": {c.ep.APIKey}}
	}
	want := min(req.MaxResults, maxRanked)
	total := sources.TotalUnknown
	papers := []research.RawPaper{}
	for offset := req.Offset; len(papers) < want && offset < maxRanked; {
		limit := min(pageSize, want-len(papers), maxRanked-offset)
		var resp response
		if err := c.ep.HTTP.GetJSON(ctx, c.url(query, fos, req.YearRange, offset, limit), header, &resp); err != nil {
			var se *httpclient.StatusError
			if offset > 0 && errors.As(err, &se) && se.Status == http.StatusBadRequest && strings.Contains(se.Body, pastTheEnd) {
				return sources.Page{Papers: papers, Total: sources.AtLeast(total, len(papers))}, nil
			}
			return sources.Page{Total: sources.TotalUnknown}, err
		}
		if resp.Data == nil {
			return sources.Page{Total: sources.TotalUnknown}, fault.Errorf(fault.EInternal, "semantic_scholar: unexpected response: no data (total %d)", resp.Total)
		}
		if offset == req.Offset {
			total = resp.Total
		}
		for _, d := range resp.Data {
			if p, ok := d.paper(); ok && len(papers) < want {
				p.Rank = len(papers) + 1
				papers = append(papers, p)
			}
		}
		if resp.Next == nil || len(resp.Data) == 0 {
			break
		}
		if *resp.Next <= offset {
			return sources.Page{Total: sources.TotalUnknown}, fault.Errorf(fault.EInternal, "semantic_scholar: unexpected response: next page %d does not follow offset %d", *resp.Next, offset)
		}
		offset = *resp.Next
	}
	return sources.Page{Papers: papers, Total: sources.AtLeast(total, len(papers))}, nil
}

// SentQuery implements sources.QueryFolder: the relevance search receives
// the query as plain text (PlainQuery), so that is what the report records,
// followed by " [fieldsOfStudy=Medicine,Psychology]" when the request also
// carries that filter. The years are a parameter too, but every source
// receives them and the report lists them in a column of their own; the
// fields of study only Semantic Scholar receives, so without this the
// report would not show that its results were restricted.
func (c *Client) SentQuery(req sources.SourceRequest) string {
	q := PlainQuery(req.Query)
	if fos := FieldsOfStudy(req.Filters.FieldsOfStudy); len(fos) > 0 && q != "" {
		q += " [fieldsOfStudy=" + strings.Join(fos, ",") + "]"
	}
	return q
}

func (c *Client) url(query string, fos []string, y research.YearRange, offset, limit int) string {
	v := url.Values{}
	v.Set("query", query)
	v.Set("fields", fields)
	v.Set("offset", strconv.Itoa(offset))
	v.Set("limit", strconv.Itoa(limit))
	if y := years(y); y != "" {
		v.Set("year", y)
	}
	if len(fos) > 0 {
		v.Set("fieldsOfStudy", strings.Join(fos, ","))
	}
	return c.ep.Base + "/graph/v1/paper/search?" + v.Encode()
}

// FieldsOfStudy returns the fields of fs that Semantic Scholar's
// fieldsOfStudy filter accepts (query.FieldsOfStudy), spelled as it lists
// them, in fs's order and each once; nil when none is on its list. A
// field not on the list (an LLM's "Neuroscience", a typo) is left out,
// because the API documents no other value to send; the filter then names
// only the fields it can, which is narrower than what the strategy meant
// when others were left out. Strategies edited at checkpoint 1 cannot
// carry such a field: the pipeline refuses it there.
func FieldsOfStudy(fs []string) []string {
	known, _ := query.SortFieldsOfStudy(fs)
	return known
}

// PlainQuery turns a query in the bulk search's syntax into the plain text
// the relevance search documents: an excluded term, phrase or group (-x,
// -"a b", -(a | b)) is dropped, since the relevance search cannot exclude
// and sending its words would search for them; the operators + | ( ) " *
// and ~N are removed, keeping the words of phrases and groups; a hyphen
// inside a word becomes a space, as the API asks. Text without that syntax
// comes out with only hyphens and spacing changed. It returns "" when no
// word is left.
//
// The pipeline's own queries reach this source already as plain words,
// rendered from the query's syntax tree by query.Render, and PlainQuery
// leaves them as they are (FuzzPlainQueryKeepsRendererOutput), so those
// words have one source. PlainQuery is for text the renderer did not
// write: strategies stored when it still wrote the bulk syntax, and
// requests made by hand. It cannot hand that text to the renderer
// instead, because the renderer's input is the canonical syntax, not this
// one, and its output does not parse back: the words of a quoted "cats
// AND dogs" come out as cats AND dogs, which the canonical parser reads
// as an operator, so a round trip would change what is sent.
func PlainQuery(q string) string {
	var b strings.Builder
	rs := []rune(q)
	quoted := false // inside a "phrase", where no operator applies
	atStart := true // at the start of a term, where '-' excludes it
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '"':
			quoted, atStart = !quoted, false
			b.WriteRune(' ')
		case quoted:
			if r == '-' || unicode.IsControl(r) {
				r = ' '
			}
			b.WriteRune(r)
		case r == '-' && atStart:
			i = skipTerm(rs, i+1) - 1
			b.WriteRune(' ')
		case r == '~':
			for i+1 < len(rs) && unicode.IsDigit(rs[i+1]) {
				i++
			}
			b.WriteRune(' ')
			atStart = false
		case r == '-' || r == '*':
			b.WriteRune(' ')
			atStart = false
		case r == '+' || r == '|' || r == '(' || r == ')' || unicode.IsSpace(r) || unicode.IsControl(r):
			b.WriteRune(' ')
			atStart = true
		default:
			b.WriteRune(r)
			atStart = false
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// skipTerm returns the index just past the term starting at rs[i]: a
// "phrase", a (group) with its nesting, or a word.
func skipTerm(rs []rune, i int) int {
	if i >= len(rs) {
		return i
	}
	switch rs[i] {
	case '"':
		for j := i + 1; j < len(rs); j++ {
			if rs[j] == '"' {
				return j + 1
			}
		}
		return len(rs)
	case '(':
		depth, quoted := 0, false
		for j := i; j < len(rs); j++ {
			switch {
			case rs[j] == '"':
				quoted = !quoted
			case quoted:
			case rs[j] == '(':
				depth++
			case rs[j] == ')':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(rs)
	}
	j := i
	for j < len(rs) && !unicode.IsSpace(rs[j]) && !strings.ContainsRune("+|()", rs[j]) {
		j++
	}
	return j
}

// years renders the documented year filter: "2015-2020", "2015-", "-2020".
func years(y research.YearRange) string {
	switch {
	case y.From == 0 && y.To == 0:
		return ""
	case y.To == 0:
		return fmt.Sprintf("%d-", y.From)
	case y.From == 0:
		return fmt.Sprintf("-%d", y.To)
	}
	return fmt.Sprintf("%d-%d", y.From, y.To)
}

// response is one page of the relevance search: an estimated total, the
// page's offset, the offset of the next page (absent on the last) and the
// papers.
type response struct {
	Total  int     `json:"total"`
	Offset int     `json:"offset"`
	Next   *int    `json:"next"`
	Data   []paper `json:"data"`
}

type paper struct {
	PaperID string `json:"paperId"`
	Title   string `json:"title"`
	Authors []struct {
		Name string `json:"name"`
	} `json:"authors"`
	Year     int    `json:"year"`
	Venue    string `json:"venue"`
	Abstract string `json:"abstract"`
	URL      string `json:"url"`
	// ExternalIDs values are strings except CorpusId (a number), which is
	// not decoded.
	ExternalIDs struct {
		DOI    string `json:"DOI"`
		ArXiv  string `json:"ArXiv"`
		PubMed string `json:"PubMed"`
	} `json:"externalIds"`
}

func (d paper) paper() (research.RawPaper, bool) {
	title := strings.Join(strings.Fields(d.Title), " ")
	if title == "" {
		return research.RawPaper{}, false
	}
	p := research.RawPaper{
		Title:    title,
		Year:     d.Year,
		Venue:    strings.TrimSpace(d.Venue),
		Abstract: strings.TrimSpace(d.Abstract),
		DOI:      research.NormalizeDOI(d.ExternalIDs.DOI),
		ArxivID:  research.NormalizeArxivID(d.ExternalIDs.ArXiv),
		PMID:     strings.TrimSpace(d.ExternalIDs.PubMed),
		URL:      d.URL,
	}
	if p.URL == "" && d.PaperID != "" {
		p.URL = "https://www.semanticscholar.org/paper/" + d.PaperID
	}
	for _, a := range d.Authors {
		if n := strings.TrimSpace(a.Name); n != "" {
			p.Authors = append(p.Authors, n)
		}
	}
	return p, true
}
