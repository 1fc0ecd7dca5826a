// Package openalex searches OpenAlex (https://docs.openalex.org), the open
// catalogue of scholarly works, through its /works endpoint.
package openalex

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/httpclient"
)

// DefaultBaseURL is the public API.
const DefaultBaseURL = "https://api.openalex.org"

// perPageMax is the largest page OpenAlex serves: per_page is 1–100
// (https://developers.openalex.org/guides/paging); 200 was once allowed
// and is now an error.
const perPageMax = 100

// MaxURLBytes is the longest request URL OpenAlex accepts: "the whole
// request URL is limited to about 4 KB", answered with a 400 "over the
// 4094-byte limit" (https://developers.openalex.org/guides/searching,
// "Large Boolean queries"). A longer request is refused before it is
// sent, with a message that says how to shorten it.
const MaxURLBytes = 4094

// Options configure a Client. APIKey is required: OpenAlex has required a
// key since 13 February 2026, and without one the daily allowance covers
// about ten searches (https://developers.openalex.org/guides/authentication).
// It is sent as api_key. Contact is sent as mailto, which identifies us.
type Options httpclient.EndpointOptions

// Client is the OpenAlex Source.
type Client struct {
	ep httpclient.Endpoint
}

var _ sources.Counter = (*Client)(nil)

// New returns a Client.
func New(opts Options) (*Client, error) {
	ep, err := httpclient.NewEndpoint(research.SourceOpenAlex, DefaultBaseURL, httpclient.EndpointOptions(opts), RateLimit)
	if err != nil {
		return nil, err
	}
	if ep.APIKey == "" {
		return nil, fault.Errorf(fault.EInvalid, "openalex: an API key is required (OpenAlex has required one since 13 February 2026; a free key is at https://openalex.org/settings/api)")
	}
	return &Client{ep: ep}, nil
}

// classify gives OpenAlex's statuses the meaning its documentation gives
// them (https://developers.openalex.org/api-reference/errors): 403 is
// "rate limit exceeded; slow down", retried like any rate limit, not an
// authorisation failure; 429 is "daily limit exceeded", which no retry
// within a search can cure, so it is not retried and says so, unless the
// server names a wait short enough to make (a Retry-After that the
// client's MaxWait allows; the client gives up at once on a longer one).
func classify(r httpclient.Response) (httpclient.Verdict, bool) {
	switch r.Status {
	case http.StatusForbidden:
		return httpclient.Verdict{Code: fault.EInternal, Retry: true, Reason: "rate limit exceeded (OpenAlex answers 403 to requests sent too fast)"}, true
	case http.StatusTooManyRequests:
		if r.Header.Get("Retry-After") != "" && !dailyLimit(r.Body) {
			return httpclient.Verdict{Code: fault.EInternal, Retry: true, Reason: "too many requests"}, true
		}
		return httpclient.Verdict{Code: fault.EInternal, Reason: DailyLimitReason}, true
	}
	return httpclient.Verdict{}, false
}

// DailyLimitReason is what a search says when OpenAlex's daily allowance
// for the key is used up; the searcher shows it as the source's error.
const DailyLimitReason = "OpenAlex's daily allowance for this API key is used up (429); not retried: OpenAlex answers no search with this key until the allowance resets"

// dailyLimit reports whether a 429's body says the daily allowance (not
// the per-second rate) was exceeded.
func dailyLimit(body []byte) bool {
	b := strings.ToLower(string(body))
	return strings.Contains(b, "daily") || strings.Contains(b, "credits") || strings.Contains(b, "allowance") || strings.Contains(b, "budget")
}

// RateLimit is 10 requests/s, OpenAlex's long-documented per-second limit
// (https://docs.openalex.org/how-to-use-the-api/rate-limits-and-authentication;
// the current pages allow up to 100/s and meter the rest as a daily
// budget, so 10/s stays well inside either).
func RateLimit(contact, apiKey string) httpclient.Limit {
	return httpclient.Limit{Every: 100 * time.Millisecond, Burst: 1}
}

// Name implements sources.Source.
func (c *Client) Name() string { return research.SourceOpenAlex }

// Search implements sources.Source: SearchCounted without the total.
func (c *Client) Search(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
	p, err := c.SearchCounted(ctx, req)
	return p.Papers, err
}

