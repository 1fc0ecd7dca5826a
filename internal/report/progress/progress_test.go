package progress_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/report/progress"
	"quarry/internal/research"
)

func events(pairs ...string) []research.Mark {
	var out []research.Mark
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, research.Mark{PaperID: pairs[i], Mark: pairs[i+1]})
	}
	return out
}

// svgOf draws p and checks the document is well-formed XML, returning it.
func svgOf(t *testing.T, p progress.Plot, caption string) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, p.WriteSVG(&buf, caption))
	dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "well-formed XML")
	}
	return buf.String()
}

// rootAttr is an attribute of the document's <svg> element.
func rootAttr(t *testing.T, doc, name string) string {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(doc))
	for {
		tok, err := dec.Token()
		require.NoError(t, err)
		if se, ok := tok.(xml.StartElement); ok {
			require.Equal(t, "svg", se.Name.Local)
			for _, a := range se.Attr {
				if a.Name.Local == name {
					return a.Value
				}
			}
			return ""
		}
	}
}

// TestWriteSVG: the plot carries its numbers (data attributes, title and
// desc), escapes the caption, and uses no <style> (so a page's policy
// cannot strip its look).
func TestWriteSVG(t *testing.T) {
	t.Parallel()
	p := progress.Of(events("a", "relevant", "b", "irrelevant", "c", "relevant", "a", "relevant", "d", "unsure"))
	doc := svgOf(t, p, `sleep <&> "memory"`)
	require.Equal(t, "3", rootAttr(t, doc, "data-screened"))
	require.Equal(t, "2", rootAttr(t, doc, "data-relevant"))
	require.Equal(t, "1:1 2:1 3:2", rootAttr(t, doc, "data-points"))
	require.Equal(t, "img", rootAttr(t, doc, "role"))
	require.Contains(t, doc, "<title id=\"progress-title\">Screening progress: sleep &lt;&amp;&gt; &#34;memory&#34;</title>")
	require.Contains(t, doc, "3 papers screened, 2 relevant.")
	require.Contains(t, doc, "1 relevant after 1 screened; 2 relevant after 3 screened")
	require.Contains(t, doc, `data-curve="gain"`)
	require.NotContains(t, doc, "<style")
	require.NotContains(t, doc, "data-knee", "three papers have no knee")
}

// TestWriteSVGEmpty: a run with nothing screened still draws its axes and
// says so.
func TestWriteSVGEmpty(t *testing.T) {
	t.Parallel()
	doc := svgOf(t, progress.Of(events("a", "unsure")), "q")
	require.Equal(t, "0", rootAttr(t, doc, "data-screened"))
	require.Equal(t, "", rootAttr(t, doc, "data-points"))
	require.Contains(t, doc, "No paper screened yet")
	require.Contains(t, doc, "no paper screened yet.")
	require.NotContains(t, doc, `data-curve`)
}

// TestWriteSVGKnee: a long run marks its knee, and its text alternative
// stays short (relevant steps sampled) while naming the totals.
func TestWriteSVGKnee(t *testing.T) {
	t.Parallel()
	var evs []research.Mark
	for i := range 400 {
		m := research.MarkIrrelevant
		if i < 80 && i%2 == 0 {
			m = research.MarkRelevant
		}
		evs = append(evs, research.Mark{PaperID: fmt.Sprint("p", i), Mark: m})
	}
	p := progress.Of(evs)
	require.True(t, p.Knee.Found)
	doc := svgOf(t, p, "q")
	require.Contains(t, doc, fmt.Sprintf(`data-knee="%d:%d"`, p.Knee.At.Screened, p.Knee.At.Relevant))
	require.Contains(t, doc, "400 papers screened, 40 relevant.")
	require.Contains(t, doc, "The curve bends at 79 screened (40 relevant).")
	desc := p.Description()
	require.Equal(t, 25, strings.Count(desc, " relevant after "), desc)
	require.Contains(t, desc, "1 relevant after 1 screened;")
	require.Contains(t, desc, "40 relevant after 79 screened.")
}
