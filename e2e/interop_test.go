package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/biblitest"
	"quarry/internal/biblio/bibtex"
	"quarry/internal/biblio/ris"
)

// uploadRIS is an EndNote-style export as a browser uploads it: CRLF line
// ends, blank lines between records, and a record without a title (it
// starts on line 8), which the import must skip and report.
const uploadRIS = "TY  - JOUR\r\n" + // line 1
	"AU  - Lindqvist, Maja\r\n" +
	"TI  - Browser upload test on circadian rhythm and shift work\r\n" +
	"PY  - 2019\r\n" +
	"DO  - 10.5555/e2e.upload.1\r\n" +
	"ER  - \r\n" +
	"\r\n" +
	"TY  - JOUR\r\n" + // line 8: no title
	"AU  - Nobody, N.\r\n" +
	"PY  - 2001\r\n" +
	"ER  - \r\n" +
	"\r\n" +
	"TY  - CONF\r\n" +
	"AU  - Ferreira, João\r\n" +
	"TI  - Second browser upload about nocturnal light exposure\r\n" +
	"PY  - 2023\r\n" +
	"ER  - \r\n"

// uploadTitles are uploadRIS's two readable records.
var uploadTitles = []string{
	"Browser upload test on circadian rhythm and shift work",
	"Second browser upload about nocturnal light exposure",
}

// attachRIS is an export from a database Quarry cannot search, attached to
// a run at the strategy checkpoint: two records on the run's question.
const attachRIS = "TY  - JOUR\r\n" +
	"AU  - Okafor, Ngozi\r\n" +
	"TI  - Sleep spindles predict overnight memory consolidation in shift workers\r\n" +
	"PY  - 2021\r\n" +
	"AB  - Spindle density predicted next-morning recall.\r\n" +
	"DO  - 10.5555/e2e.attach.1\r\n" +
	"ER  - \r\n" +
	"TY  - JOUR\r\n" +
	"AU  - Haddad, Lina\r\n" +
	"TI  - Closed-loop auditory stimulation of slow oscillations and memory consolidation during sleep\r\n" +
	"PY  - 2022\r\n" +
	"ER  - \r\n"

const (
	keptTitle    = "Sleep spindles predict overnight memory consolidation in shift workers"
	droppedTitle = "Closed-loop auditory stimulation of slow oscillations and memory consolidation during sleep"
	// keptNote has a semicolon, which must not be mistaken for the end of
	// the mark in the exported note field.
	keptNote = "re-check the actigraphy; spindle density only"
)

// writeFile writes content to name in a fresh temporary directory and
// returns its path, for a file input to upload.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// download clicks link, waits for the browser's download to finish and
// returns the file's content.
func download(t *testing.T, page playwright.Page, link playwright.Locator) []byte {
	t.Helper()
	dl, err := page.ExpectDownload(func() error { return link.Click() })
	require.NoError(t, err)
	require.NoError(t, dl.Failure())
	path, err := dl.Path()
	require.NoError(t, err)
	body, err := os.ReadFile(path)
	require.NoError(t, err)
	return body
}

// readAll parses a downloaded file with the format's own reader, so the
// test checks what a reference manager would read, not just substrings.
func readAll(t *testing.T, r biblio.Reader) []biblio.Record {
	t.Helper()
	recs := biblitest.ReadAll(t, r)
	for _, rec := range recs {
		require.Empty(t, rec.Problem, "record at line %d", rec.Line)
	}
	return recs
}

// libraryCount reads the number of papers the library page reports.
func libraryCount(t *testing.T, page playwright.Page, expect playwright.PlaywrightAssertions) int {
	t.Helper()
	count := page.GetByTestId("library-count")
	require.NoError(t, expect.Locator(count).ToHaveText(regexp.MustCompile(`^\d+ papers in the local library\.$`)))
	text, err := count.TextContent()
	require.NoError(t, err)
	n, err := strconv.Atoi(strings.Fields(text)[0])
	require.NoError(t, err)
	return n
}

