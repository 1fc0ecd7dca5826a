package e2e

import (
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"
)

// TestMarksStreamToOtherViewers (issue 16, "marks … stream to everyone
// viewing the run"): Ada and Grace have the same review open in two
// browsers. Ada's mark, note and exclusion reason appear on Grace's page
// within a couple of seconds, without a reload; a note Grace is typing in
// is not overwritten, her page says Ada changed it instead; Ada's page
// knows the echo of her own clicks. On the old code a mark reached the
// other page only as a progress line, and its radios changed on reload.
func TestMarksStreamToOtherViewers(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	// Ada's page handles each mark message half a second late and notes
	// which paper it was about: her second quick click is then always
	// sent before the first click's echo is handled.
	require.NoError(t, page.AddInitScript(playwright.Script{Content: playwright.String(`(() => {
		const add = EventSource.prototype.addEventListener;
		window.quarryMarksHandled = [];
		EventSource.prototype.addEventListener = function (type, fn, opts) {
			if (type === "mark") {
				const handle = fn;
				fn = (ev) => setTimeout(() => { handle(ev); window.quarryMarksHandled.push(JSON.parse(ev.data).paper_id); }, 500);
			}
			return add.call(this, type, fn, opts);
		};
	})();`)}))
	startRunToReview(t, page, expect, "Ada", "sleep and memory consolidation")
	u, err := url.Parse(page.URL())
	require.NoError(t, err)

	bctx, err := page.Context().Browser().NewContext(playwright.BrowserNewContextOptions{BaseURL: playwright.String(u.Scheme + "://" + u.Host)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = bctx.Close() })
	bctx.SetDefaultTimeout(float64(actionTimeout.Milliseconds()))
	other, err := bctx.NewPage()
	require.NoError(t, err)
	watch(t, other)
	require.NoError(t, other.AddInitScript(playwright.Script{Content: playwright.String(
		`document.addEventListener("htmx:sseOpen", function () { window.quarryStreamOpen = true; });`)}))
	_, err = other.Goto(u.Path)
	require.NoError(t, err)
	signIn(t, other, expect, "Grace")
	require.NoError(t, expect.Page(other).ToHaveURL(regexp.MustCompile(regexp.QuoteMeta(u.Path)+`$`)))
	require.NoError(t, expect.Locator(other.GetByTestId("checkpoint-review")).ToBeVisible())
	// Grace's page is connected to the run's stream before Ada marks.
	require.Eventually(t, func() bool {
		open, err := other.Evaluate(`() => window.quarryStreamOpen === true`)
		return err == nil && open == true
	}, workTimeout, 50*time.Millisecond, "Grace's page connects to the run's stream")
	// Anything that reloads Grace's page loses this.
	_, err = other.Evaluate(`() => { window.quarryNotReloaded = true; }`)
	require.NoError(t, err)

	papers := page.GetByTestId("paper")
	ids := make([]string, 4)
	for i := range ids {
		ids[i], err = papers.Nth(i).GetAttribute("data-paper-id")
		require.NoError(t, err)
	}
	paper := func(p playwright.Page, id string) playwright.Locator {
		return p.Locator(`[data-testid="paper"][data-paper-id="` + id + `"]`)
	}
	soon := playwright.LocatorAssertionsToBeCheckedOptions{Timeout: playwright.Float(3000)}
	soonValue := playwright.LocatorAssertionsToHaveValueOptions{Timeout: playwright.Float(3000)}

	// A mark: Grace's radio follows.
	require.NoError(t, markRadio(page, ids[0], "Relevant").Check())
	require.NoError(t, expect.Locator(markRadio(other, ids[0], "Relevant")).ToBeChecked(soon))

	// An irrelevant mark with its reason and a note.
	require.NoError(t, markRadio(page, ids[1], "Irrelevant").Check())
	require.NoError(t, expect.Locator(markRadio(other, ids[1], "Irrelevant")).ToBeChecked(soon))
	require.NoError(t, paper(page, ids[1]).GetByTestId("paper-reason").Fill("population"))
	require.NoError(t, paper(page, ids[1]).GetByTestId("paper-reason").Blur())
	require.NoError(t, paper(page, ids[1]).GetByTestId("paper-note").Fill("rats, not people"))
	require.NoError(t, paper(page, ids[1]).GetByTestId("paper-note").Blur())
	require.NoError(t, expect.Locator(paper(other, ids[1]).GetByTestId("paper-reason")).ToHaveValue("population", soonValue))
	require.NoError(t, expect.Locator(paper(other, ids[1]).GetByTestId("paper-note")).ToHaveValue("rats, not people", soonValue))

	// Grace is typing a note on the third paper when Ada saves hers:
	// Grace's text stays, and her page says who changed the note.
	draft := paper(other, ids[2]).GetByTestId("paper-note")
	require.NoError(t, draft.Click())
	require.NoError(t, draft.PressSequentially("my draft"))
	require.NoError(t, paper(page, ids[2]).GetByTestId("paper-note").Fill("seminal"))
	require.NoError(t, paper(page, ids[2]).GetByTestId("paper-note").Blur())
	require.NoError(t, expect.Locator(paper(other, ids[2]).GetByTestId("mark-changed")).ToContainText("Ada changed this note",
		playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(3000)}))
	require.NoError(t, expect.Locator(draft).ToHaveValue("my draft"))
	require.NoError(t, expect.Locator(draft).ToBeFocused())

	// Two quick clicks: both pages end with the last. Ada's page handles
	// the first click's echo after the second click: it must not take it
	// for someone else's mark and check Relevant again.
	require.NoError(t, markRadio(page, ids[3], "Relevant").Check())
	require.NoError(t, markRadio(page, ids[3], "Irrelevant").Check())
	require.NoError(t, expect.Locator(markRadio(other, ids[3], "Irrelevant")).ToBeChecked(soon))
	require.Eventually(t, func() bool {
		n, err := page.Evaluate(`(id) => window.quarryMarksHandled.filter((p) => p === id).length`, ids[3])
		return err == nil && n == 2
	}, workTimeout, 50*time.Millisecond, "Ada's page handled both echoes")
	require.NoError(t, expect.Locator(markRadio(page, ids[3], "Irrelevant")).ToBeChecked())

	// Ada's own page keeps what she did (its echo changes nothing).
	require.NoError(t, expect.Locator(markRadio(page, ids[0], "Relevant")).ToBeChecked())
	require.NoError(t, expect.Locator(paper(page, ids[2]).GetByTestId("paper-note")).ToHaveValue("seminal"))
	require.NoError(t, expect.Locator(paper(page, ids[2]).GetByTestId("mark-changed")).ToHaveCount(0))

	still, err := other.Evaluate(`() => window.quarryNotReloaded === true`)
	require.NoError(t, err)
	require.Equal(t, true, still, "Grace's page was not reloaded")
}
