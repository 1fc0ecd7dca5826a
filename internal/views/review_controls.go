package views

import (
	"encoding/json"
	"net/url"
	"strconv"
)

// ReviewPerPage are the page sizes the review list offers; the first
// default is DefaultReviewPerPage.
var reviewPerPage = []int{10, 25, 50, 100}

// DefaultReviewPerPage is how many papers a review page shows unless asked.
const DefaultReviewPerPage = 50

// ReviewPerPage are the page sizes the review list offers.
func ReviewPerPage() []int { return reviewPerPage }

// Values are the query's non-default fields as GET /runs/:id reads them.
func (q ReviewQuery) Values() url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("sort", q.Sort)
	set("mark", q.Mark)
	set("source", q.Source)
	set("theme", q.Theme)
	if q.Year != 0 {
		v.Set("year", strconv.Itoa(q.Year))
	}
	if q.PerPage != 0 && q.PerPage != DefaultReviewPerPage {
		v.Set("per_page", strconv.Itoa(q.PerPage))
	}
	if q.Page > 1 {
		v.Set("page", strconv.Itoa(q.Page))
	}
	return v
}

// Search is the query as a URL's query part: "?…", or "" for the
// default list.
func (q ReviewQuery) Search() string {
	if s := q.Values().Encode(); s != "" {
		return "?" + s
	}
	return ""
}

// AtPage is the same list at page n.
func (q ReviewQuery) AtPage(n int) ReviewQuery {
	q.Page = n
	return q
}

// reviewListURL is the run page showing the review list as q asks.
func reviewListURL(runID string, q ReviewQuery) string {
	return "/runs/" + runID + q.Search()
}

// reviewActionURL is a review form action keeping the list's query, so
// the page that answers shows the same part of the list.
func reviewActionURL(f ReviewForm, action string) string {
	return "/runs/" + f.RunID + "/checkpoints/" + f.CheckpointID + "/" + action + f.List.Query.Search()
}

// reviewSortLabels name the sorts the list offers, in the order offered.
var reviewSortLabels = []struct{ Value, Label string }{
	{"", "Theme (best theme first)"},
	{"score", "Score (highest first)"},
	{"year", "Year (newest first)"},
	{"title", "Title (A–Z)"},
	{"mark", "Mark (not screened first)"},
}

// reviewMarkLabels name the mark filters, in the order offered.
var reviewMarkLabels = []struct{ Value, Label string }{
	{"", "Any mark"},
	{MarkUnsure, "Not screened (unsure)"},
	{MarkRelevant, "Relevant"},
	{MarkIrrelevant, "Irrelevant"},
}

// SortedHeading is the heading of the one group a list sorted across
// themes shows.
func SortedHeading(sort string) string {
	switch sort {
	case "score":
		return "All papers, highest score first"
	case "year":
		return "All papers, newest first"
	case "title":
		return "All papers, by title"
	case "mark":
		return "All papers, not screened first"
	}
	return "Papers"
}

// listPosition says which papers the page shows: "papers 51–100 of
// 2,000", with the review's total when filters narrowed it.
func listPosition(l ReviewListState) string {
	if l.Matching == 0 {
		if l.Total == 0 {
			return "No papers to review"
		}
		return "No paper matches these filters (of " + thousands(l.Total) + " under review)"
	}
	s := "Papers " + thousands(l.First) + "–" + thousands(l.Last) + " of " + thousands(l.Matching)
	if l.Matching != l.Total {
		s += " matching (" + thousands(l.Total) + " under review)"
	}
	return s
}

// thousands writes n with thousands separators: 2,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// restConfirmText is what "mark the rest" asks before marking.
func restConfirmText(n int) string {
	if n == 1 {
		return "Mark the 1 paper on this page not screened yet irrelevant?"
	}
	return "Mark the " + thousands(n) + " papers on this page not screened yet irrelevant?"
}

// perPageOf is the page size q asks for, or the default.
func perPageOf(q ReviewQuery) int {
	if q.PerPage == 0 {
		return DefaultReviewPerPage
	}
	return q.PerPage
}

// restAskText is what the button asks before marking the rest with
// JavaScript. It names no number: the page's marks change click by click
// after it is drawn, and the server marks what is unscreened when asked
// (the step without JavaScript counts them, drawn at that moment).
const restAskText = "Mark every paper on this page not screened yet (no mark, or unsure) irrelevant? Papers marked relevant or irrelevant keep their marks."

// restDoneText says what "mark the rest" did, next to its Undo.
func restDoneText(n int) string {
	if n == 1 {
		return "Marked 1 paper irrelevant."
	}
	return "Marked " + thousands(n) + " papers irrelevant."
}

// undoVals are the Undo button's htmx values: its batch, as the button's
// own name and value send it without JavaScript.
func undoVals(at string) string {
	b, _ := json.Marshal(map[string]string{"undo_at": at})
	return string(b)
}

// runPageURL is the run page's own address (data-page-url): with the
// review list's query, so a form answered in place (a 422 from page 2)
// keeps its list in the address bar.
func runPageURL(d RunData) string {
	if d.Review != nil {
		return reviewListURL(d.Status.ID, d.Review.List.Query)
	}
	return "/runs/" + d.Status.ID
}
