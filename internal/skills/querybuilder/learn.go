package querybuilder

import (
	"math"
	"slices"
	"sort"
	"strings"

	"quarry/internal/research"
	"quarry/internal/skills/text"
)

// Constants of learning from marks (see docs/architecture.md, "Learning
// from feedback"); each says how it was chosen.
const (
	// minRelevantDF: an expansion term is in at least two papers marked
	// relevant (set by reasoning). One paper's words are that paper's, not the topic's
	// (marking Viewstamped Replication relevant taught "primary",
	// "available" and "copy").
	minRelevantDF = 2
	// minIrrelevantDF: a learned exclusion is in at least three papers
	// marked irrelevant (and a third of them): two papers that share a
	// word ("fast", "glass") are not a pattern (set by reasoning).
	minIrrelevantDF = 3
	// minLift: an expansion term is at least twice as common among the
	// relevant papers as in the whole collection, so a word every result
	// uses is never learned (set by reasoning).
	minLift = 2.0
	// minExclusionLift: a learned exclusion is at least six times as
	// common among the irrelevant papers as in the whole collection.
	// Chosen by leave-one-review-out over the screening benchmark among
	// 2, 3, 4 and 6 (TestLearnedTermsOnScreeningData): at 2, learned
	// exclusions removed about as many unseen included records (12%) as
	// excluded ones (15%) and scored -0.076 (removed - 2*lost per
	// iteration); 6 was chosen in 11 of 12 folds, held-out -0.003. In a
	// review the irrelevant papers are near the topic, so an exclusion
	// must name something the rest of the collection hardly uses.
	minExclusionLift = 6.0
)

// genericWords are words of academic prose that name no topic: how papers
// are written ("novel", "fast", "approach", "results"), not what they are
// about. No learned term is one of them. The list is about register, not
// any field, so a topic word ("memory", "glass") is never on it.
var genericWords = func() map[string]bool {
	ws := strings.Fields(`new novel fast faster high higher low lower large small based using use used uses
		approach approaches method methods result results study studies paper papers propose proposed proposes
		present presents presented show shows shown showed analysis analyses data effect effects performance
		available support supports supported system systems problem problems application applications case cases
		first second third one two three four important significant significantly different various several
		improve improved improves improvement provide provides provided evaluate evaluated evaluation experiment
		experiments experimental technique techniques framework work works research review including however
		recent recently current currently future highly efficient efficiently effective effectiveness simple
		general specific existing better best good level levels increase increased increasing decrease decreased
		reduce reduced reduces total number time times year years group groups compared comparison associated
		obtained found observed suggest suggests suggested demonstrate demonstrates demonstrated according
		respectively across many multiple main major key type types form set range process processes role impact
		factor factors condition conditions aim aims purpose objective objectives conclusion conclusions background
		finding findings report reports reported describe described discuss discussed investigate investigated
		examine examined determine determined identify identified potential possible introduce introduces
		achieve achieves achieved state art outperform outperforms task tasks primary copy way ways able
		well also whereas among total overall due related relevant important including include includes
		article articles journal volume issue abstract introduction doi model models modeling modelling`)
	out := make(map[string]bool, len(ws))
	for _, w := range ws {
		out[text.Stem(w)] = true
	}
	return out
}()

// doc is a paper as the learners see it: its stems, the stems of its
// title, and the surface form of each stem.
type doc struct {
	id    string
	stems map[string]bool
	title map[string]bool
	words map[string]string
}

func newDoc(p research.RawPaper) doc {
	d := doc{id: p.ID, stems: map[string]bool{}, title: map[string]bool{}, words: map[string]string{}}
	for _, t := range text.Terms(p.Title) {
		d.title[t.Stem] = true
	}
	for _, t := range text.Terms(p.Title + " " + p.Abstract) {
		d.stems[t.Stem] = true
		if _, ok := d.words[t.Stem]; !ok {
			d.words[t.Stem] = t.Word
		}
	}
	// Hyphenated and apostrophised words split into parts; a part is
	// in the paper too ("glass-forming" uses "glass").
	for _, w := range text.Words(p.Title + " " + p.Abstract) {
		d.stems[text.Stem(w)] = true
	}
	return d
}

