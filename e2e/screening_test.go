package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"
)

// screeningQuestion is the question the screening tests review: the test
// library holds enough papers on it for a long review list.
const screeningQuestion = "sleep and memory consolidation"

// progressRe matches the review bar's counts.
func progressRe(screened, total, relevant int) *regexp.Regexp {
	return regexp.MustCompile(`^\s*` + strconv.Itoa(screened) + `\s+of\s+` + strconv.Itoa(total) + `\s+screened\s+·\s+` + strconv.Itoa(relevant) + `\s+relevant\s*$`)
}

// inView reports whether loc's box lies wholly inside the window.
func inView(t *testing.T, loc playwright.Locator) bool {
	t.Helper()
	v, err := loc.Evaluate(`el => { const r = el.getBoundingClientRect(); return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight && r.left >= 0 && r.right <= window.innerWidth; }`, nil)
	require.NoError(t, err)
	return v == true
}

// TestReviewReasonKeysAndCounts: keys 1–9 mark the cursor's paper
// irrelevant for the review's first … ninth exclusion reason (shown with
// its key) and move on, saved at once (a reload keeps mark and reason);
// the sticky bar's "x of N screened · y relevant" follows every mark and
// stays in view with the decision buttons while the papers scroll; the
// question's concepts are highlighted in titles. On the old code digits
// did nothing, and there was no bar, no count and no highlight.
func TestReviewReasonKeysAndCounts(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	require.NoError(t, page.SetViewportSize(1280, 900))
	startRunToReview(t, page, expect, "Ada", screeningQuestion)
	papers := page.GetByTestId("paper")
	n, err := papers.Count()
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, 6)
	progress := page.GetByTestId("review-progress")
	require.NoError(t, expect.Locator(progress).ToHaveText(progressRe(0, n, 0)))
	require.NoError(t, expect.Locator(page.GetByTestId("reason-key").Nth(1)).ToHaveText(regexp.MustCompile(`^\s*2\s+intervention\s*$`)))
	require.NoError(t, expect.Locator(page.GetByTestId("key-hint")).ToBeVisible())
	require.NoError(t, expect.Locator(page.GetByTestId("paper-title").Locator("mark").First()).ToBeVisible())

	first, second, third := papers.Nth(0), papers.Nth(1), papers.Nth(2)
	firstID, err := first.GetAttribute("data-paper-id")
	require.NoError(t, err)
	require.NoError(t, page.Keyboard().Press("2"))
	require.NoError(t, expect.Locator(first.Locator(`input[data-mark="irrelevant"]`)).ToBeChecked())
	require.NoError(t, expect.Locator(first.GetByTestId("paper-reason")).ToHaveValue("intervention"))
	require.NoError(t, expect.Locator(first.GetByTestId("paper-reason")).ToBeVisible(), "the reason shows on a paper marked irrelevant")
	require.NoError(t, expect.Locator(second).ToBeFocused(), "a reason key moves on to the next paper")
	require.NoError(t, expect.Locator(progress).ToHaveText(progressRe(1, n, 0)))
	require.NoError(t, expect.Locator(second.GetByTestId("paper-reason")).ToBeHidden(), "no reason shows on a paper not marked irrelevant")
	require.NoError(t, page.Keyboard().Press("r"))
	require.NoError(t, expect.Locator(third).ToBeFocused())
	require.NoError(t, expect.Locator(progress).ToHaveText(progressRe(2, n, 1)))
	require.NoError(t, expect.Locator(second.GetByTestId("mark-saved")).ToBeVisible())

	// Moving down by keys, the cursor paper is never hidden behind the
	// bar.
	clear := func() bool {
		v, err := page.Evaluate(`() => {
			const p = document.querySelector('[data-testid="paper"][aria-current="true"]');
			const bar = document.querySelector('[data-testid="review-bar"]').getBoundingClientRect();
			const r = p.getBoundingClientRect();
			return r.top >= 0 && r.bottom <= bar.top;
		}`)
		require.NoError(t, err)
		return v == true
	}
	for i := 3; i < n; i++ {
		require.NoError(t, page.Keyboard().Press("j"))
		require.NoError(t, expect.Locator(papers.Nth(i)).ToBeFocused())
		require.True(t, clear(), "paper %d is clear of the bar", i+1)
	}

	// The bar stays in view, with its buttons, while the papers scroll.
	require.NoError(t, papers.Nth(n-2).ScrollIntoViewIfNeeded())
	bar := page.GetByTestId("review-bar")
	require.True(t, inView(t, bar), "the review bar is in view mid-list")
	require.True(t, inView(t, button(page, "Approve and finish")), "the decision buttons are in view mid-list")
	require.True(t, inView(t, progress), "the counts are in view mid-list")
	pos, err := bar.Evaluate(`el => getComputedStyle(el).position`, nil)
	require.NoError(t, err)
	require.Equal(t, "sticky", pos)

	// Saved as marked: a reload shows the mark, the reason and the counts.
	_, err = page.Reload()
	require.NoError(t, err)
	again := page.Locator(`[data-testid="paper"][data-paper-id="` + firstID + `"]`)
	require.NoError(t, expect.Locator(again.Locator(`input[data-mark="irrelevant"]`)).ToBeChecked())
	require.NoError(t, expect.Locator(again.GetByTestId("paper-reason")).ToHaveValue("intervention"))
	require.NoError(t, expect.Locator(page.GetByTestId("review-progress")).ToHaveText(progressRe(2, n, 1)))
}

