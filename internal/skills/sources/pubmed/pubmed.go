// Package pubmed searches PubMed through NCBI's E-utilities
// (https://www.ncbi.nlm.nih.gov/books/NBK25499/): esearch finds PMIDs in
// relevance order, efetch returns their records as PubmedArticleSet XML.
//
// esearch does not fail on a term it cannot use: it leaves it out (a term
// not in the index, an unknown field tag), searches a quoted phrase it
// cannot find as separate words, or ignores stop words, and says so only in
// its errorlist and warninglist. Such a search ran a different, usually
// wider, query than the one written, so Search returns its papers together
// with a *sources.Warning wrapping a *QueryWarning that names what changed;
// the searcher keeps the papers and records the warning for the source,
// which is not a failure: the papers are good, for the query PubMed ran.
package pubmed

import (
	"context"
	"encoding/xml"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/httpclient"
)

// DefaultBaseURL is the E-utilities endpoint.
const DefaultBaseURL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"

// Tool is the tool name NCBI asks every E-utilities caller to send.
const Tool = "quarry"

// fetchBatch keeps efetch URLs short; NCBI suggests POST beyond ~200 IDs.
const fetchBatch = 200

// Options configure a Client. Contact is sent as email (with
// tool=quarry), as NCBI requires so it can reach a developer before
// blocking an address; APIKey is optional and raises NCBI's limit from 3
// to 10 requests/s.
type Options httpclient.EndpointOptions

// Client is the PubMed Source.
type Client struct {
	ep httpclient.Endpoint
}

var _ sources.Counter = (*Client)(nil)

// New returns a Client.
func New(opts Options) (*Client, error) {
	ep, err := httpclient.NewEndpoint(research.SourcePubMed, DefaultBaseURL, httpclient.EndpointOptions(opts), RateLimit)
	if err != nil {
		return nil, err
	}
	return &Client{ep: ep}, nil
}

// RateLimit is NCBI's E-utilities policy: at most 3 requests/s without an
// API key and 10 with one; more earns 429s and, persistently, a block
// (https://support.nlm.nih.gov/kbArticle/?pn=KA-05510). One search is an
// esearch and at least one efetch, so the limit applies to both.
func RateLimit(contact, apiKey string) httpclient.Limit {
	if apiKey != "" {
		return httpclient.Limit{Every: 100 * time.Millisecond, Burst: 1}
	}
	return httpclient.Limit{Every: 334 * time.Millisecond, Burst: 1}
}

// Name implements sources.Source.
func (c *Client) Name() string { return research.SourcePubMed }

// Search implements sources.Source: SearchCounted without the total.
func (c *Client) Search(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
	p, err := c.SearchCounted(ctx, req)
	return p.Papers, err
}

// SearchCounted implements sources.Counter: esearch, then efetch in
// batches, ranked in esearch's relevance order; the total is esearch's
// count. When esearch reports that it did not run the
// query as written and found papers anyway, they are returned with a
// *sources.Warning wrapping a *QueryWarning (see the package doc); a search
// that found nothing is an empty result, as for any source.
func (c *Client) SearchCounted(ctx context.Context, req sources.SourceRequest) (sources.Page, error) {
	if err := req.Check(c.Name()); err != nil {
		return sources.Page{Total: sources.TotalUnknown}, err
	}
	ids, total, warning, err := c.esearch(ctx, req)
	if err != nil {
		return sources.Page{Total: sources.TotalUnknown}, err
	}
	byPMID := map[string]research.RawPaper{}
	for start := 0; start < len(ids); start += fetchBatch {
		batch := ids[start:min(start+fetchBatch, len(ids))]
		var set articleSet
		if err := c.ep.HTTP.GetXML(ctx, c.url("efetch.fcgi", url.Values{"id": {strings.Join(batch, ",")}, "retmode": {"xml"}}), nil, &set); err != nil {
			return sources.Page{Total: sources.TotalUnknown}, err
		}
		for _, a := range set.Articles {
			if p, ok := a.paper(); ok {
				byPMID[p.PMID] = p
			}
		}
	}
	papers := []research.RawPaper{}
	for _, id := range ids {
		if p, ok := byPMID[id]; ok {
			p.Rank = len(papers) + 1
			papers = append(papers, p)
		}
	}
	if warning != nil && len(papers) > 0 {
		return sources.Page{Papers: papers, Total: sources.AtLeast(total, len(papers))}, &sources.Warning{Message: fmt.Sprintf("PubMed did not run the query as written; the %d papers are for the query it ran", len(papers)), Err: warning}
	}
	return sources.Page{Papers: papers, Total: sources.AtLeast(total, len(papers))}, nil
}