// learned is a term learned from marked papers, with the papers it is in.
type learnedWord struct {
	word   string
	papers []string
	score  float64
}

// distinctive returns up to limit words distinctive of the "toward"
// papers against the background (every paper of the collection and the
// marks): in at least minDF of them, minLift times as common among them
// as in the background, not a known or generic word, and none used by an
// "avoid" paper. They are ranked by the smoothed log-odds ratio of their
// document frequency among the toward papers over the background's
// (Monroe, Colaresi & Quinn 2008, with a 0.5 prior), then by that
// frequency, then alphabetically, so the same marks always give the same
// words. inTitle asks that the word be in a toward paper's title.
func distinctive(toward, background, avoid []doc, known map[string]bool, minDF int, inTitle bool, limit int, minLift float64) []learnedWord {
	if len(toward) < minDF || len(background) == 0 {
		return nil
	}
	avoided := map[string]bool{}
	for _, d := range avoid {
		for s := range d.stems {
			avoided[s] = true
		}
	}
	bgDF := map[string]int{}
	for _, d := range background {
		for s := range d.stems {
			bgDF[s]++
		}
	}
	type stat struct {
		df      int
		title   bool
		papers  []string
		surface map[string]int
	}
	stats := map[string]*stat{}
	for _, d := range toward {
		for s := range d.stems {
			w, ok := d.words[s]
			if !ok || known[s] || genericWords[s] || avoided[s] || len(w) < 3 {
				continue
			}
			st := stats[s]
			if st == nil {
				st = &stat{surface: map[string]int{}}
				stats[s] = st
			}
			st.df++
			st.title = st.title || d.title[s]
			st.papers = append(st.papers, d.id)
			st.surface[w]++
		}
	}
	nT, nB := float64(len(toward)), float64(len(background))
	var out []learnedWord
	for s, st := range stats {
		b := max(bgDF[s], st.df) // the toward papers are in the background
		lift := (float64(st.df) / nT) / (float64(b) / nB)
		if st.df < minDF || inTitle && !st.title || lift < minLift {
			continue
		}
		score := math.Log((float64(st.df)+0.5)/(nT-float64(st.df)+0.5)) - math.Log((float64(b)+0.5)/(nB-float64(b)+0.5))
		out = append(out, learnedWord{word: mostUsed(st.surface), papers: slices.Sorted(slices.Values(st.papers)), score: score})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		if len(out[i].papers) != len(out[j].papers) {
			return len(out[i].papers) > len(out[j].papers)
		}
		return out[i].word < out[j].word
	})
	return out[:min(len(out), limit)]
}

// background is every paper of the collection and the marks, once each.
func background(collection []research.RawPaper, marked ...[]research.RawPaper) []doc {
	var out []doc
	seen := map[string]bool{}
	for _, list := range append([][]research.RawPaper{collection}, marked...) {
		for _, p := range list {
			key := p.ID
			if key == "" {
				key = research.StableID(p)
			}
			if !seen[key] {
				seen[key] = true
				out = append(out, newDoc(p))
			}
		}
	}
	return out
}

func docs(ps []research.RawPaper) []doc {
	out := make([]doc, len(ps))
	for i, p := range ps {
		out[i] = newDoc(p)
	}
	return out
}

// usedBy reports whether a paper among ds uses term: one of its words, up
// to the stem, or a phrase of them. A learned exclusion must never be.
func usedBy(ds []doc, term string) bool {
	stems := text.Tokenize(term)
	if len(stems) == 0 {
		return false
	}
	for _, d := range ds {
		all := true
		for _, s := range stems {
			all = all && d.stems[s]
		}
		if all {
			return true
		}
	}
	return false
}
