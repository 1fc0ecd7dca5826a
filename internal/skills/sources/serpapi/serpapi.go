// Package serpapi searches Google Scholar through SerpAPI
// (https://serpapi.com/google-scholar-api), a paid proxy: Google Scholar has
// no API of its own, and its coverage of books, theses and grey literature
// complements the open catalogues.
package serpapi

import (
	"context"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/sources"
	"quarry/internal/skills/sources/httpclient"
)

// DefaultBaseURL is the public API.
const DefaultBaseURL = "https://serpapi.com"

// perPage is the most results Google Scholar returns per page.
const perPage = 20

// DefaultMaxPages bounds paging because every page costs one paid search.
const DefaultMaxPages = 5

// Options configure a Client.
type Options struct {
	// BaseURL defaults to DefaultBaseURL.
	BaseURL string
	// APIKey is required: SerpAPI bills per search against it.
	APIKey string
	// MaxPages caps pages (of 20) fetched per query; 0 means DefaultMaxPages.
	MaxPages int
	// Contact identifies us in User-Agent when HTTP is nil.
	Contact string
	// HTTP is the polite client; nil builds one with Contact and RateLimit.
	HTTP *httpclient.Client
}

// Client is the SerpAPI Google Scholar Source.
type Client struct {
	ep       httpclient.Endpoint
	maxPages int
}

var _ sources.Counter = (*Client)(nil)

// New returns a Client, or EInvalid without an API key, so a missing key is
// reported when the source is configured rather than as a search failure.
func New(opts Options) (*Client, error) {
	ep, err := httpclient.NewEndpoint(research.SourceSerpAPIScholar, DefaultBaseURL,
		httpclient.EndpointOptions{BaseURL: opts.BaseURL, Contact: opts.Contact, APIKey: opts.APIKey, HTTP: opts.HTTP}, RateLimit)
	if err != nil {
		return nil, err
	}
	if ep.APIKey == "" {
		return nil, &fault.Error{Code: fault.EInvalid, Message: "serpapi_scholar: an API key is required", Fields: map[string]string{"api_key": "SerpAPI needs an API key (https://serpapi.com/manage-api-key)"}}
	}
	pages := opts.MaxPages
	if pages <= 0 {
		pages = DefaultMaxPages
	}
	return &Client{ep: ep, maxPages: pages}, nil
}

// RateLimit imposes nothing: SerpAPI documents no per-second limit (a plan
// caps searches per month and per hour, and a search over the quota is
// refused with an error the client reports), and each search is billed, so
// the strategy's per-source cap, not a rate, is what bounds its cost.
func RateLimit(contact, apiKey string) httpclient.Limit { return httpclient.Limit{} }

// Name implements sources.Source.
func (c *Client) Name() string { return research.SourceSerpAPIScholar }

// Search implements sources.Source: SearchCounted without the total.
func (c *Client) Search(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
	p, err := c.SearchCounted(ctx, req)
	return p.Papers, err
}

// SearchCounted implements sources.Counter, paging 20 at a time up to
// min(req.MaxResults, 20 × MaxPages); the total is Google Scholar's own
// estimate, search_information.total_results.
func (c *Client) SearchCounted(ctx context.Context, req sources.SourceRequest) (sources.Page, error) {
	if err := req.Check(c.Name()); err != nil {
		return sources.Page{Total: sources.TotalUnknown}, err
	}
	limit := min(req.MaxResults, perPage*c.maxPages)
	total := sources.TotalUnknown
	papers := []research.RawPaper{}
	for start := req.Offset; len(papers) < limit; start += perPage {
		var resp response
		if err := c.ep.HTTP.GetJSON(ctx, c.url(req, start, min(perPage, limit-len(papers))), nil, &resp); err != nil {
			return sources.Page{Total: sources.TotalUnknown}, err
		}
		if resp.Error != "" {
			if strings.Contains(resp.Error, "hasn't returned any results") {
				if start == req.Offset && start == 0 {
					total = 0 // Google Scholar says so: nothing matches
				}
				break
			}
			return sources.Page{Total: sources.TotalUnknown}, fault.Errorf(fault.EInternal, "serpapi_scholar: %s", resp.Error)
		}
		if resp.Metadata.Status != "" && resp.Metadata.Status != "Success" {
			return sources.Page{Total: sources.TotalUnknown}, fault.Errorf(fault.EInternal, "serpapi_scholar: search status %q", resp.Metadata.Status)
		}
		if start == req.Offset && resp.Info.TotalResults != nil {
			total = *resp.Info.TotalResults
		}
		for _, r := range resp.Organic {
			if p, ok := r.paper(); ok && len(papers) < limit {
				p.Rank = len(papers) + 1
				papers = append(papers, p)
			}
		}
		if len(resp.Organic) < perPage || resp.Pagination.Next == "" {
			break
		}
	}
	return sources.Page{Papers: papers, Total: sources.AtLeast(total, len(papers))}, nil
}