func (c *Client) esearch(ctx context.Context, req sources.SourceRequest) (ids []string, total int, w *QueryWarning, err error) {
	v := url.Values{
		"term":   {req.Query},
		"retmax": {strconv.Itoa(req.MaxResults)},
		// A next page ("Show more") starts at retstart, E-utilities' offset.
		"retstart": {strconv.Itoa(req.Offset)},
		"retmode":  {"json"},
		"sort":     {"relevance"},
	}
	if y := req.YearRange; y.From != 0 || y.To != 0 {
		// mindate and maxdate are only honoured as a pair.
		from, to := 1000, 3000
		if y.From != 0 {
			from = y.From
		}
		if y.To != 0 {
			to = y.To
		}
		v.Set("datetype", "pdat")
		v.Set("mindate", strconv.Itoa(from))
		v.Set("maxdate", strconv.Itoa(to))
	}
	var resp struct {
		Error  string `json:"error"`
		Result *struct {
			Count            string   `json:"count"`
			IDList           []string `json:"idlist"`
			Error            string   `json:"ERROR"`
			QueryTranslation string   `json:"querytranslation"`
			ErrorList        struct {
				PhrasesNotFound []string `json:"phrasesnotfound"`
				FieldsNotFound  []string `json:"fieldsnotfound"`
			} `json:"errorlist"`
			WarningList struct {
				PhrasesIgnored        []string `json:"phrasesignored"`
				QuotedPhrasesNotFound []string `json:"quotedphrasesnotfound"`
				OutputMessages        []string `json:"outputmessages"`
			} `json:"warninglist"`
		} `json:"esearchresult"`
	}
	if err := c.getOrPost(ctx, "esearch.fcgi", v, &resp); err != nil {
		return nil, 0, nil, err
	}
	switch {
	case resp.Error != "":
		return nil, 0, nil, fault.Errorf(fault.EInternal, "pubmed esearch: %s", resp.Error)
	case resp.Result == nil:
		return nil, 0, nil, fault.Errorf(fault.EInternal, "pubmed esearch: unexpected response: no esearchresult")
	case resp.Result.Error != "":
		return nil, 0, nil, fault.Errorf(fault.EInvalid, "pubmed esearch: %s", resp.Result.Error)
	}
	r := resp.Result
	w = &QueryWarning{
		PhrasesNotFound:       nonBlank(r.ErrorList.PhrasesNotFound),
		FieldsNotFound:        nonBlank(r.ErrorList.FieldsNotFound),
		QuotedPhrasesNotFound: nonBlank(r.WarningList.QuotedPhrasesNotFound),
		PhrasesIgnored:        nonBlank(r.WarningList.PhrasesIgnored),
		QueryTranslation:      strings.TrimSpace(r.QueryTranslation),
	}
	for _, m := range nonBlank(r.WarningList.OutputMessages) {
		if m != noItemsFound {
			w.Messages = append(w.Messages, m)
		}
	}
	if w.empty() {
		w = nil
	}
	ids = r.IDList
	if len(ids) > req.MaxResults {
		ids = ids[:req.MaxResults]
	}
	total, err = strconv.Atoi(strings.TrimSpace(r.Count))
	if err != nil {
		total = sources.TotalUnknown
	}
	return ids, total, w, nil
}

// noItemsFound is the output message esearch adds to every search with no
// result, including one it ran exactly as written; it says nothing about
// the query.
const noItemsFound = "No items found."

