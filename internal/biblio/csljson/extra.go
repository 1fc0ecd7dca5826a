package csljson

import (
	"bytes"
	"encoding/json"
	"html"
	"regexp"
	"sort"
	"strings"

	"quarry/internal/biblio"
)

// sharedKeys maps CSL variables onto the Extra keys every reader uses
// (BibTeX's field names), so a publisher read from CSL-JSON is written to
// BibTeX as publisher and back.
var sharedKeys = map[string]string{
	"publisher": biblio.ExtraPublisher, "publisher-place": biblio.ExtraAddress, "ISBN": biblio.ExtraISBN,
	"ISSN": biblio.ExtraISSN, "edition": biblio.ExtraEdition, "collection-title": biblio.ExtraSeries,
	"language": biblio.ExtraLanguage, "citation-key": "bibtex_key", "editor": biblio.ExtraEditor,
}

// cslKeys are further Extra keys the writer maps onto CSL variables
// (BibLaTeX's spelling of the place); sharedKeys inverted are the others.
var cslKeys = map[string]string{"location": "publisher-place"}

// readKeys are the variables the reader maps onto the record itself.
var readKeys = map[string]bool{
	"id": true, "type": true, "title": true, "author": true, "issued": true, "container-title": true,
	"volume": true, "issue": true, "page": true, "abstract": true, "DOI": true, "PMID": true,
	"URL": true, "keyword": true, "note": true,
}

// nameVars are CSL's name variables; dateVars its date variables.
var (
	nameVars = set("author", "chair", "collection-editor", "compiler", "composer", "container-author",
		"contributor", "curator", "director", "editor", "editorial-director", "executive-producer", "guest",
		"host", "illustrator", "interviewer", "narrator", "organizer", "original-author", "performer",
		"producer", "recipient", "reviewed-author", "script-writer", "series-creator", "translator")
	dateVars = set("accessed", "available-date", "event-date", "issued", "original-date", "submitted")
	// cslVars are the CSL 1.0.2 variables (and Zotero's two extensions)
	// the writer writes from Extra; other keys there (BibTeX's file,
	// howpublished, ...) have no place in CSL-JSON.
	cslVars = set("abstract", "annote", "archive", "archive_collection", "archive_location", "archive-place",
		"authority", "call-number", "chapter-number", "citation-key", "citation-label", "collection-number",
		"collection-title", "container-title-short", "dimensions", "division", "edition", "event",
		"event-title", "event-place", "genre", "ISBN", "ISSN", "jurisdiction", "language", "license",
		"medium", "number", "number-of-pages", "number-of-volumes", "original-publisher",
		"original-publisher-place", "original-title", "part-number", "part-title", "PMCID", "printing-number",
		"publisher", "publisher-place", "references", "reviewed-genre", "reviewed-title", "scale", "section",
		"source", "status", "supplement-number", "title-short", "version", "volume-title",
		"volume-title-short", "shortTitle", "journalAbbreviation")
)

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// readExtra keeps every variable of an item that the record has no field
// for: the shared ones under the shared keys (the editor as "Last, First
// and ..."), the rest under their names as the file wrote them.
func readExtra(all map[string]json.RawMessage, it item, number, badDate, publisherIsVenue bool) json.RawMessage {
	out := map[string]any{}
	for k, v := range all {
		if readKeys[k] && !(k == "issued" && badDate) || k == "number" && number || k == "publisher" && publisherIsVenue ||
			k == "genre" && it.Genre == "preprint" && readType(it) == biblio.Preprint { // what the writer writes
			// An issued date that gave no year is kept, so an export
			// writes it back as it was.
			continue
		}
		if k == "editor" {
			var names []name
			if json.Unmarshal(v, &names) == nil {
				split := make([]biblio.Name, len(names))
				for i, n := range names {
					split[i] = n.split()
				}
				out[biblio.ExtraEditor] = biblio.JoinEditors(split)
				continue
			}
		}
		if to, ok := sharedKeys[k]; ok {
			var s biblio.FlexString
			if json.Unmarshal(v, &s) == nil {
				out[to] = strings.TrimSpace(string(s))
				continue
			}
		}
		out[k] = v
	}
	if t := strings.TrimSpace(it.Type); t != "" && t != cslTypes[readType(it)] {
		// Only a type the writer would not give back (article-magazine,
		// webpage), so an export re-imported reads as unchanged.
		out["csl_type"] = t
	}
	if len(out) == 0 {
		return nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return b
}

// internalKeys are Extra keys that are not item variables: where the
// record came from and what Quarry's library keeps there for itself.
var internalKeys = set("bibtex_type", "csl_type", "type", "keywords", "mark", "note")

// extraVars is what the writer adds to an item from the record's Extra:
// shared keys under their CSL names, names given as text parsed into CSL
// names, dates given as text as raw dates, and every other key as it was,
// except that of a record read from BibTeX only CSL variables are written
// (its file, howpublished, ... have no place in CSL-JSON).
func extraVars(raw json.RawMessage, have map[string]bool) []byte {
	if len(raw) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	_, fromBibTeX := m["bibtex_type"]
	inv := map[string]string{}
	for k, v := range sharedKeys {
		inv[v] = k
	}
	for k, v := range cslKeys {
		inv[k] = v
	}
	vars := map[string]json.RawMessage{}
	mk := make([]string, 0, len(m))
	for k := range m {
		mk = append(mk, k)
	}
	sort.Strings(mk)
	for _, k := range mk {
		v, cv := m[k], k
		if c, ok := inv[k]; ok {
			cv = c
		} else if internalKeys[k] || fromBibTeX && !cslVars[k] && !nameVars[k] && !dateVars[k] {
			continue
		}
		if have[cv] || vars[cv] != nil {
			continue
		}
		var s string
		isText := json.Unmarshal(v, &s) == nil
		switch {
		case nameVars[cv] && isText:
			var names []name
			for _, n := range biblio.SplitEditors(s) {
				names = append(names, name{Family: n.Last, Given: n.First, Suffix: n.Suffix, Literal: n.Literal})
			}
			v, _ = json.Marshal(names)
		case dateVars[cv] && isText:
			v, _ = json.Marshal(date{Raw: s})
		}
		vars[cv] = v
	}
	if len(vars) == 0 {
		return nil
	}
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	for _, k := range keys {
		kb, _ := json.Marshal(k)
		b.WriteByte(',')
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vars[k])
	}
	return b.Bytes()
}

var (
	htmlTagRE = regexp.MustCompile(`(?i)<(/?)(i|b|em|strong|sup|sub|sc|span)(\s[^<>]*)?>`)
	scriptRE  = regexp.MustCompile(`(?i)<(sup|sub)>([^<>]*)</(sup|sub)>`)
)

// richText turns CSL's HTML-like markup in titles (<i>, <b>, <sup>,
// <sub>, <span class="nocase">) into plain text: sub- and superscripts
// become Unicode where it has them (H<sub>2</sub>O → H₂O), other tags
// vanish, and the entities they bring (&amp;) are unescaped.
func richText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	s = scriptRE.ReplaceAllStringFunc(s, func(m string) string {
		sm := scriptRE.FindStringSubmatch(m)
		if !strings.EqualFold(sm[1], sm[3]) {
			return m
		}
		conv := biblio.Subscript
		if strings.EqualFold(sm[1], "sup") {
			conv = biblio.Superscript
		}
		out, _ := conv(sm[2])
		return out
	})
	s = htmlTagRE.ReplaceAllString(s, "")
	if strings.Contains(s, "&") {
		s = html.UnescapeString(s)
	}
	return s
}
