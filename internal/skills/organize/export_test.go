package organize

// OtherLabel and IsGeneric let the external tests check labels by the
// rules the labeller follows.
const OtherLabel = otherLabel

var (
	IsGeneric = isGeneric
	IsWeak    = isWeak
)