// QueryWarning is what esearch's errorlist and warninglist say it changed
// in a query instead of failing it. NCBI documents these lists in the
// esearch DTD (ErrorList: PhraseNotFound, FieldNotFound; WarningList:
// PhraseIgnored, QuotedPhraseNotFound, OutputMessage); the JSON keys are
// their lower-cased plurals.
type QueryWarning struct {
	// PhrasesNotFound are terms not in PubMed's index; they were left out of
	// the search, which is then wider than written.
	PhrasesNotFound []string
	// FieldsNotFound are field tags PubMed does not know.
	FieldsNotFound []string
	// QuotedPhrasesNotFound are quoted phrases PubMed could not find; it
	// searched their words separately instead.
	QuotedPhrasesNotFound []string
	// PhrasesIgnored are terms PubMed ignored, such as stop words.
	PhrasesIgnored []string
	// Messages are esearch's other output messages.
	Messages []string
	// QueryTranslation is the query PubMed says it ran, for diagnosis.
	QueryTranslation string
}

func (w *QueryWarning) empty() bool {
	return len(w.PhrasesNotFound)+len(w.FieldsNotFound)+len(w.QuotedPhrasesNotFound)+len(w.PhrasesIgnored)+len(w.Messages) == 0
}

// Error implements error: what changed, in the order that matters most.
func (w *QueryWarning) Error() string {
	var parts []string
	add := func(what string, items []string) {
		if len(items) > 0 {
			parts = append(parts, what+": "+strings.Join(items, ", "))
		}
	}
	add("terms not found, left out", w.PhrasesNotFound)
	add("unknown fields", w.FieldsNotFound)
	add("quoted phrases not found, searched as separate words", w.QuotedPhrasesNotFound)
	add("terms ignored", w.PhrasesIgnored)
	if len(w.Messages) > 0 {
		parts = append(parts, strings.Join(w.Messages, " "))
	}
	return strings.Join(parts, "; ")
}