func (c *Client) url(req sources.SourceRequest, start, num int) string {
	v := url.Values{}
	v.Set("engine", "google_scholar")
	v.Set("q", req.Query)
	v.Set("api_key", c.ep.APIKey)
	v.Set("num", strconv.Itoa(num))
	if start > 0 {
		v.Set("start", strconv.Itoa(start))
	}
	if req.YearRange.From != 0 {
		v.Set("as_ylo", strconv.Itoa(req.YearRange.From))
	}
	if req.YearRange.To != 0 {
		v.Set("as_yhi", strconv.Itoa(req.YearRange.To))
	}
	return c.ep.Base + "/search.json?" + v.Encode()
}

type response struct {
	Metadata struct {
		Status string `json:"status"`
	} `json:"search_metadata"`
	Organic []result `json:"organic_results"`
	Info    struct {
		TotalResults *int `json:"total_results"`
	} `json:"search_information"`
	Pagination struct {
		Next string `json:"next"`
	} `json:"serpapi_pagination"`
	Error string `json:"error"`
}

type result struct {
	Title    string `json:"title"`
	ResultID string `json:"result_id"`
	Link     string `json:"link"`
	Snippet  string `json:"snippet"`
	PubInfo  struct {
		Summary string `json:"summary"`
	} `json:"publication_info"`
	Resources []struct {
		Link string `json:"link"`
	} `json:"resources"`
}

var (
	yearAtEnd = regexp.MustCompile(`(?:^|,\s*)(1[5-9]\d\d|20\d\d)\s*$`)
	arxivLink = regexp.MustCompile(`arxiv\.org/(?:abs|pdf)/([^?#\s]+?)(?:\.pdf)?$`)
	doiLink   = regexp.MustCompile(`(?i)(?:doi\.org/|/doi/(?:abs/|full/|pdf/|epdf/)?)(10\.\d{4,9}/[^?#\s]+)`)
)

func (r result) paper() (research.RawPaper, bool) {
	title := strings.Join(strings.Fields(r.Title), " ")
	if title == "" {
		return research.RawPaper{}, false
	}
	authors, venue, year := ParseSummary(r.PubInfo.Summary)
	p := research.RawPaper{
		Title:    title,
		Authors:  authors,
		Venue:    venue,
		Year:     year,
		Abstract: strings.Join(strings.Fields(r.Snippet), " "),
		URL:      r.Link,
	}
	links := []string{r.Link}
	for _, res := range r.Resources {
		links = append(links, res.Link)
	}
	for _, l := range links {
		if m := arxivLink.FindStringSubmatch(l); m != nil && p.ArxivID == "" {
			p.ArxivID = research.NormalizeArxivID(m[1])
		}
		if m := doiLink.FindStringSubmatch(l); m != nil && p.DOI == "" {
			p.DOI = research.NormalizeDOI(strings.TrimSuffix(m[1], ".pdf"))
		}
	}
	return p, true
}

// ParseSummary reads Google Scholar's one-line citation,
// "A Author, B Author - Venue, 2019 - publisher.com", into authors, venue and
// year. Scholar marks a truncated author list or venue with "…": the mark
// is removed from the last author kept, and a venue keeps it, since a
// shortened venue is still better than none.
func ParseSummary(s string) (authors []string, venue string, year int) {
	parts := strings.Split(s, " - ")
	if len(parts) == 0 || strings.TrimSpace(s) == "" {
		return nil, "", 0
	}
	for _, a := range strings.Split(parts[0], ",") {
		a = strings.TrimSpace(a)
		if a == "" || a == "…" || a == "..." {
			continue
		}
		if strings.HasSuffix(a, "…") {
			a = strings.TrimSpace(strings.TrimSuffix(a, "…"))
			if a == "" {
				continue
			}
		}
		authors = append(authors, a)
	}
	if len(parts) < 2 {
		return authors, "", 0
	}
	mid := strings.TrimSpace(parts[1])
	if m := yearAtEnd.FindStringSubmatchIndex(mid); m != nil {
		year, _ = strconv.Atoi(mid[m[2]:m[3]])
		mid = strings.TrimSpace(mid[:m[0]])
	}
	return authors, mid, year
}
