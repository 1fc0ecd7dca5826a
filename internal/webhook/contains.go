package webhook

// Contains reports whether got holds want, as `expect.json` means it: a
// mapping holds another when it has each of its keys with a value holding
// that key's value; a list holds another when each wanted element is held
// by some element (order and extra elements do not matter); numbers are
// equal by value (YAML's 3 and JSON's 3.0); other values by equality.
func Contains(got, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !Contains(gv, wv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok {
			return false
		}
		for _, wv := range w {
			found := false
			for _, gv := range g {
				if Contains(gv, wv) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	if wn, ok := number(want); ok {
		gn, ok := number(got)
		return ok && gn == wn
	}
	return got == want
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint64:
		return float64(n), true
	}
	return 0, false
}
