package text

// stopwordSet holds function words that say nothing about a paper's topic:
// the Snowball English list plus connectives common in abstracts. It is a
// read-only table.
var stopwordSet = map[string]struct{}{
	"a": {}, "about": {}, "above": {}, "after": {}, "again": {}, "against": {}, "al": {}, "all": {},
	"also": {}, "although": {}, "am": {}, "among": {}, "amongst": {}, "an": {}, "and": {}, "any": {},
	"are": {}, "as": {}, "at": {}, "be": {}, "because": {}, "been": {}, "before": {}, "being": {},
	"below": {}, "between": {}, "both": {}, "but": {}, "by": {}, "can": {}, "could": {}, "did": {},
	"do": {}, "does": {}, "doing": {}, "don": {}, "down": {}, "during": {}, "each": {}, "eg": {},
	"either": {}, "et": {}, "etc": {}, "few": {}, "for": {}, "from": {}, "further": {}, "had": {},
	"has": {}, "have": {}, "having": {}, "he": {}, "hence": {}, "her": {}, "here": {}, "hers": {},
	"herself": {}, "him": {}, "himself": {}, "his": {}, "how": {}, "however": {}, "i": {}, "ie": {},
	"if": {}, "in": {}, "into": {}, "is": {}, "it": {}, "its": {}, "itself": {}, "just": {},
	"may": {}, "me": {}, "might": {}, "more": {}, "most": {}, "must": {}, "my": {}, "myself": {},
	"neither": {}, "no": {}, "nor": {}, "not": {}, "now": {}, "of": {}, "off": {}, "on": {},
	"once": {}, "only": {}, "or": {}, "other": {}, "our": {}, "ours": {}, "ourselves": {}, "out": {},
	"over": {}, "own": {}, "per": {}, "same": {}, "shall": {}, "she": {}, "should": {}, "so": {},
	"some": {}, "such": {}, "than": {}, "that": {}, "the": {}, "their": {}, "theirs": {}, "them": {},
	"themselves": {}, "then": {}, "there": {}, "therefore": {}, "these": {}, "they": {}, "this": {},
	"those": {}, "though": {}, "through": {}, "thus": {}, "to": {}, "too": {}, "under": {},
	"until": {}, "up": {}, "upon": {}, "versus": {}, "very": {}, "via": {}, "vs": {}, "was": {},
	"we": {}, "were": {}, "what": {}, "when": {}, "where": {}, "whereas": {}, "wherein": {},
	"whether": {}, "which": {}, "while": {}, "who": {}, "whom": {}, "whose": {}, "why": {},
	"will": {}, "with": {}, "within": {}, "without": {}, "would": {}, "yet": {}, "you": {},
	"your": {}, "yours": {}, "yourself": {}, "yourselves": {},
}

// IsStopword reports whether the lower-case word w is too common to say
// anything about a paper's topic, so callers (query builders, labels) can
// skip the same words the tokenizer skips.
func IsStopword(w string) bool {
	_, ok := stopwordSet[w]
	return ok
}
