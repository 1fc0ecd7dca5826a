package handlers

import (
	"cmp"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/research"
	"quarry/internal/views"
)

// maxReviewPerPage bounds the papers one review page shows, whatever a
// link asks (the controls offer views.ReviewPerPage).
const maxReviewPerPage = 200

// reviewQueryOf reads how the review list is sorted, filtered and paged
// from a request's query (GET /runs/:id, and the review form's actions,
// which carry it on). Values it does not know fall back to the default:
// a GET with a stale or edited link still shows a list.
func reviewQueryOf(v url.Values) views.ReviewQuery {
	oneOf := func(s string, allowed ...string) string {
		if slices.Contains(allowed, s) {
			return s
		}
		return ""
	}
	q := views.ReviewQuery{
		Sort:   oneOf(v.Get("sort"), "score", "year", "title", "mark"),
		Mark:   oneOf(v.Get("mark"), views.MarkRelevant, views.MarkIrrelevant, views.MarkUnsure),
		Source: strings.TrimSpace(v.Get("source")),
		Theme:  strings.TrimSpace(v.Get("theme")),
		Page:   1,
	}
	if y, err := strconv.Atoi(v.Get("year")); err == nil && y > 0 && y < 10000 {
		q.Year = y
	}
	if n, err := strconv.Atoi(v.Get("per_page")); err == nil && n != views.DefaultReviewPerPage && n >= 1 && n <= maxReviewPerPage {
		q.PerPage = n
	}
	if n, err := strconv.Atoi(v.Get("page")); err == nil && n > 1 {
		q.Page = n
	}
	return q
}

// isListRequest reports whether an htmx request swaps only the review
// list (the controls and the page links target it), so the answer can be
// that list alone. A history restore asks for the whole page.
func isListRequest(c echo.Context) bool {
	h := c.Request().Header
	return h.Get("HX-Request") == "true" && h.Get("HX-Target") == "review-list" && h.Get("HX-History-Restore-Request") != "true"
}

// listedPaper is a paper of the review with the theme it is shown under.
type listedPaper struct {
	theme string
	paper research.ScoredPaper
}

// listReview narrows a review form's groups to the page q asks for:
// filtered by mark, source, theme and year, sorted, and cut to one page,
// with what the list's controls offer. The page number is clamped to the
// pages there are. The form's Marks are the papers' current marks.
func listReview(f views.ReviewForm, q views.ReviewQuery) views.ReviewForm {
	var all []listedPaper
	sources, themes, years := map[string]bool{}, []string{}, map[int]bool{}
	for _, g := range f.Groups {
		themes = append(themes, g.Label)
		for _, p := range g.Papers {
			all = append(all, listedPaper{g.Label, p})
			for _, s := range paperSourceNames(p) {
				sources[s] = true
			}
			if p.Year != 0 {
				years[p.Year] = true
			}
		}
	}
	l := views.ReviewListState{Total: len(all), Themes: themes}
	l.Sources = slices.Sorted(func(yield func(string) bool) {
		for s := range sources {
			if !yield(s) {
				return
			}
		}
	})
	for y := range years {
		l.Years = append(l.Years, y)
	}
	slices.SortFunc(l.Years, func(a, b int) int { return cmp.Compare(b, a) })

	shown := make([]listedPaper, 0, len(all))
	for _, lp := range all {
		if matches(lp, q, f.Marks) {
			shown = append(shown, lp)
		}
	}
	sortListed(shown, q.Sort, f.Marks)

	per := q.PerPage
	if per == 0 {
		per = views.DefaultReviewPerPage
	}
	l.Matching = len(shown)
	l.Pages = max(1, (len(shown)+per-1)/per)
	q.Page = min(max(q.Page, 1), l.Pages)
	from := (q.Page - 1) * per
	to := min(from+per, len(shown))
	page := shown[from:to]
	if len(page) > 0 {
		l.First, l.Last = from+1, to
	}
	l.Query = q

	var groups []views.PaperGroup
	for _, lp := range page {
		label := lp.theme
		if q.Sort != "" {
			label = views.SortedHeading(q.Sort)
		}
		if n := len(groups); n == 0 || groups[n-1].Label != label {
			groups = append(groups, views.PaperGroup{Label: label})
		}
		groups[len(groups)-1].Papers = append(groups[len(groups)-1].Papers, lp.paper)
		if !screened(f.Marks[lp.paper.ID]) {
			l.Rest++
		}
	}
	f.Groups, f.List = groups, l
	return f
}

// screened reports whether a mark says relevant or irrelevant; unsure
// and no mark are not screened, as in the final collection's sets.
func screened(mark string) bool {
	return mark == views.MarkRelevant || mark == views.MarkIrrelevant
}

// matches reports whether a paper passes q's filters.
func matches(lp listedPaper, q views.ReviewQuery, marks map[string]string) bool {
	switch {
	case q.Mark == views.MarkUnsure && screened(marks[lp.paper.ID]):
		return false
	case q.Mark != "" && q.Mark != views.MarkUnsure && marks[lp.paper.ID] != q.Mark:
		return false
	case q.Source != "" && !slices.Contains(paperSourceNames(lp.paper), q.Source):
		return false
	case q.Theme != "" && lp.theme != q.Theme:
		return false
	case q.Year != 0 && lp.paper.Year != q.Year:
		return false
	}
	return true
}

// sortListed orders the list as sort asks; "" keeps the themes' order.
// Ties keep the order before, which is by theme and score.
func sortListed(ps []listedPaper, sort string, marks map[string]string) {
	markRank := func(id string) int {
		switch marks[id] {
		case views.MarkRelevant:
			return 1
		case views.MarkIrrelevant:
			return 2
		}
		return 0
	}
	var by func(a, b listedPaper) int
	switch sort {
	case "score":
		by = func(a, b listedPaper) int { return cmp.Compare(b.paper.Score, a.paper.Score) }
	case "year":
		// Newest first; papers without a year last.
		year := func(lp listedPaper) int {
			if lp.paper.Year == 0 {
				return -1 << 31
			}
			return lp.paper.Year
		}
		by = func(a, b listedPaper) int { return cmp.Compare(year(b), year(a)) }
	case "title":
		by = func(a, b listedPaper) int {
			return cmp.Compare(strings.ToLower(a.paper.Title), strings.ToLower(b.paper.Title))
		}
	case "mark":
		by = func(a, b listedPaper) int {
			return cmp.Or(cmp.Compare(markRank(a.paper.ID), markRank(b.paper.ID)), cmp.Compare(b.paper.Score, a.paper.Score))
		}
	default:
		return
	}
	slices.SortStableFunc(ps, by)
}

// paperSourceNames are the sources a paper was found in.
func paperSourceNames(p research.ScoredPaper) []string {
	if len(p.Sources) > 0 {
		return p.Sources
	}
	if p.Source != "" {
		return []string{p.Source}
	}
	return nil
}