// SearchCounted implements sources.Counter, paging (page, per-page) from
// req.Offset until req.MaxResults works or the results run out; the total
// is meta.count.
func (c *Client) SearchCounted(ctx context.Context, req sources.SourceRequest) (sources.Page, error) {
	if err := req.Check(c.Name()); err != nil {
		return sources.Page{Total: sources.TotalUnknown}, err
	}
	total := sources.TotalUnknown
	perPage := min(req.MaxResults, perPageMax)
	papers := []research.RawPaper{}
	// A next page ("Show more") starts at req.Offset: OpenAlex pages by
	// number, so the page holding it is asked and the records before it
	// on that page dropped (none after full pages).
	first, skip := sources.PageOf(req.Offset, perPage)
	for page := first; len(papers) < req.MaxResults; page++ {
		u := c.url(req, perPage, page)
		if len(u) > MaxURLBytes {
			return sources.Page{Total: sources.TotalUnknown}, fault.Errorf(fault.EInvalid,
				"openalex: the query is too long for OpenAlex: its request would be %d bytes, over OpenAlex's limit of %d; write fewer alternatives (OR terms) in the query, or split it into several queries",
				len(u), MaxURLBytes)
		}
		var resp response
		if err := c.ep.HTTP.DoJSON(ctx, httpclient.Request{URL: u, Classify: classify}, &resp); err != nil {
			return sources.Page{Total: sources.TotalUnknown}, err
		}
		if resp.Results == nil {
			return sources.Page{Total: sources.TotalUnknown}, fault.Errorf(fault.EInternal, "openalex: unexpected response: no results field")
		}
		if page == first && resp.Meta.Count != nil {
			total = *resp.Meta.Count
		}
		results := resp.Results
		if page == first {
			results = results[min(skip, len(results)):]
		}
		for _, w := range results {
			if p, ok := w.paper(); ok && len(papers) < req.MaxResults {
				p.Rank = len(papers) + 1
				papers = append(papers, p)
			}
		}
		if len(resp.Results) < perPage || page*perPage >= total {
			break
		}
	}
	return sources.Page{Papers: papers, Total: sources.AtLeast(total, len(papers))}, nil
}

// url builds one page's request. The query is sent as the
// title_and_abstract.search filter, not as search: search also matches
// the full text, so a positive term found only in a paper's body made it
// a match and a NOT term in its body dropped it. Results are sorted by
// relevance_score, which a search filter provides as search does
// (https://developers.openalex.org/guides/sort). The query's commas and
// vertical bars, which separate filters and a filter's alternatives, are
// sent as spaces, which OpenAlex's search reads them as anyway. The
// strategy's fields of study are not
// sent: OpenAlex filters works by field only by ID (primary_topic.field.id,
// topics.field.id) over its own 26 fields, a different taxonomy from the
// Semantic Scholar names strategies use ("Biology" spreads over several,
// "Sociology", "Education" and "Law" share "Social Sciences"), so a name
// would have to be guessed into IDs and would drop papers it should keep.
func (c *Client) url(req sources.SourceRequest, perPage, page int) string {
	v := url.Values{}
	filters := []string{"title_and_abstract.search:" + FilterText(req.Query)}
	if req.YearRange.From != 0 {
		filters = append(filters, fmt.Sprintf("from_publication_date:%04d-01-01", req.YearRange.From))
	}
	if req.YearRange.To != 0 {
		filters = append(filters, fmt.Sprintf("to_publication_date:%04d-12-31", req.YearRange.To))
	}
	v.Set("filter", strings.Join(filters, ","))
	v.Set("sort", "relevance_score:desc")
	v.Set("per_page", strconv.Itoa(perPage))
	v.Set("page", strconv.Itoa(page))
	v.Set("select", "id,doi,title,display_name,publication_year,authorships,primary_location,locations,abstract_inverted_index,ids,biblio")
	if c.ep.Contact != "" {
		v.Set("mailto", c.ep.Contact)
	}
	if c.ep.APIKey != "" {
		v.Set("api_key", c.ep.APIKey)
	}
	return c.ep.Base + "/works?" + v.Encode()
}

