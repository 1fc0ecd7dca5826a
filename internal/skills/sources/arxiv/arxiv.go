// Package arxiv searches the arXiv preprint server through its Atom API
// (https://info.arxiv.org/help/api/user-manual.html).
package arxiv

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
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

// DefaultBaseURL is the public API host.
const DefaultBaseURL = "https://export.arxiv.org"

// firstSubmission is submittedDate's lower bound for a range open at its
// start: January 1991, before arXiv's first paper.
const firstSubmission = "199101010000"

// maxPerCall is the largest max_results arXiv serves in one response.
const maxPerCall = 2000

// DefaultMaxQueueWait bounds how long one query waits for its turn under
// RateLimit. Every search on the server shares arXiv's one request per
// 3 s, and a search job has no deadline, so without a bound a query
// behind many runs' queries would wait as long as the queue is. Five
// minutes is a hundred requests ahead, twenty times a whole strategy's
// (at most five queries, 15 s): a queue that long is a pile-up, which the
// researcher is better told of than left waiting on.
const DefaultMaxQueueWait = 5 * time.Minute

// Options configure a Client.
type Options struct {
	// BaseURL defaults to DefaultBaseURL.
	BaseURL string
	// Contact identifies us in User-Agent when HTTP is nil.
	Contact string
	// HTTP is the polite client; nil builds one with Contact and RateLimit.
	HTTP *httpclient.Client
	// MaxQueueWait bounds one query's wait for its turn under RateLimit
	// when HTTP is nil (a given client keeps its own Limit); 0 means
	// DefaultMaxQueueWait.
	MaxQueueWait time.Duration
}

// Client is the arXiv Source.
type Client struct {
	ep httpclient.Endpoint
}

var (
	_ sources.Source      = (*Client)(nil)
	_ sources.QueryFolder = (*Client)(nil)
)

// New returns a Client.
func New(opts Options) (*Client, error) {
	limit := func(contact, apiKey string) httpclient.Limit {
		l := RateLimit(contact, apiKey)
		if opts.MaxQueueWait > 0 {
			l.MaxQueueWait = opts.MaxQueueWait
		}
		return l
	}
	ep, err := httpclient.NewEndpoint(research.SourceArxiv, DefaultBaseURL,
		httpclient.EndpointOptions{BaseURL: opts.BaseURL, Contact: opts.Contact, HTTP: opts.HTTP}, limit)
	if err != nil {
		return nil, err
	}
	return &Client{ep: ep}, nil
}

// RateLimit is what arXiv's API terms of use ask of every client: no more
// than one request every three seconds, on a single connection at a time
// (https://info.arxiv.org/help/api/tou.html). There is no key to raise it.
// A query waits at most DefaultMaxQueueWait for its turn.
func RateLimit(contact, apiKey string) httpclient.Limit {
	return httpclient.Limit{Every: 3 * time.Second, Burst: 1, Concurrent: 1, MaxQueueWait: DefaultMaxQueueWait}
}

// Name implements sources.Source.
func (c *Client) Name() string { return research.SourceArxiv }

var _ sources.Counter = (*Client)(nil)

// Search implements sources.Source: SearchCounted without the total.
func (c *Client) Search(ctx context.Context, req sources.SourceRequest) ([]research.RawPaper, error) {
	p, err := c.SearchCounted(ctx, req)
	return p.Papers, err
}

