package handlers_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/report/prisma"
)

// TestPrismaDiagram runs a search of two iterations to the end, marking
// papers in both, and checks every box of GET /runs/:id/prisma.svg
// against the run's own counts: the history the API returns (records per
// source, the deduplication), the papers each review page showed and the
// marks the test made. The completed page shows the diagram and offers it
// as a download; the SVG is well-formed XML.
func TestPrismaDiagram(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	runPath, doc := w.startReview(t, "2")
	runID := strings.TrimPrefix(runPath, "/runs/")

	marks := map[string]string{} // latest mark per paper, as the test made them
	shown := map[string]bool{}
	review := func(action string, pick func(ids []string)) {
		t.Helper()
		ids := paperIDs(doc)
		require.GreaterOrEqual(t, len(ids), 3)
		for _, id := range ids {
			shown[id] = true
		}
		pick(ids)
		form := url.Values{"_csrf": {csrf(doc)}, "action": {action}}
		for _, id := range ids {
			if m := marks[id]; m != "" {
				form.Set("mark:"+id, m) // a paper shown again keeps its mark
			}
		}
		res, _ := w.post(t, w.client, doc.Find(`form[data-testid="review-form"]`).AttrOr("action", ""), form)
		require.Equal(t, http.StatusOK, res.StatusCode)
	}
	review("edit", func(ids []string) {
		marks[ids[0]], marks[ids[1]], marks[ids[2]] = "relevant", "irrelevant", "relevant"
	})
	st := w.waitFor(t, runID, "waiting")
	require.Equal(t, "result_review", st.Checkpoint.Kind)
	_, doc = w.get(t, w.client, runPath)
	review("approve", func(ids []string) {
		var fresh []string
		for _, id := range ids {
			if marks[id] == "" {
				fresh = append(fresh, id)
			}
		}
		if len(fresh) > 0 {
			marks[fresh[len(fresh)-1]] = "irrelevant"
		}
	})
	st = w.waitFor(t, runID, "completed")

	// The run's own counts.
	identified, input, output := 0, 0, 0
	perSource := map[string]int{}
	for _, h := range st.History {
		for name, r := range h.Sources {
			identified += r.Count
			perSource[name] += r.Count
		}
		input += h.Dedup.Input
		output += h.Dedup.Output
	}
	included, excluded := 0, 0
	for _, m := range marks {
		if m == "relevant" {
			included++
		} else {
			excluded++
		}
	}
	require.Len(t, st.AccumulatedPapers, included, "the run kept the relevant marks the test made")
	want := map[string]int{
		prisma.BoxIdentified:  identified,
		prisma.BoxRemoved:     identified - len(shown),
		prisma.BoxPresented:   len(shown),
		prisma.BoxNotScreened: len(shown) - len(marks),
		prisma.BoxScreened:    len(marks),
		prisma.BoxExcluded:    excluded,
		prisma.BoxIncluded:    included,
	}
	require.Positive(t, input-output, "the two sources return some papers twice: duplicates were removed")

	_, page := w.get(t, w.client, runPath)
	img := page.Find(`[data-testid="prisma"] img[data-testid="prisma-diagram"]`)
	require.Equal(t, runPath+"/prisma.svg", img.AttrOr("src", ""))
	require.NotEmpty(t, img.AttrOr("alt", ""))
	require.Equal(t, runPath+"/prisma.svg", page.Find(`[data-testid="prisma-download"]`).AttrOr("href", ""))

	res, body := w.download(t, runPath+"/prisma.svg")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "image/svg+xml"))
	require.Contains(t, res.Header.Get("Content-Disposition"), "quarry-run-"+runID+"-prisma.svg")
	require.Contains(t, res.Header.Get("Content-Security-Policy"), "default-src 'none'")

	got, lines := svgBoxes(t, []byte(body))
	require.Equal(t, want, got)
	require.Equal(t, perSource, lines[prisma.BoxIdentified], "records identified per source")
	require.Equal(t, map[string]int{prisma.ReasonNotRecorded: excluded}, lines[prisma.BoxExcluded])
	require.Equal(t, input-output, lines[prisma.BoxRemoved]["Duplicate records removed"])
	require.Contains(t, body, "sleep and memory consolidation", "the question is the diagram's title")

	res, _ = w.download(t, "/runs/nope/prisma.svg")
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}

// svgBoxes reads a PRISMA SVG strictly (it must be well-formed XML) into
// each box's number and each box's labelled lines.
func svgBoxes(t *testing.T, svg []byte) (boxes map[string]int, lines map[string]map[string]int) {
	t.Helper()
	boxes, lines = map[string]int{}, map[string]map[string]int{}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	dec.Strict = true
	box := ""
	var text *struct {
		label string
		n     int
	}
	var chars strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "the SVG is well-formed XML")
		switch tk := tok.(type) {
		case xml.StartElement:
			attr := func(name string) string {
				i := slices.IndexFunc(tk.Attr, func(a xml.Attr) bool { return a.Name.Local == name })
				if i < 0 {
					return ""
				}
				return tk.Attr[i].Value
			}
			if b := attr("data-box"); tk.Name.Local == "g" && b != "" {
				box = b
				n, err := strconv.Atoi(attr("data-n"))
				require.NoError(t, err)
				boxes[b] = n
			}
			if l := attr("data-label"); tk.Name.Local == "text" && l != "" {
				n, err := strconv.Atoi(attr("data-n"))
				require.NoError(t, err)
				text = &struct {
					label string
					n     int
				}{l, n}
				chars.Reset()
			}
		case xml.CharData:
			chars.Write(tk)
		case xml.EndElement:
			if tk.Name.Local == "g" {
				box = ""
			}
			if tk.Name.Local == "text" && text != nil {
				require.True(t, strings.HasSuffix(chars.String(), fmt.Sprintf("(n = %d)", text.n)), chars.String())
				if lines[box] == nil {
					lines[box] = map[string]int{}
				}
				lines[box][text.label] = text.n
				text = nil
			}
		}
	}
	return boxes, lines
}