// TestLibraryUploadAndExport: upload a RIS file with a bad record on the
// library page, follow its progress to the summary (2 imported, 1 skipped
// with its line and reason), see the library grow by 2, and download the
// library as RIS with both new papers in it.
func TestLibraryUploadAndExport(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	_, err := page.Goto("/library")
	require.NoError(t, err)
	signIn(t, page, expect, "Ada")
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/library$`)))
	before := libraryCount(t, page, expect)

	require.NoError(t, page.GetByTestId("import-file").SetInputFiles(writeFile(t, "endnote.ris", uploadRIS)))
	require.NoError(t, button(page, "Import").Click())
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/library/imports/[^/]+$`)))

	// The progress fragment polls itself until the import ends in the summary.
	summary := page.GetByTestId("import-summary")
	require.NoError(t, expect.Locator(summary).ToBeVisible(afterWork()))
	require.NoError(t, expect.Locator(page.GetByTestId("import-status")).ToHaveAttribute("data-done", "true"))
	require.NoError(t, expect.Locator(page.GetByTestId("import-failed")).ToHaveCount(0))
	require.NoError(t, expect.Locator(page.GetByTestId("import-inserted")).ToHaveText("2"))
	require.NoError(t, expect.Locator(page.GetByTestId("import-updated")).ToHaveText("0"))
	require.NoError(t, expect.Locator(page.GetByTestId("import-skipped")).ToHaveText(regexp.MustCompile(`^\s*1\b`)))
	rows := page.GetByTestId("import-errors").Locator("tbody").GetByRole(*playwright.AriaRoleRow)
	require.NoError(t, expect.Locator(rows).ToHaveCount(1))
	require.NoError(t, expect.Locator(rows.GetByRole(*playwright.AriaRoleCell)).ToHaveText([]string{"8", "missing title"}))

	require.NoError(t, page.GetByTestId("back-to-library").Click())
	require.NoError(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/library$`)))
	require.NoError(t, expect.Locator(page.GetByTestId("library-count")).ToHaveText(strconv.Itoa(before+2)+" papers in the local library."))
	require.NoError(t, expect.Locator(page.GetByTestId("import-jobs")).ToContainText("endnote.ris"))

	body := download(t, page, page.GetByTestId("library-export-ris"))
	for _, title := range uploadTitles {
		require.Contains(t, string(body), title)
	}
	recs := readAll(t, ris.NewReader(strings.NewReader(string(body))))
	require.Len(t, recs, before+2, "the export holds the whole library")
	byTitle := map[string]biblio.Record{}
	for _, r := range recs {
		byTitle[r.Paper.Title] = r
	}
	require.Contains(t, byTitle, uploadTitles[0])
	require.Equal(t, "10.5555/e2e.upload.1", byTitle[uploadTitles[0]].Paper.DOI)
	require.Equal(t, []string{"Maja Lindqvist"}, byTitle[uploadTitles[0]].Paper.Authors)
	require.Contains(t, byTitle, uploadTitles[1])
	require.Equal(t, 2023, byTitle[uploadTitles[1]].Paper.Year)
	require.Equal(t, []string{"João Ferreira"}, byTitle[uploadTitles[1]].Paper.Authors)
}

// TestAttachFileAtStrategyCheckpoint: attach a RIS export at the strategy
// checkpoint, see it listed with its record count, approve; the review
// lists the file's papers as a source of their own; a note and a mark on
// one of them and "irrelevant" on the other travel into the completed
// run's BibTeX export, which leaves the irrelevant one out.
func TestAttachFileAtStrategyCheckpoint(t *testing.T) {
	t.Parallel()
	page, expect := newPage(t)
	startRun(t, page, expect, "Ada", "sleep and memory consolidation")

	require.NoError(t, page.GetByTestId("attach-file").SetInputFiles(writeFile(t, "embase.ris", attachRIS)))
	require.NoError(t, page.GetByTestId("attach-submit").Click())
	attached := page.GetByTestId("attached-file")
	require.NoError(t, expect.Locator(attached).ToHaveCount(1))
	require.NoError(t, expect.Locator(attached).ToContainText("embase.ris"))
	require.NoError(t, expect.Locator(attached).ToContainText("2 records"))
	require.NoError(t, expect.Locator(attached.GetByRole(*playwright.AriaRoleCheckbox)).ToBeChecked())
	require.NoError(t, expect.Locator(page.GetByTestId("attach-error")).ToHaveCount(0))
	require.NoError(t, button(page, "Approve").Click())

	review := page.GetByTestId("checkpoint-review")
	require.NoError(t, expect.Locator(review).ToBeVisible(afterWork()))
	require.NoError(t, expect.Locator(page.GetByTestId("source-results")).ToContainText("file: embase.ris: 2 found"))
	paper := func(title string) playwright.Locator {
		return page.GetByTestId("paper").Filter(playwright.LocatorFilterOptions{
			Has: page.GetByTestId("paper-title").GetByText(title, playwright.LocatorGetByTextOptions{Exact: playwright.Bool(true)}),
		})
	}
	kept, dropped := paper(keptTitle), paper(droppedTitle)
	for _, p := range []playwright.Locator{kept, dropped} {
		require.NoError(t, expect.Locator(p).ToHaveCount(1))
		require.NoError(t, expect.Locator(p.GetByTestId("source-badge").GetByText("file: embase.ris", playwright.LocatorGetByTextOptions{Exact: playwright.Bool(true)})).ToHaveCount(1))
	}
	radio := func(p playwright.Locator, mark string) playwright.Locator {
		return p.GetByRole(*playwright.AriaRoleRadio, playwright.LocatorGetByRoleOptions{Name: mark, Exact: playwright.Bool(true)})
	}
	require.NoError(t, kept.GetByTestId("paper-note").Fill(keptNote))
	require.NoError(t, radio(kept, "Relevant").Check())
	require.NoError(t, radio(dropped, "Irrelevant").Check())
	require.NoError(t, button(page, "Approve and finish").Click())

	require.NoError(t, expect.Locator(page.GetByTestId("final-collection")).ToBeVisible(afterWork()))
	require.NoError(t, expect.Locator(page.GetByTestId("status-badge")).ToHaveText("completed"))
	require.NoError(t, expect.Locator(page.GetByTestId("final-note")).ToHaveText("Note: "+keptNote))
	require.NoError(t, expect.Locator(page.GetByTestId("rejected-paper")).ToContainText(droppedTitle))

	body := string(download(t, page, page.GetByTestId("export-bibtex")))
	require.Contains(t, body, keptTitle)
	require.Contains(t, body, "Quarry mark: relevant")
	require.Contains(t, body, keptNote)
	require.NotContains(t, body, droppedTitle, "the final collection leaves out papers marked irrelevant")
	// Read back as a reference manager would: the mark and note split out
	// of the note field, the record otherwise intact.
	var found []biblio.Record
	for _, r := range readAll(t, bibtex.NewReader(strings.NewReader(body))) {
		if r.Paper.Title == keptTitle {
			found = append(found, r)
		}
	}
	require.Len(t, found, 1)
	require.Equal(t, "relevant", found[0].Mark)
	require.Equal(t, keptNote, found[0].Note)
	require.Equal(t, "10.5555/e2e.attach.1", found[0].Paper.DOI)
	require.Equal(t, []string{"Ngozi Okafor"}, found[0].Paper.Authors)
}