// TestReviewCompactCards: at 1280×900 with abstracts folded, at least six
// papers are wholly in view above the review bar. On the old layout
// two were.
func TestReviewCompactCards(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	require.NoError(t, page.SetViewportSize(1280, 900))
	startRunToReview(t, page, expect, "Ada", screeningQuestion)
	papers := page.GetByTestId("paper")
	require.NoError(t, expect.Locator(papers.First()).ToBeVisible())
	visible, err := page.Evaluate(`() => {
		const papers = [...document.querySelectorAll('[data-testid="paper"]')];
		if (papers.some(p => p.querySelector("details[open]"))) return -1;
		window.scrollTo(0, papers[0].getBoundingClientRect().top + window.scrollY - 4);
		const bar = document.querySelector('[data-testid="review-bar"]');
		const bottom = bar ? Math.min(window.innerHeight, bar.getBoundingClientRect().top) : window.innerHeight;
		return papers.filter(p => { const r = p.getBoundingClientRect(); return r.top >= 0 && r.bottom <= bottom; }).length;
	}`)
	require.NoError(t, err)
	t.Logf("papers in view at 1280×900: %v", visible)
	require.GreaterOrEqual(t, visible, 6, "papers wholly in view at 1280×900 with abstracts folded")
}

// openPhonePage is openPage on a 390×844 touch screen (a phone).
func openPhonePage(t *testing.T, base string) (playwright.Page, playwright.PlaywrightAssertions) {
	t.Helper()
	browser, err := shared.get()
	if err != nil {
		t.Fatalf("e2e: no browser: %v", err)
	}
	bctx, err := browser.NewContext(playwright.BrowserNewContextOptions{BaseURL: playwright.String(base),
		Viewport: &playwright.Size{Width: 390, Height: 844}, IsMobile: playwright.Bool(true), HasTouch: playwright.Bool(true)})
	require.NoError(t, err)
	bctx.SetDefaultTimeout(float64(actionTimeout.Milliseconds()))
	bctx.SetDefaultNavigationTimeout(float64(actionTimeout.Milliseconds()))
	t.Cleanup(func() { require.NoError(t, bctx.Close()) })
	page, err := bctx.NewPage()
	require.NoError(t, err)
	watch(t, page)
	return page, playwright.NewPlaywrightAssertions(float64(expectTimeout.Milliseconds()))
}

