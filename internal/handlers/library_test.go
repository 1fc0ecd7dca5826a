package handlers_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/codecs"
)

// sampleRIS is an EndNote-style export: two good records and one whose
// title is missing, which must be reported with its line and skipped.
const sampleRIS = "TY  - JOUR\r\n" +
	"AU  - Wakefield, Andrew\r\n" +
	"TI  - Upload test paper on measles vaccination\r\n" +
	"PY  - 1999\r\n" +
	"DO  - 10.1000/upload.1\r\n" +
	"ER  - \r\n" +
	"\r\n" +
	"TY  - JOUR\r\n" +
	"AU  - Nobody, N.\r\n" +
	"PY  - 2001\r\n" +
	"ER  - \r\n" +
	"\r\n" +
	"TY  - CONF\r\n" +
	"AU  - Doe, Jane\r\n" +
	"TI  - Second uploaded paper about herd immunity\r\n" +
	"PY  - 2020\r\n" +
	"ER  - \r\n"

// upload posts a file to the library import form as a browser would.
func (w *web) upload(t *testing.T, c *http.Client, token, name, content string, fields map[string]string) (*http.Response, *goquery.Document) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	require.NoError(t, mw.WriteField("_csrf", token))
	for k, v := range fields {
		require.NoError(t, mw.WriteField(k, v))
	}
	if name != "" {
		fw, err := mw.CreateFormFile("file", name)
		require.NoError(t, err)
		_, err = io.WriteString(fw, content)
		require.NoError(t, err)
	}
	require.NoError(t, mw.Close())
	res, err := c.Post(w.srv.URL+"/library/imports", mw.FormDataContentType(), &body)
	require.NoError(t, err)
	defer res.Body.Close()
	doc, err := goquery.NewDocumentFromReader(res.Body)
	require.NoError(t, err)
	return res, doc
}

func TestLibraryUploadShowsProgressThenSummary(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	c := newClient(t)
	w.signIn(t, c, "Ada")
	_, page := w.get(t, c, "/library")
	before := page.Find(`[data-testid="library-count"]`).Text()
	token := csrf(page)

	res, doc := w.upload(t, c, token, "endnote.ris", sampleRIS, nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, res.Request.URL.Path, "/library/imports/", "the upload redirects to its progress page")
	// Poll the status fragment the page polls until the import is done.
	status := doc.Find(`[data-testid="import-status"]`)
	deadline := time.Now().Add(10 * time.Second)
	for status.AttrOr("data-done", "") != "true" {
		require.True(t, time.Now().Before(deadline), "import did not finish")
		_, d := w.htmx(t, c, http.MethodGet, res.Request.URL.RequestURI(), nil)
		status = d.Find(`[data-testid="import-status"]`)
	}
	require.Equal(t, "2", strings.TrimSpace(status.Find(`[data-testid="import-inserted"]`).Text()))
	require.Equal(t, "0", strings.TrimSpace(status.Find(`[data-testid="import-updated"]`).Text()))
	require.Contains(t, status.Find(`[data-testid="import-skipped"]`).Text(), "1")
	rows := status.Find(`[data-testid="import-errors"] tbody tr`)
	require.Equal(t, 1, rows.Length())
	require.Equal(t, "8", rows.Find("td").First().Text(), "the bad record is reported at the line where it starts")
	require.Contains(t, rows.Text(), "missing title")

	_, page = w.get(t, c, "/library")
	require.NotEqual(t, before, page.Find(`[data-testid="library-count"]`).Text())
	require.Contains(t, page.Find(`[data-testid="import-jobs"]`).Text(), "endnote.ris")

	// The same file again neither duplicates nor reads as an update.
	res, _ = w.upload(t, c, csrf(page), "endnote.ris", sampleRIS, map[string]string{"format": biblio.RIS})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Eventually(t, func() bool {
		_, p := w.get(t, c, "/library")
		return strings.Contains(p.Find(`[data-testid="import-jobs"] li`).First().Text(), "0 new, 0 updated, 2 unchanged, 1 skipped")
	}, 10*time.Second, 50*time.Millisecond, "a second import of the same file changes nothing")

	// The library exports in every format and the uploaded papers come back.
	for _, f := range codecs.ExportFormats {
		r, err := c.Get(w.srv.URL + "/library/export?format=" + f)
		require.NoError(t, err)
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, r.StatusCode, f)
		require.Contains(t, r.Header.Get("Content-Disposition"), "quarry-library"+codecs.Extension(f))
		in, err := codecs.NewReader(bytes.NewReader(body), "export", codecs.Options{Format: f})
		require.NoError(t, err)
		var titles []string
		for {
			rec, err := in.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			require.Empty(t, rec.Problem, "%s export re-imports cleanly", f)
			titles = append(titles, rec.Paper.Title)
		}
		require.Contains(t, titles, "Upload test paper on measles vaccination", f)
		require.Contains(t, titles, "Second uploaded paper about herd immunity", f)
	}
	r, err := c.Get(w.srv.URL + "/library/export?format=docx")
	require.NoError(t, err)
	r.Body.Close()
	require.Equal(t, http.StatusUnprocessableEntity, r.StatusCode)
}

func TestLibraryUploadRejectsUnreadableFiles(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	c := newClient(t)
	w.signIn(t, c, "Ada")
	_, page := w.get(t, c, "/library")
	token := csrf(page)

	cases := map[string]struct {
		name, content string
		fields        map[string]string
		want          string
	}{
		"NoFile":        {"", "", nil, "Choose a file"},
		"Unrecognised":  {"notes.txt", "just some prose\n", nil, "cannot tell the file's format"},
		"UnknownFormat": {"x.ris", sampleRIS, map[string]string{"format": "docx"}, "unknown format"},
		"BadColumns":    {"x.csv", "Title\nx\n", map[string]string{"columns": "title"}, "field=Header"},
		"BadEncoding":   {"x.ris", sampleRIS, map[string]string{"encoding": "klingon"}, "unknown encoding"},
	}
	for name, tc := range cases {
		res, doc := w.upload(t, c, token, tc.name, tc.content, tc.fields)
		require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, name)
		require.Contains(t, doc.Find(`[data-testid="import-error"]`).Text(), tc.want, name)
		if v, ok := tc.fields["columns"]; ok {
			require.Equal(t, v, doc.Find(`[data-testid="import-columns"]`).AttrOr("value", ""), "%s: the form keeps what was typed", name)
		}
		if v, ok := tc.fields["encoding"]; ok {
			require.Equal(t, v, doc.Find(`[data-testid="import-encoding"]`).AttrOr("value", ""), "%s: the form keeps what was typed", name)
		}
	}
}
