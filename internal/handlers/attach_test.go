package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/require"

	"quarry/internal/app"
	"quarry/internal/engine"
	"quarry/internal/handlers"
	"quarry/internal/handlers/testapp"
	"quarry/internal/store"
)

// embaseRIS is an export from a database Quarry cannot search: one record
// the test library also has (same DOI as a library paper is not needed:
// these are new papers) and one malformed record.
const embaseRIS = "TY  - JOUR\r\n" +
	"AU  - Okafor, Ngozi\r\n" +
	"TI  - Sleep spindles and overnight memory consolidation in older adults\r\n" +
	"PY  - 2021\r\n" +
	"AB  - Sleep spindles predicted memory consolidation overnight.\r\n" +
	"DO  - 10.5555/embase.1\r\n" +
	"ER  - \r\n" +
	"TY  - JOUR\r\n" +
	"AU  - Broken, Record\r\n" +
	"ER  - \r\n" +
	"TY  - JOUR\r\n" +
	"AU  - Haddad, Lina\r\n" +
	"TI  - Slow-wave sleep enhancement improves declarative memory\r\n" +
	"PY  - 2022\r\n" +
	"ER  - \r\n"

// formValues collects what a browser would submit from a form: text and
// number inputs, ticked checkboxes, selects' first/selected option.
func formValues(form *goquery.Selection) url.Values {
	v := url.Values{}
	form.Find("input").Each(func(_ int, in *goquery.Selection) {
		name, ok := in.Attr("name")
		if !ok {
			return
		}
		switch in.AttrOr("type", "text") {
		case "checkbox", "radio":
			if _, checked := in.Attr("checked"); checked {
				v.Add(name, in.AttrOr("value", "on"))
			}
		case "file", "submit":
		default:
			v.Add(name, in.AttrOr("value", ""))
		}
	})
	return v
}

// postMultipart submits values and an optional file as multipart/form-data.
func (w *web) postMultipart(t *testing.T, c *http.Client, path string, v url.Values, field, name, content string) (*http.Response, *goquery.Document) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, vs := range v {
		for _, x := range vs {
			require.NoError(t, mw.WriteField(k, x))
		}
	}
	if name != "" {
		fw, err := mw.CreateFormFile(field, name)
		require.NoError(t, err)
		_, err = io.WriteString(fw, content)
		require.NoError(t, err)
	}
	require.NoError(t, mw.Close())
	res, err := c.Post(w.srv.URL+path, mw.FormDataContentType(), &body)
	require.NoError(t, err)
	defer res.Body.Close()
	doc, err := goquery.NewDocumentFromReader(res.Body)
	require.NoError(t, err)
	return res, doc
}

func TestAttachAFileAtTheStrategyCheckpoint(t *testing.T) {
	t.Parallel()
	w, c, runID, st := startAtStrategyWithFiles(t)
	require.Equal(t, "strategy_confirmation", st.Checkpoint.Kind)
	action := "/runs/" + runID + "/checkpoints/" + st.Checkpoint.ID + "/strategy"

	_, page := w.get(t, c, "/runs/"+runID)
	form := page.Find(`[data-testid="strategy-form"]`)
	require.Equal(t, "multipart/form-data", form.AttrOr("enctype", ""))
	vals := formValues(form)

	// A file Quarry cannot read is refused with the reason; nothing attached.
	bad := cloneVals(vals)
	bad.Set("op", "attach")
	res, doc := w.postMultipart(t, c, action, bad, "attach", "notes.txt", "just prose\n")
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Contains(t, doc.Find(`[data-testid="attach-error"]`).Text(), "cannot tell the file's format")
	require.Zero(t, doc.Find(`[data-testid="attached-file"]`).Length())

	// Attaching re-renders the form with the file listed and ticked, and
	// says what was read and what was skipped.
	att := cloneVals(vals)
	att.Set("op", "attach")
	res, doc = w.postMultipart(t, c, action, att, "attach", "embase.ris", embaseRIS)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, doc.Find(`[data-testid="attached-file"]`).Text(), "embase.ris")
	require.Contains(t, doc.Find(`[data-testid="attached-file"]`).Text(), "2 records")
	msg := doc.Find(`[data-testid="attach-message"]`).Text()
	require.Contains(t, msg, "1 skipped (first at line 8: missing title)")

	// Approving with the file ticked searches with it.
	approve := formValues(doc.Find(`[data-testid="strategy-form"]`))
	approve.Set("action", "approve")
	res, _ = w.postMultipart(t, c, action, approve, "", "", "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	st = w.waitFor(t, runID, "waiting")
	require.Equal(t, "result_review", st.Checkpoint.Kind)
	var payload struct {
		Collection struct {
			Papers []struct {
				ID, Title string
				Sources   []string
				Source    string
			} `json:"papers"`
			Sources map[string]struct{ Count int } `json:"sources"`
		} `json:"collection"`
	}
	require.NoError(t, json.Unmarshal(st.Checkpoint.Payload, &payload))
	require.Equal(t, 2, payload.Collection.Sources["file: embase.ris"].Count, "the file counts as a source of the search")
	var fromFile []string
	for _, p := range payload.Collection.Papers {
		if p.Source == "file: embase.ris" || strings.Contains(strings.Join(p.Sources, ","), "file: embase.ris") {
			fromFile = append(fromFile, p.Title)
		}
	}
	require.ElementsMatch(t, []string{"Sleep spindles and overnight memory consolidation in older adults", "Slow-wave sleep enhancement improves declarative memory"}, fromFile,
		"the file's records are scored and reviewed with the searched ones")

	// The review list exports with the file's papers in it.
	r, err := c.Get(w.srv.URL + "/api/runs/" + runID + "/export?set=review&format=ris")
	require.NoError(t, err)
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	require.Equal(t, http.StatusOK, r.StatusCode)
	require.Contains(t, string(body), "Sleep spindles and overnight memory consolidation in older adults")

	// The search-strategy report says the file was attached, not queried:
	// no query, years or limit is invented for it.
	r, err = c.Get(w.srv.URL + "/runs/" + runID + "/report.md")
	require.NoError(t, err)
	body, _ = io.ReadAll(r.Body)
	r.Body.Close()
	require.Equal(t, http.StatusOK, r.StatusCode)
	require.Contains(t, string(body), "### file: embase.ris\n\nFile attached: embase.ris (2 records), not queried.\n")
}

// startAtStrategyWithFiles starts a run of the workflow that reads attached
// files, signed in as Ada, and waits for its strategy checkpoint.
func startAtStrategyWithFiles(t *testing.T) (*web, *http.Client, string, handlers.RunJSON) {
	t.Helper()
	a, err := newApp(t, context.Background(), app.Config{OpenMode: true, Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "q.db")},
		app.WithWorkflowsFrom(func(st *store.Store) (*engine.Registry, error) { return testapp.RegistryWithFiles(st) }))
	require.NoError(t, err)
	w := serveApp(t, a)
	c := newClient(t)
	w.signIn(t, c, "Ada")
	_, home := w.get(t, c, "/")
	res, _ := w.post(t, c, "/runs", url.Values{"_csrf": {csrf(home)}, "question": {"sleep and memory consolidation"}, "max_iterations": {"2"},
		"strategy_checkpoint": {"true"}, "sources": testapp.Sources})
	require.Equal(t, http.StatusOK, res.StatusCode)
	runID := strings.TrimPrefix(res.Request.URL.Path, "/runs/")
	st := w.waitFor(t, runID, "waiting")
	return w, c, runID, st
}
