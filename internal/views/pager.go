package views

import (
	"fmt"
	"net/url"
)

// Pager is where a page of a long list is: "runs 26–50 of 312" and the
// addresses of the pages before and after ("" for none).
type Pager struct {
	// Noun names the items ("runs", "papers").
	Noun string
	// From and To are the 1-based positions of the page's first and last
	// items (0 and 0 for an empty page).
	From, To int
	// Total is how many there are; when Exact is false there are more.
	Total    int
	Exact    bool
	Prev     string
	Next     string
	TestName string
}

// Summary says which items the page shows of how many.
func (p Pager) Summary() string {
	total := thousands(p.Total)
	if !p.Exact {
		total = "more than " + total
	}
	if p.To == 0 {
		return fmt.Sprintf("no %s on this page (%s in all)", p.Noun, total)
	}
	return fmt.Sprintf("%s %s–%s of %s", p.Noun, thousands(p.From), thousands(p.To), total)
}

// Named is the pager with another test name, for a second copy below a
// list.
func (p Pager) Named(name string) Pager {
	p.TestName = name
	return p
}

// PaperURL is the address of a library paper's page. IDs such as
// doi:10.1093/sleep/26.2.117 hold slashes, so the ID is one escaped
// segment.
func PaperURL(id string) string {
	return "/library/papers/" + url.PathEscape(id)
}
