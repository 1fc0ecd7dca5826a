package prisma_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/report/prisma"
	"quarry/internal/research"
)

// ids is p<from>..p<to>.
func ids(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("p%d", i))
	}
	return out
}

// element is one element of the SVG with its attributes and text.
type element struct {
	name  string
	attrs map[string]string
	text  string
	box   string // data-box of the enclosing group
}

// parse decodes the SVG strictly (well-formed XML or the test fails) and
// lists its elements.
func parse(t *testing.T, svg []byte) []element {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	dec.Strict = true
	var out []element
	var stack []int
	box := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "the SVG is well-formed XML")
		switch tk := tok.(type) {
		case xml.StartElement:
			e := element{name: tk.Name.Local, attrs: map[string]string{}}
			for _, a := range tk.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			if b, ok := e.attrs["data-box"]; ok && e.name == "g" {
				box = b
			}
			e.box = box
			out = append(out, e)
			stack = append(stack, len(out)-1)
		case xml.CharData:
			if len(stack) > 0 {
				out[stack[len(stack)-1]].text += string(tk)
			}
		case xml.EndElement:
			if tk.Name.Local == "g" {
				box = ""
			}
			stack = stack[:len(stack)-1]
		}
	}
	require.Empty(t, stack)
	return out
}

// TestFlowBoxesMatchTheRunsOwnCounts draws a two-iteration run with an
// attached file, records without a title, duplicates within each search,
// papers found again in iteration 2, a paper marked relevant then
// irrelevant, and exclusion reasons for some papers, and checks every
// box's number (the group's data-n and its "(n = …)" text) and every
// per-source and per-reason line against counts the test takes from the
// same history itself.
func TestFlowBoxesMatchTheRunsOwnCounts(t *testing.T) {
	t.Parallel()
	const file = `file: embase <"export"> & more.ris`
	history := []research.IterationRecord{
		{Iteration: 1, ResultCount: 40,
			Strategy: research.SearchStrategy{Sources: []string{"local", "openalex"}},
			Sources: map[string]research.SourceResult{
				"local":    {Count: 25, Queries: []string{"q"}, QueryResults: []research.QueryResult{{Count: 25, Total: 49}}},
				"openalex": {Count: 20},
				file:       {Count: 5},
			},
			Dedup: research.DedupStats{Input: 48, Output: 40, Merged: 8}},
		{Iteration: 2, ResultCount: 30,
			Strategy: research.SearchStrategy{Sources: []string{"local", "openalex"}},
			Sources: map[string]research.SourceResult{
				"local":    {Count: 25},
				"openalex": {Count: 10},
			},
			Dedup: research.DedupStats{Input: 35, Output: 30, Merged: 5}},
		// Searched but the run ended before its review: nothing of it was
		// presented, so none of it counts.
		{Iteration: 3, Strategy: research.SearchStrategy{Sources: []string{"local"}},
			Sources: map[string]research.SourceResult{"local": {Count: 7}}, Dedup: research.DedupStats{Input: 7, Output: 7}},
	}
	reviews := []prisma.Review{{Iteration: 1, PaperIDs: ids(1, 40)}, {Iteration: 2, PaperIDs: ids(31, 60)}}
	relevant := append(ids(1, 5), "p45")
	irrelevant := append(ids(6, 10), "p46", "p1") // p1 marked relevant, then irrelevant
	reasons := map[string]string{"p6": "population", "p7": "population", "p8": "study <design>"}
	in := prisma.Input{History: history, Reviews: reviews, Relevant: relevant, Irrelevant: irrelevant,
		ExclusionReason: func(id string) string { return reasons[id] }}

	// The run's own counts, taken from the history as a reader would.
	reviewed := map[int]bool{1: true, 2: true}
	identified, perSource := 0, map[string]int{}
	input, output := 0, 0
	for _, h := range history {
		if !reviewed[h.Iteration] {
			continue
		}
		for name, r := range h.Sources {
			identified += r.Count
			perSource[name] += r.Count
		}
		input += h.Dedup.Input
		output += h.Dedup.Output
	}
	shown := map[string]bool{}
	for _, r := range reviews {
		for _, id := range r.PaperIDs {
			shown[id] = true
		}
	}
	excludedSet := map[string]bool{}
	for _, id := range irrelevant {
		excludedSet[id] = true
	}
	includedSet := map[string]bool{}
	for _, id := range relevant {
		if !excludedSet[id] {
			includedSet[id] = true
		}
	}
	noTitle, duplicates, repeats := identified-input, input-output, output-len(shown)
	want := map[string]int{
		prisma.BoxIdentified:  identified,
		prisma.BoxRemoved:     noTitle + duplicates + repeats,
		prisma.BoxPresented:   len(shown),
		prisma.BoxNotScreened: len(shown) - len(excludedSet) - len(includedSet),
		prisma.BoxScreened:    len(excludedSet) + len(includedSet),
		prisma.BoxExcluded:    len(excludedSet),
		prisma.BoxIncluded:    len(includedSet),
	}
	require.Equal(t, map[string]int{"identified": 85, "removed": 25, "presented": 60, "not-screened": 48, "screened": 12, "excluded": 7, "included": 5}, want,
		"the fixture's counts, worked out by hand")
	wantLines := map[string]map[string]int{
		prisma.BoxIdentified: {"local": perSource["local"], "openalex": perSource["openalex"], strings.TrimPrefix(file, "file: "): perSource[file]},
		prisma.BoxRemoved:    {"Duplicate records removed": duplicates, "Found again in a later iteration": repeats, "Records without a title": noTitle},
		prisma.BoxExcluded:   {"population": 2, "study <design>": 1, prisma.ReasonNotRecorded: 4},
	}

	var buf bytes.Buffer
	require.NoError(t, prisma.Build(in).WriteSVG(&buf, `sleep & <memory>`))
	els := parse(t, buf.Bytes())

	gotBoxes := map[string]int{}
	heads := map[string]string{}
	gotLines := map[string]map[string]int{}
	for _, e := range els {
		switch {
		case e.name == "g" && e.attrs["data-box"] != "":
			n, err := strconv.Atoi(e.attrs["data-n"])
			require.NoError(t, err)
			gotBoxes[e.attrs["data-box"]] = n
		case e.name == "text" && e.box != "" && e.attrs["font-weight"] == "600":
			heads[e.box] = e.text
		case e.name == "text" && e.attrs["data-label"] != "":
			n, err := strconv.Atoi(e.attrs["data-n"])
			require.NoError(t, err)
			if gotLines[e.box] == nil {
				gotLines[e.box] = map[string]int{}
			}
			gotLines[e.box][e.attrs["data-label"]] = n
			require.True(t, strings.HasSuffix(e.text, fmt.Sprintf("(n = %d)", n)), "line %q says its number", e.text)
		}
	}
	require.Equal(t, want, gotBoxes)
	for name, n := range want {
		require.True(t, strings.HasSuffix(heads[name], fmt.Sprintf("(n = %d)", n)), "box %s says %q", name, heads[name])
	}
	require.Equal(t, wantLines, gotLines)

	// The boxes add up, as PRISMA's flow must.
	require.Equal(t, want[prisma.BoxPresented], want[prisma.BoxIdentified]-want[prisma.BoxRemoved])
	require.Equal(t, want[prisma.BoxScreened], want[prisma.BoxPresented]-want[prisma.BoxNotScreened])
	require.Equal(t, want[prisma.BoxIncluded], want[prisma.BoxScreened]-want[prisma.BoxExcluded])

	// Text from the run is escaped, never markup.
	svg := buf.String()
	require.Contains(t, svg, "sleep &amp; &lt;memory&gt;")
	require.Contains(t, svg, "embase &lt;&#34;export&#34;&gt; &amp; more.ris")
	require.NotContains(t, svg, "<memory>")
	require.NotContains(t, svg, "<design>")
}

// TestFlowOfARunNotYetReviewed: nothing was presented, so every box is 0
// and the SVG is still a well-formed document.
func TestFlowOfARunNotYetReviewed(t *testing.T) {
	t.Parallel()
	f := prisma.Build(prisma.Input{History: []research.IterationRecord{{Iteration: 1,
		Sources: map[string]research.SourceResult{"local": {Count: 3}}, Dedup: research.DedupStats{Input: 3, Output: 3}}}})
	require.Equal(t, prisma.Flow{}, f)
	var buf bytes.Buffer
	require.NoError(t, f.WriteSVG(&buf, "q"))
	for _, e := range parse(t, buf.Bytes()) {
		if e.name == "g" && e.attrs["data-box"] != "" {
			require.Equal(t, "0", e.attrs["data-n"], e.attrs["data-box"])
		}
	}
}
