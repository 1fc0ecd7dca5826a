package research

// Agreement is how far two screeners agreed on the papers both of them
// rated, the figure a systematic review reports for dual screening.
type Agreement struct {
	Items   int     // papers both raters labelled
	Agreed  int     // of those, papers given the same label
	Percent float64 // 100 * Agreed / Items; 0 when Items is 0
	// Kappa is Cohen's kappa, agreement corrected for what the raters'
	// label frequencies would give by chance: 1 is perfect, 0 chance-level,
	// below 0 worse than chance.
	Kappa float64
	// KappaDefined is false when kappa has no value: no common items, or
	// chance agreement of 1 (both raters gave every item one and the same
	// label), where kappa is 0/0. Kappa is then 0; report it as "n/a", not
	// as 0 or 1.
	KappaDefined bool
}

// CohenKappa compares two raters' labels (item ID → label, e.g. "include",
// "exclude", "unsure") over the items both labelled; an empty label counts
// as not rated. Kappa is (po − pe) / (1 − pe), po the observed agreement
// and pe the chance agreement Σ_l (a's share of l)·(b's share of l). It is
// computed in integers until the last division, so it is exactly
// symmetric in a and b and unchanged by renaming labels.
func CohenKappa(a, b map[string]string) Agreement {
	countA := map[string]int64{}
	countB := map[string]int64{}
	var ag Agreement
	for id, la := range a {
		lb, ok := b[id]
		if !ok || la == "" || lb == "" {
			continue
		}
		ag.Items++
		if la == lb {
			ag.Agreed++
		}
		countA[la]++
		countB[lb]++
	}
	if ag.Items == 0 {
		return ag
	}
	n := int64(ag.Items)
	ag.Percent = 100 * float64(ag.Agreed) / float64(n)
	// Multiplied through by n²: po·n² = Agreed·n, pe·n² = Σ countA·countB.
	var chance int64
	for l, ca := range countA {
		chance += ca * countB[l]
	}
	if chance == n*n {
		return ag
	}
	ag.Kappa = float64(int64(ag.Agreed)*n-chance) / float64(n*n-chance)
	ag.KappaDefined = true
	return ag
}
