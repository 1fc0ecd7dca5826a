// Package semanticscholar searches Semantic Scholar's Academic Graph API
// (https://api.semanticscholar.org/api-docs/graph) through its bulk paper
// search, which returns up to 1000 papers per call and accepts boolean
// query syntax.
package semanticscholar

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"quarry/internal/engine"
	"quarry/internal/skills"
	"quarry/internal/skills/sources/httpclient"
)

// DefaultBaseURL is the public API.
const DefaultBaseURL = "https://api.semanticscholar.org"

// fields are the paper fields requested; anything else costs bandwidth.
const fields = "title,authors,year,venue,abstract,externalIds,url"

// Options configure a Client.
type Options struct {
	// BaseURL defaults to DefaultBaseURL.
	BaseURL string
	// APIKey is optional; sent as x-api-key it raises the rate limit above
	// the shared unauthenticated pool.
	APIKey string
	// Contact identifies us in User-Agent when HTTP is nil.
	Contact string
	// HTTP is the polite client; nil builds one with Contact and RateLimit.
	HTTP *httpclient.Client
}

// Client is the Semantic Scholar Source.
type Client struct {
	base   string
	apiKey string
	http   *httpclient.Client
}

var _ skills.Source = (*Client)(nil)

// New returns a Client.
func New(opts Options) (*Client, error) {
	ep, err := httpclient.NewEndpoint(skills.SourceSemanticScholar, opts.BaseURL, DefaultBaseURL, opts.Contact, opts.APIKey, opts.HTTP, RateLimit)
	if err != nil {
		return nil, err
	}
	return &Client{base: ep.Base, apiKey: ep.APIKey, http: ep.HTTP}, nil
}

// RateLimit is one request per second. An API key's introductory rate is 1
// request/s on all endpoints; without a key, requests share one pool with
// every other unauthenticated caller and are throttled when it is busy, so
// going faster would only earn 429s
// (https://www.semanticscholar.org/product/api, "Rate limits").
func RateLimit(contact, apiKey string) httpclient.Limit {
	return httpclient.Limit{Every: time.Second, Burst: 1}
}

// Name implements skills.Source.
func (c *Client) Name() string { return skills.SourceSemanticScholar }

// Search implements skills.Source. Bulk search has no page size; it returns
// batches of up to 1000 and a continuation token, followed until
// req.MaxResults papers are in hand.
func (c *Client) Search(ctx context.Context, req skills.SourceRequest) ([]skills.RawPaper, error) {
	if err := req.Check(c.Name()); err != nil {
		return nil, err
	}
	var header http.Header
	if c.apiKey != "" {
		header = http.Header{"x-api-key": {c.apiKey}}
	}
	papers := []skills.RawPaper{}
	token := ""
	for {
		var resp response
		if err := c.http.GetJSON(ctx, c.url(req, token), header, &resp); err != nil {
			return nil, err
		}
		if resp.Data == nil && resp.Total != 0 {
			return nil, engine.Errorf(engine.EInternal, "semantic_scholar: unexpected response: total %d but no data", resp.Total)
		}
		for _, d := range resp.Data {
			if p, ok := d.paper(); ok && len(papers) < req.MaxResults {
				p.Rank = len(papers) + 1
				papers = append(papers, p)
			}
		}
		if len(papers) >= req.MaxResults || resp.Token == "" || len(resp.Data) == 0 {
			return papers, nil
		}
		token = resp.Token
	}
}

func (c *Client) url(req skills.SourceRequest, token string) string {
	v := url.Values{}
	v.Set("query", req.Query)
	v.Set("fields", fields)
	if y := years(req.YearRange); y != "" {
		v.Set("year", y)
	}
	if token != "" {
		v.Set("token", token)
	}
	return c.base + "/graph/v1/paper/search/bulk?" + v.Encode()
}

// years renders the documented year filter: "2015-2020", "2015-", "-2020".
func years(y skills.YearRange) string {
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

type response struct {
	Total int     `json:"total"`
	Token string  `json:"token"`
	Data  []paper `json:"data"`
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

func (d paper) paper() (skills.RawPaper, bool) {
	title := strings.Join(strings.Fields(d.Title), " ")
	if title == "" {
		return skills.RawPaper{}, false
	}
	p := skills.RawPaper{
		Title:    title,
		Year:     d.Year,
		Venue:    strings.TrimSpace(d.Venue),
		Abstract: strings.TrimSpace(d.Abstract),
		DOI:      skills.NormalizeDOI(d.ExternalIDs.DOI),
		ArxivID:  skills.NormalizeArxivID(d.ExternalIDs.ArXiv),
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
