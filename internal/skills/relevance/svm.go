package relevance

import (
	"math"
	"math/rand/v2"

	"quarry/internal/skills/text"
)

// svmMaxEpochs bounds the solver; it usually converges in a few dozen
// passes, and a bound keeps a pathological ranking from stalling a run.
const svmMaxEpochs = 200

// svmExample is one training paper of the SVM: its features, its class
// (+1 relevant, -1 irrelevant) and its cost.
type svmExample struct {
	v text.Vector
	y float64
	c float64
}

// svm fits a linear SVM (L2-regularised hinge loss, liblinear's L1-loss
// SVC) on the marks by dual coordinate descent (Hsieh et al. 2008) and
// returns its weights and bias. The plain hinge, not the squared hinge of
// liblinear's default: a mark far on the wrong side of the margin (a
// relevant paper in an unusual subtopic) pulls the weights linearly, not
// quadratically, so a few odd marks do not drag the ranking toward them.
// On the screening benchmark it finds the last includes of the largest
// review sooner (docs/screening.md has the figures and how C was chosen).
// Costs are class-balanced so a few relevant marks weigh as much as
// hundreds of irrelevant ones; the question counts as a relevant paper as
// in naive Bayes. The visiting order is a fixed function of the number of
// marks, so a ranking is reproducible.
func (x *Index) svm(relevant, irrelevant []int) ([]float64, float64) {
	npos, nneg := float64(len(relevant)), float64(len(irrelevant))
	qw := 0.0
	if x.qvec.Len() > 0 && x.p.queryDocW > 0 {
		qw = x.p.queryDocW
	}
	npos += qw
	cp, cn := x.p.svmC, x.p.svmC
	if npos > 0 && nneg > 0 {
		cp = x.p.svmC * (npos + nneg) / (2 * npos)
		cn = x.p.svmC * (npos + nneg) / (2 * nneg)
	}
	exs := make([]svmExample, 0, len(relevant)+len(irrelevant)+1)
	if qw > 0 {
		exs = append(exs, svmExample{x.qvec, 1, cp * qw})
	}
	for _, i := range relevant {
		exs = append(exs, svmExample{x.docs[i].vec, 1, cp})
	}
	for _, i := range irrelevant {
		exs = append(exs, svmExample{x.docs[i].vec, -1, cn})
	}
	w := make([]float64, x.tfidf.Dim())
	var b float64 // the bias is a constant feature of value 1, as in liblinear
	alpha := make([]float64, len(exs))
	diag := make([]float64, len(exs))
	for k, e := range exs {
		diag[k] = e.v.Dot(e.v) + 1
	}
	rng := rand.New(rand.NewPCG(uint64(len(relevant)), uint64(len(irrelevant))))
	order := rng.Perm(len(exs))
	for range svmMaxEpochs {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		maxPG, minPG := math.Inf(-1), math.Inf(1)
		for _, k := range order {
			e := exs[k]
			g := e.y*(e.v.DotDense(w)+b) - 1
			pg := g // projected gradient: alpha stays within [0, c]
			if alpha[k] == 0 && g > 0 || alpha[k] == e.c && g < 0 {
				pg = 0
			}
			maxPG, minPG = max(maxPG, pg), min(minPG, pg)
			if pg == 0 {
				continue
			}
			old := alpha[k]
			alpha[k] = min(max(old-g/diag[k], 0), e.c)
			d := (alpha[k] - old) * e.y
			e.v.AddTo(w, d)
			b += d
		}
		if maxPG-minPG < 0.01 {
			break
		}
	}
	return w, b
}
