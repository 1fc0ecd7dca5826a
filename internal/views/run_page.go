package views

// exportFormats labels the export formats for people.
func exportFormats() []struct{ Value, Label string } {
	return []struct{ Value, Label string }{{"bibtex", "BibTeX"}, {"ris", "RIS"}, {"csljson", "CSL-JSON"}, {"csv", "CSV"}}
}

// exportURL is the address of a run's export in format, of set ("" for
// the default set).
func exportURL(runID, set, format string) string {
	u := "/api/runs/" + runID + "/export?format=" + format
	if set != "" {
		u = "/api/runs/" + runID + "/export?set=" + set + "&format=" + format
	}
	return u
}