// TestReviewOnPhone: at 390×844 on a touch screen the review fits the
// width (no horizontal scroll, long words wrap), shows no keyboard hints,
// marks by tap with the counts following, and keeps the decision buttons
// in view while scrolling.
func TestReviewOnPhone(t *testing.T) {
	t.Parallel()
	page, expect := openPhonePage(t, startServer(t).url)
	startRunToReview(t, page, expect, "Ada", screeningQuestion)
	papers := page.GetByTestId("paper")
	n, err := papers.Count()
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, 4)
	overflow := func() float64 {
		t.Helper()
		v, err := page.Evaluate(`() => document.documentElement.scrollWidth - window.innerWidth`)
		require.NoError(t, err)
		f, _ := v.(float64)
		if i, ok := v.(int); ok {
			f = float64(i)
		}
		return f
	}
	require.LessOrEqual(t, overflow(), 0.0, "no horizontal scroll at 390px")
	require.NoError(t, expect.Locator(page.GetByTestId("key-hint")).ToBeHidden(), "no keyboard hints on a touch screen")
	require.NoError(t, expect.Locator(page.GetByTestId("reason-keys")).ToBeHidden())

	// Tap to mark; the counts follow.
	second := papers.Nth(1)
	require.NoError(t, second.GetByRole(*playwright.AriaRoleRadio, playwright.LocatorGetByRoleOptions{Name: "Relevant", Exact: playwright.Bool(true)}).Tap())
	require.NoError(t, expect.Locator(page.GetByTestId("review-progress")).ToHaveText(progressRe(1, n, 1)))

	// Mid-list the decision buttons are in view; an open abstract still
	// fits the width.
	mid := papers.Nth(n / 2)
	require.NoError(t, mid.ScrollIntoViewIfNeeded())
	require.True(t, inView(t, button(page, "Approve and finish")), "the decision buttons are in view mid-list")
	require.True(t, inView(t, page.GetByTestId("review-progress")), "the counts are in view mid-list")
	if d := page.Locator(`[data-testid="paper"] details`).First(); d != nil {
		if c, _ := d.Count(); c > 0 {
			require.NoError(t, d.Locator("summary").Tap())
			require.NoError(t, expect.Locator(d).ToHaveAttribute("open", ""))
		}
	}
	require.LessOrEqual(t, overflow(), 0.0, "no horizontal scroll with an abstract open")
}

// TestScreenshotsPhone writes docs/screenshots/review-phone.png: the
// review at 390×844 on a touch screen, one paper marked, scrolled into the
// list so the sticky bar shows (the window, not the full page, as a phone
// shows it). Like TestScreenshots it writes into the source tree, so it
// runs only under make screenshots (QUARRY_SCREENSHOTS=1).
func TestScreenshotsPhone(t *testing.T) {
	if os.Getenv("QUARRY_SCREENSHOTS") != "1" {
		t.Skip("writes docs/screenshots/review-phone.png; run it with make screenshots (QUARRY_SCREENSHOTS=1)")
	}
	require.NoError(t, os.MkdirAll(screenshotDir, 0o755))
	page, expect := openPhonePage(t, startServer(t).url)
	startRunToReview(t, page, expect, "Ada", screeningQuestion)
	papers := page.GetByTestId("paper")
	require.NoError(t, papers.First().GetByRole(*playwright.AriaRoleRadio, playwright.LocatorGetByRoleOptions{Name: "Relevant", Exact: playwright.Bool(true)}).Tap())
	require.NoError(t, expect.Locator(page.GetByTestId("screened-count")).ToHaveText("1"))
	_, err := papers.First().Evaluate(`el => window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - 8)`, nil)
	require.NoError(t, err)
	path := filepath.Join(screenshotDir, "review-phone.png")
	_, err = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(path),
		Animations: playwright.ScreenshotAnimationsDisabled, Caret: playwright.ScreenshotCaretHide})
	require.NoError(t, err)
	t.Logf("wrote %s", path)
}
