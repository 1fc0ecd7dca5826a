package querybuilder

// NewWithExclusionLift is New with another lift for learned exclusions,
// for the screening check that chooses it.
func NewWithExclusionLift(lift float64) *Builder {
	b := New()
	b.exclusionLift = lift
	return b
}