func nonBlank(items []string) []string {
	var out []string
	for _, s := range items {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// maxGetURL is the longest E-utilities URL sent as a GET; a longer
// request (a search strategy of many terms) is POSTed as a form, as NCBI
// asks for long requests (E-utilities guide, "Usage guidelines").
const maxGetURL = 2000

// getOrPost sends an E-utilities request with v and decodes its JSON
// answer into out: a GET, or a form POST when the URL would be too long.
func (c *Client) getOrPost(ctx context.Context, endpoint string, v url.Values, out any) error {
	u := c.url(endpoint, v)
	if len(u) <= maxGetURL {
		return c.ep.HTTP.GetJSON(ctx, u, nil, out)
	}
	return c.ep.HTTP.DoJSON(ctx, httpclient.Request{URL: c.ep.Base + "/" + endpoint, Form: v}, out)
}

func (c *Client) url(endpoint string, v url.Values) string {
	v.Set("db", "pubmed")
	v.Set("tool", Tool)
	if c.ep.Contact != "" {
		v.Set("email", c.ep.Contact)
	}
	if c.ep.APIKey != "" {
		v.Set("api_key", c.ep.APIKey)
	}
	return c.ep.Base + "/" + endpoint + "?" + v.Encode()
}

type articleSet struct {
	XMLName  xml.Name  `xml:"PubmedArticleSet"`
	Articles []article `xml:"PubmedArticle"`
}

// markup is an element whose text may contain inline tags (<i>, <sup>).
type markup struct {
	Inner string `xml:",innerxml"`
	Label string `xml:"Label,attr"`
}

type article struct {
	PMID    string `xml:"MedlineCitation>PMID"`
	Article struct {
		Journal struct {
			Title string `xml:"Title"`
			Issue struct {
				Volume  string `xml:"Volume"`
				Issue   string `xml:"Issue"`
				PubDate struct {
					Year        string `xml:"Year"`
					MedlineDate string `xml:"MedlineDate"`
				} `xml:"PubDate"`
			} `xml:"JournalIssue"`
		} `xml:"Journal"`
		Title      markup   `xml:"ArticleTitle"`
		Pages      string   `xml:"Pagination>MedlinePgn"`
		Abstract   []markup `xml:"Abstract>AbstractText"`
		ELocations []struct {
			Type  string `xml:"EIdType,attr"`
			Value string `xml:",chardata"`
		} `xml:"ELocationID"`
		Authors []struct {
			LastName       string `xml:"LastName"`
			ForeName       string `xml:"ForeName"`
			Initials       string `xml:"Initials"`
			CollectiveName string `xml:"CollectiveName"`
		} `xml:"AuthorList>Author"`
		ArticleDateYear string `xml:"ArticleDate>Year"`
	} `xml:"MedlineCitation>Article"`
	IDs []struct {
		Type  string `xml:"IdType,attr"`
		Value string `xml:",chardata"`
	} `xml:"PubmedData>ArticleIdList>ArticleId"`
}

var (
	tag       = regexp.MustCompile(`<[^>]*>`)
	firstYear = regexp.MustCompile(`\b(1[0-9]{3}|2[0-9]{3})\b`)
)

// text strips inline markup from innerxml and decodes entities.
func text(s string) string {
	s = tag.ReplaceAllString(s, "")
	return strings.Join(strings.Fields(html.UnescapeString(s)), " ")
}

func (a article) paper() (research.RawPaper, bool) {
	art := a.Article
	p := research.RawPaper{
		Title:  strings.TrimSuffix(text(art.Title.Inner), "."),
		Venue:  text(art.Journal.Title),
		Volume: strings.TrimSpace(art.Journal.Issue.Volume),
		Issue:  strings.TrimSpace(art.Journal.Issue.Issue),
		Pages:  strings.TrimSpace(art.Pages),
		PMID:   strings.TrimSpace(a.PMID),
	}
	// PubMed brackets titles translated into English: "[Sleep and memory]."
	if strings.HasPrefix(p.Title, "[") && strings.HasSuffix(p.Title, "]") {
		p.Title = strings.TrimSuffix(strings.TrimPrefix(p.Title, "["), "]")
	}
	if p.Title == "" || p.PMID == "" {
		return research.RawPaper{}, false
	}
	p.URL = "https://pubmed.ncbi.nlm.nih.gov/" + p.PMID + "/"
	var parts []string
	for _, ab := range art.Abstract {
		t := text(ab.Inner)
		if t == "" {
			continue
		}
		if ab.Label != "" && !strings.EqualFold(ab.Label, "UNLABELLED") {
			t = ab.Label + ": " + t
		}
		parts = append(parts, t)
	}
	p.Abstract = strings.Join(parts, "\n")
	for _, y := range []string{art.Journal.Issue.PubDate.Year, art.Journal.Issue.PubDate.MedlineDate, art.ArticleDateYear} {
		if m := firstYear.FindString(y); m != "" {
			p.Year, _ = strconv.Atoi(m)
			break
		}
	}
	for _, au := range art.Authors {
		given, family := strings.TrimSpace(au.ForeName), strings.TrimSpace(au.LastName)
		if given == "" {
			given = strings.TrimSpace(au.Initials)
		}
		name := strings.TrimSpace(given + " " + family)
		split := research.AuthorName{Family: family, Given: given}
		if name == "" {
			name = text(au.CollectiveName)
			split = research.AuthorName{Literal: name} // a group author
		} else if family == "" {
			split = research.AuthorName{Family: given}
		}
		if name != "" {
			p.Authors = append(p.Authors, name)
			p.AuthorNames = append(p.AuthorNames, split)
		}
	}
	for _, id := range a.IDs {
		if id.Type == "doi" {
			p.DOI = research.NormalizeDOI(id.Value)
		}
	}
	for _, el := range art.ELocations {
		if p.DOI == "" && el.Type == "doi" {
			p.DOI = research.NormalizeDOI(el.Value)
		}
	}
	return p, true
}