// SearchCounted implements sources.Counter. The year range is applied the
// way arXiv supports it, as a submittedDate clause ANDed to the query, and
// checked again on the results; the total is the feed's
// opensearch:totalResults for that query.
func (c *Client) SearchCounted(ctx context.Context, req sources.SourceRequest) (sources.Page, error) {
	if err := req.Check(c.Name()); err != nil {
		return sources.Page{Total: sources.TotalUnknown}, err
	}
	v := url.Values{}
	v.Set("search_query", c.SentQuery(req))
	v.Set("start", strconv.Itoa(req.Offset)) // a next page ("Show more") starts past the records fetched
	v.Set("max_results", strconv.Itoa(min(req.MaxResults, maxPerCall)))
	// Relevance is arXiv's default, said explicitly so a change of default
	// does not reorder what a run recorded.
	v.Set("sortBy", "relevance")
	v.Set("sortOrder", "descending")
	var f feed
	err := c.ep.HTTP.GetXML(ctx, c.ep.Base+"/api/query?"+v.Encode(), nil, &f)
	if err == nil && req.Offset == 0 && len(f.Entries) == 0 {
		// arXiv now and then answers a query with an empty feed (and a
		// total of 0) that the same request answers in full a moment
		// later; one more request, in the rate limit's turn, tells a
		// spurious empty first page from a query that finds nothing.
		f = feed{}
		err = c.ep.HTTP.GetXML(ctx, c.ep.Base+"/api/query?"+v.Encode(), nil, &f)
	}
	if err != nil {
		var qe *httpclient.QueueError
		if errors.As(err, &qe) {
			// Said in arXiv's terms: the limit is arXiv's, shared by every
			// search here, and waiting a while is the remedy.
			return sources.Page{Total: sources.TotalUnknown}, fault.Errorf(fault.EInternal, "no turn within %s under arXiv's rate limit (one request every %s, shared by every search on this server); try again later",
				qe.MaxQueueWait, qe.Limit.Every)
		}
		return sources.Page{Total: sources.TotalUnknown}, err
	}
	papers := []research.RawPaper{}
	for _, e := range f.Entries {
		if strings.Contains(e.ID, "arxiv.org/api/errors") {
			return sources.Page{Total: sources.TotalUnknown}, fault.Errorf(fault.EInvalid, "arxiv rejected the query: %s", clean(e.Summary))
		}
		p, ok := e.paper()
		if !ok || !req.YearRange.Contains(p.Year) || len(papers) >= req.MaxResults {
			continue
		}
		p.Rank = len(papers) + 1
		papers = append(papers, p)
	}
	total := sources.TotalUnknown
	if f.TotalResults != nil {
		total = sources.AtLeast(*f.TotalResults, len(papers))
	}
	return sources.Page{Papers: papers, Total: total}, nil
}

// SentQuery implements sources.QueryFolder: the search_query arXiv receives
// is the rendered query, parenthesised and ANDed with a submittedDate range
// when years are set.
func (c *Client) SentQuery(req sources.SourceRequest) string {
	q, y := req.Query, req.YearRange
	if y.From == 0 && y.To == 0 {
		return q
	}
	// arXiv's first papers are from August 1991: the lowest bound a
	// search can mean, rather than the year 0.
	from, to := firstSubmission, "999912312359"
	if y.From != 0 {
		from = fmt.Sprintf("%04d01010000", y.From)
	}
	if y.To != 0 {
		to = fmt.Sprintf("%04d12312359", y.To)
	}
	return fmt.Sprintf("(%s) AND submittedDate:[%s TO %s]", q, from, to)
}

type feed struct {
	XMLName xml.Name `xml:"http://www.w3.org/2005/Atom feed"`
	Entries []entry  `xml:"http://www.w3.org/2005/Atom entry"`
	// TotalResults is how many entries match the query in all.
	TotalResults *int `xml:"http://a9.com/-/spec/opensearch/1.1/ totalResults"`
}

type entry struct {
	ID        string `xml:"http://www.w3.org/2005/Atom id"`
	Title     string `xml:"http://www.w3.org/2005/Atom title"`
	Summary   string `xml:"http://www.w3.org/2005/Atom summary"`
	Published string `xml:"http://www.w3.org/2005/Atom published"`
	Authors   []struct {
		Name string `xml:"http://www.w3.org/2005/Atom name"`
	} `xml:"http://www.w3.org/2005/Atom author"`
	Links []struct {
		Href  string `xml:"href,attr"`
		Rel   string `xml:"rel,attr"`
		Title string `xml:"title,attr"`
	} `xml:"http://www.w3.org/2005/Atom link"`
	DOI        string `xml:"http://arxiv.org/schemas/atom doi"`
	JournalRef string `xml:"http://arxiv.org/schemas/atom journal_ref"`
}

var absID = regexp.MustCompile(`arxiv\.org/abs/(.+)$`)

func (e entry) paper() (research.RawPaper, bool) {
	title := clean(e.Title)
	if title == "" {
		return research.RawPaper{}, false
	}
	p := research.RawPaper{
		Title:    title,
		Abstract: clean(e.Summary),
		Venue:    "arXiv",
		DOI:      research.NormalizeDOI(e.DOI),
		URL:      strings.TrimSpace(e.ID),
	}
	if m := absID.FindStringSubmatch(strings.TrimSpace(e.ID)); m != nil {
		p.ArxivID = research.NormalizeArxivID(m[1])
	}
	if len(e.Published) >= 4 {
		p.Year, _ = strconv.Atoi(e.Published[:4])
	}
	for _, a := range e.Authors {
		if n := clean(a.Name); n != "" {
			p.Authors = append(p.Authors, n)
		}
	}
	for _, l := range e.Links {
		if l.Rel == "alternate" && l.Href != "" {
			p.URL = l.Href
		}
	}
	return p, true
}

// clean collapses the line breaks and runs of spaces arXiv puts in titles
// and abstracts.
func clean(s string) string { return strings.Join(strings.Fields(s), " ") }