// FilterText is q as a search filter's value: commas and vertical bars,
// which the filter syntax reserves, become spaces.
func FilterText(q string) string {
	return strings.Join(strings.Fields(strings.NewReplacer(",", " ", "|", " ").Replace(q)), " ")
}

type response struct {
	Meta struct {
		Count *int `json:"count"`
	} `json:"meta"`
	Results []work `json:"results"`
}

type location struct {
	LandingPageURL string `json:"landing_page_url"`
	Source         *struct {
		DisplayName string `json:"display_name"`
	} `json:"source"`
}

type work struct {
	ID          string `json:"id"`
	DOI         string `json:"doi"`
	Title       string `json:"title"`
	DisplayName string `json:"display_name"`
	Year        int    `json:"publication_year"`
	Authorships []struct {
		Author struct {
			DisplayName string `json:"display_name"`
		} `json:"author"`
		RawAuthorName string `json:"raw_author_name"`
	} `json:"authorships"`
	PrimaryLocation *location        `json:"primary_location"`
	Locations       []location       `json:"locations"`
	Abstract        map[string][]int `json:"abstract_inverted_index"`
	IDs             struct {
		PMID string `json:"pmid"`
	} `json:"ids"`
	Biblio struct {
		Volume    string `json:"volume"`
		Issue     string `json:"issue"`
		FirstPage string `json:"first_page"`
		LastPage  string `json:"last_page"`
	} `json:"biblio"`
}

var (
	arxivURL  = regexp.MustCompile(`arxiv\.org/(?:abs|pdf)/([^?#\s]+?)(?:\.pdf)?$`)
	arxivDOI  = regexp.MustCompile(`(?i)^10\.48550/arxiv\.(.+)$`)
	pmidInURL = regexp.MustCompile(`(\d+)/?$`)
)

func (w work) paper() (research.RawPaper, bool) {
	title := strings.TrimSpace(w.Title)
	if title == "" {
		title = strings.TrimSpace(w.DisplayName)
	}
	if title == "" {
		return research.RawPaper{}, false
	}
	p := research.RawPaper{
		Title:    title,
		Year:     w.Year,
		Abstract: Abstract(w.Abstract),
		DOI:      research.NormalizeDOI(w.DOI),
		Volume:   w.Biblio.Volume,
		Issue:    w.Biblio.Issue,
		Pages:    pages(w.Biblio.FirstPage, w.Biblio.LastPage),
		URL:      w.ID,
	}
	for _, a := range w.Authorships {
		name := strings.TrimSpace(a.Author.DisplayName)
		if name == "" {
			name = strings.TrimSpace(a.RawAuthorName)
		}
		if name != "" {
			p.Authors = append(p.Authors, name)
		}
	}
	if pl := w.PrimaryLocation; pl != nil {
		if pl.Source != nil {
			p.Venue = pl.Source.DisplayName
		}
		if pl.LandingPageURL != "" {
			p.URL = pl.LandingPageURL
		}
	}
	if m := arxivDOI.FindStringSubmatch(p.DOI); m != nil {
		p.ArxivID = research.NormalizeArxivID(m[1])
	}
	for _, l := range w.Locations {
		if p.ArxivID != "" {
			break
		}
		if m := arxivURL.FindStringSubmatch(l.LandingPageURL); m != nil {
			p.ArxivID = research.NormalizeArxivID(m[1])
		}
	}
	if m := pmidInURL.FindStringSubmatch(w.IDs.PMID); m != nil {
		p.PMID = m[1]
	}
	return p, true
}

func pages(first, last string) string {
	switch {
	case first == "":
		return ""
	case last == "" || last == first:
		return first
	}
	return first + "-" + last
}

// Abstract rebuilds text from OpenAlex's abstract_inverted_index (word →
// positions), the form OpenAlex publishes abstracts in for licensing reasons.
func Abstract(index map[string][]int) string {
	type at struct {
		pos  int
		word string
	}
	var words []at
	for w, ps := range index {
		for _, p := range ps {
			if p >= 0 {
				words = append(words, at{p, w})
			}
		}
	}
	sort.Slice(words, func(i, j int) bool {
		if words[i].pos != words[j].pos {
			return words[i].pos < words[j].pos
		}
		return words[i].word < words[j].word
	})
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = w.word
	}
	return strings.Join(parts, " ")
}
