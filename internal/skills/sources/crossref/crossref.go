// Package crossref searches the Crossref REST API (https://api.crossref.org),
// the registry of DOIs, through bibliographic query on /works.
package crossref

import (
	"context"
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

// DefaultBaseURL is the public API.
const DefaultBaseURL = "https://api.crossref.org"

// maxRows is the largest page Crossref serves.
const maxRows = 1000

// selectFields keeps responses small; every name is a documented select field.
const selectFields = "DOI,title,author,container-title,issued,published-print,published-online,abstract,URL,volume,issue,page"

// Options configure a Client.
type Options struct {
	// BaseURL defaults to DefaultBaseURL.
	BaseURL string
	// Contact is sent as mailto, which routes requests to Crossref's polite pool.
	Contact string
	// HTTP is the polite client; nil builds one with Contact and RateLimit.
	HTTP *httpclient.Client
}

// Client is the Crossref Source.
type Client struct {
	ep httpclient.Endpoint
}

var _ sources.Counter = (*Client)(nil)

// New returns a Client.
func New(opts Options) (*Client, error) {
	ep, err := httpclient.NewEndpoint(research.SourceCrossref, DefaultBaseURL,
		httpclient.EndpointOptions{BaseURL: opts.BaseURL, Contact: opts.Contact, HTTP: opts.HTTP}, RateLimit)
	if err != nil {
		return nil, err
	}
	return &Client{ep: ep}, nil
}

// RateLimit keeps to Crossref's limits for list requests (queries), which
// since 1 December 2025 are 3 requests/s with 3 in flight in the polite
// pool (requests naming a contact address) and 1 request/s with 1 in
// flight in the public pool
// (https://www.crossref.org/blog/announcing-changes-to-rest-api-rate-limits/);
// the x-rate-limit-* headers of a response give the limit in force.
func RateLimit(contact, apiKey string) httpclient.Limit {
	if contact == "" {
		return httpclient.Limit{Every: time.Second, Burst: 1, Concurrent: 1}
	}
	return httpclient.Limit{Every: 334 * time.Millisecond, Burst: 1, Concurrent: 3}
}

// Name implements sources.Source.
func (c *Client) Name() string { return research.SourceCrossref }

// Search implements sources.Source: SearchCounted without the total.
func (c *Client) Search(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
	p, err := c.SearchCounted(ctx, req)
	return p.Papers, err
}

// SearchCounted implements sources.Counter; the total is the message's
// total-results.
func (c *Client) SearchCounted(ctx context.Context, req sources.SourceRequest) (sources.Page, error) {
	if err := req.Check(c.Name()); err != nil {
		return sources.Page{Total: sources.TotalUnknown}, err
	}
	v := url.Values{}
	v.Set("query.bibliographic", req.Query)
	v.Set("rows", strconv.Itoa(min(req.MaxResults, maxRows)))
	if req.Offset > 0 {
		// A next page ("Show more"): Crossref documents offset for the
		// first 10,000 results (deeper needs a cursor, which a review
		// never reaches).
		v.Set("offset", strconv.Itoa(req.Offset))
	}
	var filters []string
	if req.YearRange.From != 0 {
		filters = append(filters, fmt.Sprintf("from-pub-date:%04d-01-01", req.YearRange.From))
	}
	if req.YearRange.To != 0 {
		filters = append(filters, fmt.Sprintf("until-pub-date:%04d-12-31", req.YearRange.To))
	}
	if len(filters) > 0 {
		v.Set("filter", strings.Join(filters, ","))
	}
	v.Set("select", selectFields)
	if c.ep.Contact != "" {
		v.Set("mailto", c.ep.Contact)
	}
	var resp response
	if err := c.ep.HTTP.GetJSON(ctx, c.ep.Base+"/works?"+v.Encode(), nil, &resp); err != nil {
		return sources.Page{Total: sources.TotalUnknown}, err
	}
	if resp.Status != "ok" || resp.Message.Items == nil {
		return sources.Page{Total: sources.TotalUnknown}, fault.Errorf(fault.EInternal, "crossref: unexpected response: status %q, message-type %q", resp.Status, resp.MessageType)
	}
	papers := []research.RawPaper{}
	for _, it := range resp.Message.Items {
		if p, ok := it.paper(); ok && len(papers) < req.MaxResults {
			p.Rank = len(papers) + 1
			papers = append(papers, p)
		}
	}
	return sources.Page{Papers: papers, Total: sources.AtLeast(resp.Message.TotalResults, len(papers))}, nil
}

type response struct {
	Status      string `json:"status"`
	MessageType string `json:"message-type"`
	Message     struct {
		TotalResults int    `json:"total-results"`
		Items        []item `json:"items"`
	} `json:"message"`
}

// date is Crossref's {"date-parts": [[2019, 5, 3]]}; parts may be null.
type date struct {
	Parts [][]*int `json:"date-parts"`
}

func (d *date) year() int {
	if d == nil || len(d.Parts) == 0 || len(d.Parts[0]) == 0 || d.Parts[0][0] == nil {
		return 0
	}
	return *d.Parts[0][0]
}

type item struct {
	DOI       string   `json:"DOI"`
	Title     []string `json:"title"`
	Container []string `json:"container-title"`
	Author    []struct {
		Given  string `json:"given"`
		Family string `json:"family"`
		Name   string `json:"name"`
	} `json:"author"`
	Issued          *date  `json:"issued"`
	PublishedPrint  *date  `json:"published-print"`
	PublishedOnline *date  `json:"published-online"`
	Abstract        string `json:"abstract"`
	URL             string `json:"URL"`
	Volume          string `json:"volume"`
	Issue           string `json:"issue"`
	Page            string `json:"page"`
}

func (it item) paper() (research.RawPaper, bool) {
	title := ""
	if len(it.Title) > 0 {
		title = StripMarkup(it.Title[0])
	}
	if title == "" {
		return research.RawPaper{}, false
	}
	p := research.RawPaper{
		Title:    title,
		Abstract: StripMarkup(jatsTitle.ReplaceAllString(it.Abstract, " ")),
		DOI:      research.NormalizeDOI(it.DOI),
		URL:      it.URL,
		Volume:   it.Volume,
		Issue:    it.Issue,
		Pages:    it.Page,
	}
	if len(it.Container) > 0 {
		p.Venue = StripMarkup(it.Container[0])
	}
	for _, d := range []*date{it.Issued, it.PublishedPrint, it.PublishedOnline} {
		if y := d.year(); y != 0 {
			p.Year = y
			break
		}
	}
	for _, a := range it.Author {
		given, family := strings.TrimSpace(a.Given), strings.TrimSpace(a.Family)
		name := strings.TrimSpace(given + " " + family)
		split := research.AuthorName{Family: family, Given: given}
		if name == "" {
			name = strings.TrimSpace(a.Name)
			split = research.AuthorName{Literal: name} // an organisation
		} else if family == "" {
			split = research.AuthorName{Family: given} // a one-part name
		}
		if name != "" {
			p.Authors = append(p.Authors, name)
			p.AuthorNames = append(p.AuthorNames, split)
		}
	}
	return p, true
}

var (
	// jatsTitle drops section headings such as <jats:title>Abstract</jats:title>,
	// which would otherwise start every abstract with the word "Abstract".
	jatsTitle = regexp.MustCompile(`(?s)<jats:title>.*?</jats:title>`)
	// inlineTag marks up part of a word (CO<sub>2</sub>) and must vanish
	// without a space; any other tag separates blocks and becomes one.
	inlineTag = regexp.MustCompile(`</?(?:jats:|mml:)?(?:sub|sup|i|b|em|strong|italic|bold|sc|underline|monospace|span|u)(?:\s[^>]*)?>`)
	tag       = regexp.MustCompile(`<[^>]*>`)
)

// StripMarkup turns Crossref's JATS/HTML fragments (abstracts, titles with
// <i> or <sub>) into plain text: tags become spaces, entities are decoded
// and whitespace is collapsed.
func StripMarkup(s string) string {
	s = inlineTag.ReplaceAllString(s, "")
	s = tag.ReplaceAllString(s, " ")
	s = html.UnescapeString(s)
	s = strings.Join(strings.Fields(s), " ")
	// A tag between a word and its punctuation leaves a stray space.
	for _, p := range []string{".", ",", ";", ":", ")"} {
		s = strings.ReplaceAll(s, " "+p, p)
	}
	return strings.ReplaceAll(s, "( ", "(")
}
