package biblio

import "regexp"

// bceRE matches a date before the common era: "44 BC", "500 B.C.E.",
// "BCE 12", or a negative (astronomical) year such as "-0043" or "-43/03/15".
var bceRE = regexp.MustCompile(`(?i)(\b(b\.?\s?c\.?(\s?e\.?)?)(\s|$|[^a-z])|^\s*-\s*\d)`)

// BeforeCommonEra tells whether a date field names a year before the common
// era, which Quarry's years (0-3000) cannot hold: readers import such a
// record without a year and warn (NotAYear's message), instead of reading
// "-0044" as the year 44 or "4000 BC" as the year 4000.
func BeforeCommonEra(s string) bool { return bceRE.MatchString(s) }
